"""The load cases: which server, which tool, how it is checked and labelled.

mcpkit's servers run with mcpkit's own defaults; the bare SDK runs with its default
(``json_response=False``) and with ``json_response=True``, and mcpkit once more with the
other setting, so the framework's overhead can be read like for like in both modes.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CASES", "MCPKIT_JSON_DEFAULT", "Case", "ServerSpec", "like_for_like", "server_specs"]


def _mcpkit_json_default() -> bool:
    from mcpkit import Server

    return bool(inspect.signature(Server.http_app).parameters["json_response"].default)


#: Whether ``mcpkit.Server.http_app()`` answers with plain JSON by default (read from its signature).
MCPKIT_JSON_DEFAULT = _mcpkit_json_default()


@dataclass(frozen=True)
class ServerSpec:
    """One server process: a ``bench.serve`` kind and its options (filled in per run)."""

    name: str
    kind: str
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Case:
    """One measured load: ``tool`` on the server ``server``."""

    name: str
    server: str
    tool: str
    label: str
    requires_token: bool = True  # False: a request without a token is served anonymously


def _mode(json_response: bool) -> str:
    return f"json_response={json_response}"


CASES: tuple[Case, ...] = (
    Case("floor", "floor", "increment", "floor: Starlette + json, no MCP library"),
    Case("sdk", "sdk", "increment", "bare SDK: MCPServer + TokenVerifier + dict (json_response=False, default)"),
    Case("sdk-json", "sdk-json", "increment", "bare SDK, json_response=True"),
    Case("fastmcp", "fastmcp", "increment", "FastMCP 4.2.3: UserSession state"),
    Case(
        "mcpkit-memory", "mcpkit-memory", "increment", f"mcpkit, memory store ({_mode(MCPKIT_JSON_DEFAULT)}, default)"
    ),
    Case(
        "mcpkit-memory-alt", "mcpkit-memory-alt", "increment", f"mcpkit, memory store, {_mode(not MCPKIT_JSON_DEFAULT)}"
    ),
    Case("mcpkit-sqlite", "mcpkit-sqlite", "increment", "mcpkit, SQLite store"),
    Case("mcpkit-redis", "mcpkit-redis", "increment", "mcpkit, Redis store"),
    Case("helpdesk-draft", "helpdesk", "draft_reply", "help desk: draft_reply (user get)", False),
    Case("helpdesk-signature", "helpdesk", "set_signature", "help desk: set_signature (user set)", False),
)


def like_for_like() -> dict[str, str]:
    """mcpkit memory case -> the bare-SDK case with the same json_response setting."""
    same = "sdk-json" if MCPKIT_JSON_DEFAULT else "sdk"
    other = "sdk" if MCPKIT_JSON_DEFAULT else "sdk-json"
    return {"mcpkit-memory": same, "mcpkit-memory-alt": other}


def server_specs(tmp: str, redis_url: str, redis_prefix: str) -> dict[str, ServerSpec]:
    specs = [
        ServerSpec("floor", "floor"),
        ServerSpec("sdk", "sdk"),
        ServerSpec("sdk-json", "sdk", {"json_response": True}),
        ServerSpec("fastmcp", "fastmcp"),
        ServerSpec("mcpkit-memory", "mcpkit", {"store": "memory"}),
        ServerSpec("mcpkit-memory-alt", "mcpkit", {"store": "memory", "json_response": not MCPKIT_JSON_DEFAULT}),
        ServerSpec("mcpkit-jwt", "mcpkit", {"store": "memory", "auth": "jwt"}),
        ServerSpec("mcpkit-oauth", "mcpkit", {"store": "memory", "auth": "oauth"}),
        ServerSpec("mcpkit-oauth-partial", "mcpkit", {"store": "memory", "auth": "oauth-partial"}),
        ServerSpec("mcpkit-sqlite", "mcpkit", {"store": "sqlite", "path": f"{tmp}/bench.db"}),
        ServerSpec("mcpkit-redis", "mcpkit", {"store": "redis", "url": redis_url, "prefix": redis_prefix}),
        ServerSpec("helpdesk", "helpdesk", {"store_url": "memory"}),
    ]
    return {spec.name: spec for spec in specs}
