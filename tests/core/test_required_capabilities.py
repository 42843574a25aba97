"""Tools that need a client capability (issue 12): ``@tool(requires=["sampling"])`` is refused with -32021 (HTTP 400 on
2026-07-28) for a client that did not declare it, before the tool runs, in both eras; a client that declared it is
served; an unknown capability is refused when the server is built."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import mcp_types as types
import pytest
from _support import NOUR_KEY, URL, body_of, post_modern
from _support import running as serving
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from mcpkit import ConfigurationError, Server, StaticKeys, ToolContext, app, tool

RAN: list[str] = []


@tool(name="summarise_thread", description="Summarise a thread with the client's model.", requires=["sampling"])
class SummariseThread(ToolContext):
    async def execute(self) -> str:
        RAN.append("summarise_thread")
        return "summarised"


@app(id="caps", tools=[SummariseThread])
class CapsApp: ...


async def sample(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="ok"), model="m")


@contextlib.asynccontextmanager
async def client(asgi: Any, mode: str, **options: Any) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=asgi), headers={"Authorization": f"Bearer {NOUR_KEY}"})
    async with http, Client(streamable_http_client(URL, http_client=http), mode=mode, **options) as connected:
        yield connected


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_a_client_without_the_capability_gets_minus_32021_and_the_tool_never_runs(mode: str) -> None:
    RAN.clear()
    asgi = Server([CapsApp], auth=StaticKeys({"nour": NOUR_KEY})).http_app()
    async with asgi.router.lifespan_context(asgi):
        async with client(asgi, mode) as plain:
            with pytest.raises(MCPError) as refused:
                await plain.call_tool("summarise_thread", {})
        assert refused.value.error.code == -32021
        assert refused.value.error.message == (
            "Calling 'summarise_thread' needs the client capabilities sampling, which this client did not declare."
        )
        assert refused.value.error.data == {"requiredCapabilities": {"sampling": {}}}
        assert RAN == []
        async with client(asgi, mode, sampling_callback=sample) as declaring:
            result = await declaring.call_tool("summarise_thread", {})
        assert result.content == [types.TextContent(type="text", text="summarised")]
        assert RAN == ["summarise_thread"]


async def test_on_2026_07_28_it_is_http_400() -> None:
    async with serving(Server([CapsApp], auth=StaticKeys({"nour": NOUR_KEY})).http_app()) as http:
        response = await post_modern(
            http, "tools/call", {"name": "summarise_thread", "arguments": {}}, token=NOUR_KEY, name="summarise_thread"
        )
    assert response.status_code == 400
    assert body_of(response)["error"]["code"] == -32021


@pytest.mark.parametrize("requires", [["telepathy"], "sampling"])
def test_an_unknown_capability_is_refused_when_the_server_is_built(requires: Any) -> None:
    @tool(name="odd", description="Needs something odd.", requires=requires)
    class Odd(ToolContext):
        async def execute(self) -> str:
            return ""

    @app(id="odd", tools=[Odd])
    class OddApp: ...

    with pytest.raises(ConfigurationError, match="requires"):
        Server([OddApp], auth=StaticKeys({"nour": NOUR_KEY}))
