"""Calling ``fleet.py`` server processes over real HTTP: the official ``mcp`` client, a bearer key, either era.

When the server goes away under it, the ``mcp`` client cancels the call it was making and its
``async with`` raises the transport error (an ``ExceptionGroup``); callers that expect that catch
``Exception`` around the whole connection.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import mcp_types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcpkit.testing import error_code
from reliability.fleet import KEYS, PREFIX_VARIABLE
from reliability.processes import ServerProcess

__all__ = [
    "CALL_SECONDS",
    "ERAS",
    "FLEET",
    "SECRET",
    "Tally",
    "call",
    "connected",
    "fleet_env",
    "log_tracebacks",
    "one_call",
    "text_of",
]

#: ``mcpkit run`` target of the fleet server.
FLEET = f"{Path(__file__).with_name('fleet.py')}:server"

#: The ``mcp`` client's modes: the newest protocol, and 2025-11-25's initialize handshake.
ERAS = ("2026-07-28", "legacy")

#: The REMEMBER_SECRET every instance of a test shares.
SECRET = "fleet-test-secret-0123456789abcdef"

#: One call's upper bound: a hang fails the test instead of stalling the suite.
CALL_SECONDS = 15.0


def fleet_env(store: str, *, redis_prefix: str | None = None) -> dict[str, str]:
    """The environment of a fleet server on ``store`` (a REMEMBER_STORE URL) with the shared secret."""
    env = {"REMEMBER_STORE": store, "REMEMBER_SECRET": SECRET}
    if redis_prefix is not None:
        env[PREFIX_VARIABLE] = redis_prefix
    return env


@asynccontextmanager
async def connected(url: str, user: str, era: str) -> AsyncIterator[Client]:
    """One caller's MCP connection, as ``user`` (a label of ``fleet.KEYS``), in ``era``."""
    headers = {"Authorization": f"Bearer {KEYS[user]}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=CALL_SECONDS) as http,
        Client(streamable_http_client(url, http_client=http), mode=era) as client,
    ):
        yield client


async def call(client: Client, name: str, arguments: Mapping[str, Any] | None = None) -> mcp_types.CallToolResult:
    """The raw result of one tool call, bounded by ``CALL_SECONDS``."""
    async with asyncio.timeout(CALL_SECONDS):
        return await client.call_tool(name, dict(arguments or {}))


async def one_call(
    url: str, user: str, era: str, name: str, arguments: Mapping[str, Any] | None = None
) -> mcp_types.CallToolResult:
    """Connect, make one call, disconnect."""
    async with connected(url, user, era) as client:
        return await call(client, name, arguments)


@dataclass
class Tally:
    """Calls made and what came back: structured results, error codes, internal errors."""

    calls: int = 0
    internal_errors: int = 0
    codes: dict[str, int] = field(default_factory=dict)

    def take(self, result: mcp_types.CallToolResult) -> dict[str, Any]:
        """Count ``result``; return its structured content, or fail naming its error code and text."""
        self.calls += 1
        if result.is_error:
            code = error_code(result) or "NO_CODE"
            self.codes[code] = self.codes.get(code, 0) + 1
            if code == "INTERNAL_ERROR":
                self.internal_errors += 1
            raise AssertionError(f"error result {code}: {text_of(result)}")
        assert result.structured_content is not None, text_of(result)
        return dict(result.structured_content)

    def code_of(self, result: mcp_types.CallToolResult) -> str | None:
        """Count ``result`` and return its error code (None for a success)."""
        self.calls += 1
        if not result.is_error:
            return None
        code = error_code(result) or "NO_CODE"
        self.codes[code] = self.codes.get(code, 0) + 1
        if code == "INTERNAL_ERROR":
            self.internal_errors += 1
        return code


def text_of(result: mcp_types.CallToolResult) -> str:
    """The text blocks of a result, joined."""
    return "".join(block.text for block in result.content if isinstance(block, mcp_types.TextContent))


def log_tracebacks(*servers: ServerProcess) -> int:
    """How many tracebacks the servers' logs hold (an unexpected exception logs one)."""
    return sum(server.log().count("Traceback (most recent call last)") for server in servers)
