"""Helpers for the core tests: keys, raw MCP requests in both eras, and official clients over ASGI."""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from starlette.types import ASGIApp

from mcpkit import ToolContext, app, tool

NOUR_KEY = "nour-key-0123456789abcdef"
SAM_KEY = "sam-key-fedcba9876543210"
JWT_SECRET = "jwt-secret-for-tests-0123456789abcdef"

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
URL = "http://127.0.0.1:8000/mcp"
ACCEPT = {"Accept": "application/json, text/event-stream"}


def static_user_id(key: str) -> str:
    """What the issue says a static key's caller is: ``static:`` + 32 hex chars of SHA-256(key)."""
    return "static:" + hashlib.sha256(key.encode()).hexdigest()[:32]


def bearer(token: str | None) -> dict[str, str]:
    return {} if token is None else {"Authorization": f"Bearer {token}"}


@tool(name="whoami", description="Tell the caller who the server thinks they are.")
class WhoAmI(ToolContext):
    async def execute(self) -> dict[str, Any]:
        caller = self.caller
        return {
            "user_id": caller.user_id,
            "kind": caller.kind,
            "label": caller.label,
            "claims": dict(caller.claims),
            "session_id": caller.session_id,
            "protocol_version": caller.protocol_version,
            "anonymous_id": caller.anonymous_id,
        }


@app(id="identity", tools=[WhoAmI])
class IdentityApp:
    """An app with just ``whoami``."""


@contextlib.asynccontextmanager
async def running(asgi: Any) -> AsyncIterator[httpx2.AsyncClient]:
    """Run ``asgi``'s lifespan and yield a raw HTTP client for it (no default headers)."""
    async with (
        asgi.router.lifespan_context(asgi),
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app=asgi), base_url="http://127.0.0.1:8000") as http,
    ):
        yield http


def body_of(response: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC message in a response, whether it came as JSON or as one SSE event."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:"):
                return dict(json.loads(line[len("data:") :]))
        raise AssertionError(f"no data line in SSE response: {response.text!r}")
    return dict(response.json())


async def post_modern(
    http: httpx2.AsyncClient,
    method: str,
    params: Mapping[str, Any] | None = None,
    *,
    token: str | None = None,
    name: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> httpx2.Response:
    """One 2026-07-28 request: the ``_meta`` envelope plus the MCP-Protocol-Version/Mcp-Method/Mcp-Name headers."""
    envelope = {
        types.PROTOCOL_VERSION_META_KEY: MODERN,
        types.CLIENT_CAPABILITIES_META_KEY: {},
    }
    sent = {**(params or {}), "_meta": {**envelope, **(params or {}).get("_meta", {})}}
    request_headers = {**ACCEPT, "MCP-Protocol-Version": MODERN, "Mcp-Method": method, **bearer(token)}
    if name is not None:
        request_headers["Mcp-Name"] = name
    request_headers.update(headers or {})
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": sent}
    return await http.post("/mcp", json=message, headers=request_headers)


async def call_modern(
    http: httpx2.AsyncClient, tool_name: str, arguments: Mapping[str, Any] | None = None, *, token: str | None = None
) -> httpx2.Response:
    params = {"name": tool_name, "arguments": dict(arguments or {})}
    return await post_modern(http, "tools/call", params, token=token, name=tool_name)


async def open_legacy_session(http: httpx2.AsyncClient, *, token: str | None = None) -> str:
    """Run the 2025-11-25 handshake and return the ``Mcp-Session-Id`` the server minted."""
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "tests", "version": "1"}},
    }
    response = await http.post("/mcp", json=init, headers={**ACCEPT, **bearer(token)})
    assert response.status_code == 200, response.text
    session_id = response.headers["mcp-session-id"]
    done = await http.post(
        "/mcp",
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers={**ACCEPT, **bearer(token), "Mcp-Session-Id": session_id, "MCP-Protocol-Version": LEGACY},
    )
    assert done.status_code == 202, done.text
    return session_id


async def call_legacy(
    http: httpx2.AsyncClient,
    session_id: str,
    tool_name: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    token: str | None = None,
) -> httpx2.Response:
    message = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": tool_name, "arguments": dict(arguments or {})},
    }
    headers = {**ACCEPT, **bearer(token), "Mcp-Session-Id": session_id, "MCP-Protocol-Version": LEGACY}
    return await http.post("/mcp", json=message, headers=headers)


def structured(response: httpx2.Response) -> dict[str, Any]:
    """The ``structuredContent`` of a successful tools/call response."""
    assert response.status_code == 200, response.text
    result = body_of(response)["result"]
    assert not result.get("isError"), result
    return dict(result["structuredContent"])


@contextlib.asynccontextmanager
async def official_client(asgi: ASGIApp, protocol: str, token: str | None = None) -> AsyncIterator[Client]:
    """The official ``mcp`` client talking to an already running ASGI app, in one protocol era."""
    mode = MODERN if protocol == MODERN else "legacy"
    http = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=asgi), headers=bearer(token), timeout=30)
    async with http, Client(streamable_http_client(URL, http_client=http), mode=mode) as client:
        yield client


def text_of(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))
