"""Lazy SSE on 2025-11-25 (issue 27): the default server answers a session's request with plain JSON until the call
sends something besides its result — progress, a log message, a question — and then with an SSE stream carrying
it, the result last. A client that takes only JSON keeps JSON, hears nothing, and is never promised a question."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import mcp_types as types
import pytest
import uvicorn
from _support import LEGACY, NOUR_KEY, bearer, running
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from pydantic import BaseModel

import mcpkit.http._lazy_sse as lazy_sse
from mcpkit import Server, StaticKeys, ToolContext, app, tool
from mcpkit.http._serving import listening_socket, url_of

JSON_ONLY = {"Accept": "application/json"}
BOTH = {"Accept": "application/json, text/event-stream"}
released = asyncio.Event()  # what the silent tool waits for; set by the test that watches it


class Reply(BaseModel):
    send: bool


@tool(name="plain", description="Answers at once, sending nothing else.")
class Plain(ToolContext):
    async def execute(self) -> str:
        return "plain answer"


@tool(name="export", description="Reports progress and logs while it works.")
class Export(ToolContext):
    async def execute(self, count: int = 2) -> str:
        for done in range(count):
            await self.progress(done + 1, count)
            await self.log.info(f"exported {done + 1}")
        return f"exported {count}"


@tool(name="confirm", description="Asks the user before it answers.")
class Confirm(ToolContext):
    async def execute(self) -> dict[str, Any]:
        can = self.client_can("elicitation")
        answer = await self.elicit("Send the reply?", Reply)
        return {"could_ask": can, "action": answer.action, "send": answer.content.send if answer.content else None}


@tool(name="can_ask", description="Says whether this call could ask the user.")
class CanAsk(ToolContext):
    async def execute(self) -> bool:
        return self.client_can("elicitation")


@tool(name="silent", description="Works silently until released.")
class Silent(ToolContext):
    async def execute(self) -> str:
        await released.wait()
        return "done after a while"


@tool(name="poll_me", description="Closes its stream before sending anything, then answers.")
class PollMe(ToolContext):
    async def execute(self) -> dict[str, bool]:
        closed = await self.close_stream()
        await asyncio.sleep(0.05)  # the answer comes while the client is away
        return {"closed": closed}


@app(id="lazy", tools=[Plain, Export, Confirm, CanAsk, Silent, PollMe])
class LazyApp: ...


def make_server() -> Server:
    return Server([LazyApp], auth=StaticKeys({"nour": NOUR_KEY}))


async def open_session(http: httpx2.AsyncClient, accept: dict[str, str], capabilities: dict[str, Any]) -> str:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": capabilities,
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    opened = await http.post("/mcp", json=init, headers={**accept, **bearer(NOUR_KEY)})
    assert opened.status_code == 200, opened.text
    assert opened.headers["content-type"].startswith("application/json")  # the handshake sends nothing else
    session = opened.headers["mcp-session-id"]
    done = await http.post(
        "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers(session, accept)
    )
    assert done.status_code == 202, done.text
    return session


def headers(session: str, accept: dict[str, str]) -> dict[str, str]:
    return {**accept, **bearer(NOUR_KEY), "Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY}


def call(name: str, arguments: dict[str, Any] | None = None, *, token: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params}


def events(response: httpx2.Response) -> list[dict[str, Any]]:
    return [json.loads(line[len("data:") :]) for line in response.text.splitlines() if line.startswith("data:")]


async def test_a_call_that_sends_nothing_else_is_answered_with_plain_json() -> None:
    async with running(make_server().http_app()) as http:
        session = await open_session(http, BOTH, {})
        answered = await http.post("/mcp", json=call("plain", token="p"), headers=headers(session, BOTH))
    assert answered.headers["content-type"] == "application/json"
    assert answered.json()["result"]["content"] == [{"type": "text", "text": "plain answer"}]


async def test_a_call_that_reports_progress_becomes_a_stream_that_ends_with_its_result() -> None:
    async with running(make_server().http_app()) as http:
        session = await open_session(http, BOTH, {})
        answered = await http.post("/mcp", json=call("export", token="p-1"), headers=headers(session, BOTH))
    assert answered.headers["content-type"].startswith("text/event-stream")
    sent = events(answered)
    assert [message.get("method") for message in sent] == [
        "notifications/progress",
        "notifications/message",
        "notifications/progress",
        "notifications/message",
        None,  # the response, last
    ]
    assert [message["params"]["progress"] for message in sent if message.get("method") == "notifications/progress"] == [
        1,
        2,
    ]
    assert sent[-1] == {"jsonrpc": "2.0", "id": 5, "result": sent[-1]["result"]}
    assert sent[-1]["result"]["content"] == [{"type": "text", "text": "exported 2"}]


async def test_a_client_that_takes_only_json_gets_its_result_and_no_notifications() -> None:
    async with running(make_server().http_app()) as http:
        session = await open_session(http, JSON_ONLY, {"elicitation": {}})
        exported = await http.post("/mcp", json=call("export", token="p-1"), headers=headers(session, JSON_ONLY))
        can = await http.post("/mcp", json=call("can_ask"), headers=headers(session, JSON_ONLY))
        asked = await http.post("/mcp", json=call("confirm"), headers=headers(session, JSON_ONLY))
    assert exported.headers["content-type"] == "application/json"
    assert exported.json()["result"]["content"] == [{"type": "text", "text": "exported 2"}]
    assert can.json()["result"]["structuredContent"] == {"result": False}  # never promised what it cannot carry
    refused = asked.json()["result"]
    assert refused["isError"] is True
    assert refused["_meta"]["mcpkit/error"]["code"] == "INPUT_UNAVAILABLE"
    assert "does not accept an event stream" in refused["_meta"]["mcpkit/error"]["message"]
    assert "Accept: application/json, text/event-stream" in refused["_meta"]["mcpkit/error"]["message"]


async def test_a_client_that_takes_neither_json_nor_a_stream_is_told_what_to_accept() -> None:
    async with running(make_server().http_app()) as http:
        session = await open_session(http, BOTH, {})
        refused = await http.post("/mcp", json=call("plain"), headers=headers(session, {"Accept": "text/html"}))
    assert refused.status_code == 406
    assert "application/json" in refused.text


class _Uvicorn(uvicorn.Server):
    """uvicorn's server, saying when it accepts connections."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = asyncio.Event()

    async def startup(self, sockets: list[Any] | None = None) -> None:
        await super().startup(sockets=sockets)
        self.ready.set()


@contextlib.asynccontextmanager
async def serving_for_real(server: Server, **options: Any) -> AsyncIterator[str]:
    """The server's HTTP app under uvicorn on a free loopback port, in this event loop; yields its MCP URL."""
    sock = listening_socket("127.0.0.1", 0)
    real = _Uvicorn(uvicorn.Config(server.http_app(**options), log_level="warning", lifespan="on"))
    task = asyncio.create_task(real.serve(sockets=[sock]))
    try:
        await asyncio.wait_for(real.ready.wait(), timeout=20)
        yield url_of(sock)
    finally:
        real.should_exit = True
        await task
        sock.close()


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # the client's, for 2025-11-25
async def test_the_official_client_in_legacy_mode_is_asked_on_the_default_server() -> None:
    asked: list[str] = []

    async def elicitation(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"send": True})

    async with (  # a real server: a question rides a stream the client reads while the call goes on
        serving_for_real(make_server()) as url,
        httpx2.AsyncClient(headers=bearer(NOUR_KEY), timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy", elicitation_callback=elicitation) as c,
    ):
        result = await c.call_tool("confirm", {})
        plain = await c.call_tool("plain", {})
    assert asked == ["Send the reply?"]
    assert result.structured_content == {"could_ask": True, "action": "accept", "send": True}
    assert plain.content == [types.TextContent(type="text", text="plain answer")]


async def test_a_silent_call_becomes_a_stream_so_keep_alives_can_hold_the_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(lazy_sse, "SILENT_SECONDS", 0.05)
    released.clear()
    async with (
        serving_for_real(make_server()) as url,
        httpx2.AsyncClient(base_url=url.removesuffix("/mcp"), timeout=30) as http,
    ):
        session = await open_session(http, BOTH, {})
        async with http.stream("POST", url, json=call("silent"), headers=headers(session, BOTH)) as answered:
            assert answered.headers["content-type"].startswith("text/event-stream")  # before the tool finished
            released.set()
            text = (await answered.aread()).decode()
    assert [
        json.loads(line[5:])["result"]["content"][0]["text"] for line in text.splitlines() if line[:5] == "data:"
    ] == ["done after a while"]


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # the client's, for 2025-11-25
async def test_with_resumable_streams_a_call_that_closes_its_stream_first_is_finished_on_reconnect() -> None:
    async with (
        serving_for_real(make_server(), resumable_streams=True, stream_retry_ms=10) as url,
        httpx2.AsyncClient(base_url=url.removesuffix("/mcp"), timeout=30) as http,
    ):
        session = await open_session(http, BOTH, {})
        first = await http.post(url, json=call("poll_me"), headers=headers(session, BOTH))
        assert first.headers["content-type"].startswith("text/event-stream")
        priming = [line for line in first.text.splitlines() if line.strip()]
        event_id = next(line[len("id:") :].strip() for line in priming if line.startswith("id:"))
        assert "retry: 10" in priming  # a priming event with the retry interval...
        assert not [line for line in priming if line.startswith("data: {")]  # ...and no message: none was sent
        async with http.stream(
            "GET", url, headers={**headers(session, {"Accept": "text/event-stream"}), "Last-Event-ID": event_id}
        ) as resumed:
            async for line in resumed.aiter_lines():
                if line.startswith("data: {"):
                    assert json.loads(line[len("data:") :])["result"]["structuredContent"] == {"closed": True}
                    break
            else:
                pytest.fail("the resumed stream ended without the call's result")
        async with (
            httpx2.AsyncClient(headers=bearer(NOUR_KEY), timeout=30) as client_http,
            Client(streamable_http_client(url, http_client=client_http), mode="legacy") as c,
        ):
            result = await c.call_tool("poll_me", {})  # the official client reconnects by itself
    assert result.structured_content == {"closed": True}
