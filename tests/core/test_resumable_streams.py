"""Resumable SSE streams (issue 12, SEP-1699): on 2025-11-25 a call whose stream the server closes midway is
finished on the client's reconnect with ``Last-Event-ID`` — by the official client, transparently — and an event id
of one session replays nothing to another, against a real ``mcpkit run --sse`` server."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from resumable_server import KEYS

from mcpkit import ConfigurationError, Server, StaticKeys, app
from mcpkit.http._event_log import EventLog, SessionEvents
from reliability.processes import serving

HERE = Path(__file__).resolve().parent
LEGACY = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    target = f"{HERE / 'resumable_server.py'}:server"
    with serving(target, cwd=tmp_path_factory.mktemp("resumable"), args=["--sse"]) as server:
        yield server.url


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # the client's, for 2025-11-25
async def test_the_official_client_finishes_a_call_whose_stream_the_server_closed(url: str) -> None:
    heard: list[str] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        heard.append(str(message))

    headers = {"Authorization": f"Bearer {KEYS['nour']}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
    ):
        result = await client.call_tool("long_report", {"secret": "Q3"}, progress_callback=progress)

    assert result.structured_content == {"report": "done for Q3", "stream_closed": True}
    assert heard == ["started", "halfway"]  # the one after the gap came on the resumed stream


async def test_an_event_id_of_one_session_replays_nothing_to_another(url: str) -> None:
    async with httpx2.AsyncClient(timeout=30) as http:
        nours, nour_headers = await session(http, url, "nour")
        sams, sam_headers = await session(http, url, "sam")
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "long_report", "arguments": {"secret": "nour-only"}},
        }
        first = await events(http, "POST", url, {**nour_headers, "Content-Type": "application/json"}, call)
        last = first[-1]["id"]
        assert not any("result" in event.get("data", {}) for event in first)  # closed before the result
        await asyncio.sleep(0.6)  # the result is sent meanwhile, to the log
        stolen = await events(http, "GET", url, {**sam_headers, "Last-Event-ID": last}, None)
        resumed = await events(http, "GET", url, {**nour_headers, "Last-Event-ID": last}, None)

    assert nours != sams
    assert first[0]["data"] == ""
    assert first[0]["retry"] == 1000
    assert "nour-only" not in json.dumps(stolen)
    results = [event["data"] for event in resumed if isinstance(event.get("data"), dict) and "result" in event["data"]]
    assert results[0]["result"]["structuredContent"]["report"] == "done for nour-only"


def test_the_log_forgets_oldest_first_and_by_age() -> None:
    log = EventLog(max_events=3, max_age=300.0)
    ids = [log.add("s", "1", {"n": number}) for number in range(5)]
    aging = EventLog(max_age=0.05)
    old = aging.add("s", "1", {"n": 0})
    time.sleep(0.1)  # past max_age: the next event's arrival forgets it
    aging.add("s", "1", {"n": 1})

    assert list(log._events) == ids[2:]  # the oldest two went
    assert len(set(ids)) == 5
    assert all(len(event_id) >= 16 for event_id in ids)
    assert old not in aging._events
    assert len(aging) == 1


def test_the_log_keeps_a_byte_budget_and_one_session_cannot_push_out_another() -> None:
    log = EventLog(max_bytes=10_000, session_bytes=3_000)
    quiet = log.add("quiet", "1", {"text": "x" * 500})
    for number in range(20):
        log.add("loud", str(number), {"text": "y" * 1_000})  # about 1 KB each: the loud session keeps ~3 of them

    assert quiet in log._events  # the quiet session's event is still there
    assert sum(event.size for event in log._events.values() if event.session == "loud") <= 3_000
    assert log._bytes == sum(event.size for event in log._events.values())


async def test_a_replay_sends_only_that_sessions_stream_after_the_event() -> None:
    log = EventLog()
    mine, theirs = SessionEvents(log, "a"), SessionEvents(log, "b")
    start = await mine.store_event("1", None)
    await theirs.store_event("1", {"theirs": True})  # the same request id in another session
    await mine.store_event("2", {"other stream": True})
    await mine.store_event("1", {"mine": True})
    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message.message)

    assert await mine.replay_events_after(start, send) == "1"
    assert sent == [{"mine": True}]
    assert await theirs.replay_events_after(start, send) is None  # an id of session a means nothing to b
    assert await mine.replay_events_after("made-up", send) is None


def test_resumable_streams_options_are_checked() -> None:
    @app(id="empty")
    class Empty: ...

    server = Server([Empty], auth=StaticKeys(KEYS))
    with pytest.raises(ConfigurationError, match="resumable_streams is True, False or None"):
        server.http_app(resumable_streams="yes")  # type: ignore[arg-type]
    with pytest.raises(
        ConfigurationError, match="stream_retry_ms is a whole number of milliseconds from 1 to 600,000; not 0"
    ):
        server.http_app(json_response=False, stream_retry_ms=0)


async def session(http: httpx2.AsyncClient, url: str, who: str) -> tuple[str, dict[str, str]]:
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    headers = {**LEGACY, "Authorization": f"Bearer {KEYS[who]}", "Content-Type": "application/json"}
    response = await http.post(url, json=initialize, headers=headers)
    session_id = response.headers["mcp-session-id"]
    headers = {**LEGACY, "Authorization": f"Bearer {KEYS[who]}", "Mcp-Session-Id": session_id}
    await http.post(
        url,
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers={**headers, "Content-Type": "application/json"},
    )
    return session_id, headers


async def events(
    http: httpx2.AsyncClient, method: str, url: str, headers: dict[str, str], body: Any
) -> list[dict[str, Any]]:
    """The SSE events of one response, read until the server ends it (or 3 s pass)."""
    found: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    try:
        async with asyncio.timeout(3), http.stream(method, url, headers=headers, json=body) as response:
            async for line in response.aiter_lines():
                if not line:
                    if current:
                        found.append(current)
                    current = {}
                    continue
                field, _, value = line.partition(":")
                value = value.strip()
                if field == "data":
                    current["data"] = json.loads(value) if value else ""
                elif field == "retry":
                    current["retry"] = int(value)
                elif field in ("id", "event"):
                    current[field] = value
    except TimeoutError:
        pass
    return found
