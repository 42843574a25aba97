"""``CallerClient``: one caller's MCP connection to an in-process server, over real HTTP semantics."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from starlette.types import ASGIApp

from .._results import ERROR_META_KEY
from ._holder import Holder

__all__ = ["PROTOCOLS", "CallerClient", "ToolCallError", "error_code"]

#: The two protocol eras mcpkit serves, newest first.
PROTOCOLS = ("2026-07-28", "2025-11-25")

_URL = "http://127.0.0.1:8000/mcp"


class ToolCallError(Exception):
    """A tool call came back as an error result; ``code`` is mcpkit's error code."""

    def __init__(self, code: str | None, message: str, result: types.CallToolResult) -> None:
        super().__init__(f"[{code}] {message}")
        self.code = code
        self.message = message
        self.result = result


def error_code(result: types.CallToolResult) -> str | None:
    """The ``_meta["mcpkit/error"]["code"]`` of an error result, or None."""
    error = (result.meta or {}).get(ERROR_META_KEY)
    return error.get("code") if isinstance(error, dict) else None


class CallerClient:
    """Calls tools as one caller, through the real ASGI app with a real ``Authorization`` header.

    On 2025-11-25 the connection (and so the MCP session) lasts until the fixture
    ends; on 2026-07-28 every call is its own request, as with any client.
    """

    def __init__(self, app: ASGIApp, token: str | None, protocol: str, name: str) -> None:
        if protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {PROTOCOLS}, not {protocol!r}")
        self.name = name
        self.protocol = protocol
        self._app = app
        self._token = token
        self._holder: Holder[Client] | None = None
        self._client: Client | None = None
        self._lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"<CallerClient {self.name} on {self.protocol}>"

    @contextlib.asynccontextmanager
    async def _connect(self) -> AsyncIterator[Client]:
        headers = {"Authorization": f"Bearer {self._token}"} if self._token is not None else {}
        mode = "2026-07-28" if self.protocol == "2026-07-28" else "legacy"
        http = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=self._app), headers=headers, timeout=30)
        async with http, Client(streamable_http_client(_URL, http_client=http), mode=mode) as client:
            yield client

    async def _session(self) -> Client:
        async with self._lock:
            if self._client is None:
                self._holder = Holder(self._connect)
                self._client = await self._holder.open()
            return self._client

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> types.CallToolResult:
        """The raw MCP result of calling ``name``."""
        client = await self._session()
        return await client.call_tool(name, dict(arguments or {}))

    async def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> Any:
        """The tool's structured result (or its text); raises ``ToolCallError`` for an error result."""
        result = await self.call_tool(name, arguments)
        text = "".join(block.text for block in result.content if isinstance(block, types.TextContent))
        if result.is_error:
            raise ToolCallError(error_code(result), text, result)
        if result.structured_content is not None:
            return result.structured_content
        return text

    async def list_tools(self) -> list[types.Tool]:
        client = await self._session()
        return (await client.list_tools()).tools

    async def aclose(self) -> None:
        holder, self._holder, self._client = self._holder, None, None
        if holder is not None:
            await holder.close()
