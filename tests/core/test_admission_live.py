"""Admission and question deadlines against a real ``mcpkit run`` (issue 35): 2025-11-25 questions are live requests
on the call's own stream, which only a real HTTP server carries.

- A caller at ``calls_per_caller`` can still answer the questions its calls wait on (answers are never refused).
- A question nobody answers ends its call after ``question_timeout`` with ``INPUT_TIMEOUT``, freeing its slot.
- The issue's attacks, against a server capped at 64 connections: one agent holds hundreds of unanswered questions on
  one session, or keeps 64 reads queued behind its own; another agent, from another address, arriving on new
  connections meanwhile, is served every time (before: 0 of 10 against the questions).
"""

from __future__ import annotations

import asyncio
import collections
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from admission_server import KEYS
from listen_limits_server import KEYS as LISTEN_KEYS
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from reliability.processes import ServerProcess, serving

HERE = Path(__file__).resolve().parent
TARGET = f"{HERE / 'admission_server.py'}:server"
NOUR, SAM = KEYS["nour"], KEYS["sam"]
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
#: Held calls in the attack: far more than the 64 connections the server may hold.
HELD = 200


@pytest.fixture
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServerProcess]:
    args, question_timeout = request.param
    env = {"QUESTION_TIMEOUT": str(question_timeout)}
    with serving(TARGET, cwd=tmp_path, env=env, args=args) as started:
        yield started


async def open_session(http: httpx2.AsyncClient, url: str, key: str) -> dict[str, str]:
    """A 2025-11-25 session whose client declares elicitation; the headers its requests carry."""
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "tests", "version": "1"},
        },
    }
    opened = await http.post(url, json=init, headers={**HEADERS, "Authorization": f"Bearer {key}"})
    assert opened.status_code == 200, opened.text
    headers = {
        **HEADERS,
        "Authorization": f"Bearer {key}",
        "Mcp-Session-Id": opened.headers["mcp-session-id"],
        "MCP-Protocol-Version": "2025-11-25",
    }
    done = await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    assert done.status_code == 202
    return headers


def call(request_id: int, tool: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": tool, "arguments": {}}}


def events(lines: list[str]) -> list[dict[str, Any]]:
    return [json.loads(line[5:]) for line in lines if line.startswith("data:")]


@pytest.mark.parametrize("server", [(["--calls-per-caller", "1"], 20)], indirect=True)
async def test_a_caller_at_its_limit_can_still_answer_the_question_its_call_waits_on(server: ServerProcess) -> None:
    async def confirm(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"confirm": True})

    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {NOUR}"}, timeout=30) as http,
        Client(streamable_http_client(server.url, http_client=http), mode="legacy", elicitation_callback=confirm) as c,
    ):
        result = await c.call_tool("confirm_send", {})
    assert result.structured_content == {"sent": True}  # the answer came while the call held the only slot


@pytest.mark.parametrize("server", [(["--calls-per-caller", "1"], 1)], indirect=True)
async def test_an_unanswered_question_ends_its_call_after_question_timeout_and_frees_its_slot(
    server: ServerProcess,
) -> None:
    async with httpx2.AsyncClient(timeout=30) as http:
        headers = await open_session(http, server.url, NOUR)
        lines: list[str] = []
        async with http.stream("POST", server.url, json=call(1, "confirm_send"), headers=headers) as asking:
            async for line in asking.aiter_lines():
                lines.append(line)
                if "elicitation/create" in line:  # asked; never answered
                    meanwhile = await http.post(server.url, json=call(2, "quick"), headers=headers)
        after = await http.post(server.url, json=call(3, "quick"), headers=headers)

    question, *rest = events(lines)
    assert question["method"] == "elicitation/create"
    assert meanwhile.status_code == 429  # the unanswered call holds the caller's one slot...
    ended = next(event for event in rest if event.get("id") == 1)["result"]
    assert ended["isError"] is True
    assert ended["_meta"]["mcpkit/error"]["code"] == "INPUT_TIMEOUT"
    assert "no answer within 1 seconds (the server's question_timeout)" in ended["content"][0]["text"]
    assert any(event.get("method") == "notifications/cancelled" for event in rest)  # the client is told it is over
    assert after.status_code == 200, after.text  # ...until the question's deadline ends it


@pytest.mark.parametrize("server", [(["--max-connections", "64"], 120)], indirect=True)
async def test_one_agent_holding_hundreds_of_unanswered_questions_does_not_lock_another_out(
    server: ServerProcess,
) -> None:
    held: list[int] = []
    refusals: collections.Counter[str] = collections.Counter()
    let_go = asyncio.Event()
    limits = httpx2.Limits(max_connections=HELD + 10, max_keepalive_connections=HELD + 10)
    attacker = httpx2.AsyncClient(
        timeout=60, limits=limits, transport=httpx2.AsyncHTTPTransport(local_address="127.0.0.2", limits=limits)
    )
    other = httpx2.AsyncClient(timeout=10, transport=httpx2.AsyncHTTPTransport(local_address="127.0.0.3"))

    async def hold(headers: dict[str, str], request_id: int) -> None:
        try:
            async with attacker.stream("POST", server.url, json=call(request_id, "confirm_send"), headers=headers) as r:
                if r.status_code != 200:
                    refusals[str(r.status_code)] += 1
                    return
                async for line in r.aiter_lines():
                    if "elicitation/create" in line:
                        held.append(request_id)
                        await let_go.wait()  # never answered
                        return
        except httpx2.TransportError as exc:  # refused at the connection cap before a request was read
            refusals[type(exc).__name__] += 1

    async with attacker, other:
        headers = await open_session(attacker, server.url, NOUR)
        holding = [asyncio.create_task(hold(headers, n)) for n in range(10, 10 + HELD)]
        for _ in range(300):
            if len(held) + sum(refusals.values()) >= HELD:
                break
            await asyncio.sleep(0.05)
        answers = []
        for n in range(10):
            modern = {
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "tools/call",
                "Mcp-Name": "quick",
                "Authorization": f"Bearer {SAM}",
            }
            params = {
                "name": "quick",
                "arguments": {},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            }
            message = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}
            answers.append(await other.post(server.url, json=message, headers={**HEADERS, **modern}))
        let_go.set()
        await asyncio.gather(*holding)

    assert len(held) == 32  # calls_per_caller: the rest were refused at once
    assert sum(refusals.values()) == HELD - 32
    assert set(refusals) <= {"429", "ReadError", "RemoteProtocolError"}
    assert [answer.status_code for answer in answers] == [200] * 10
    assert all(answer.json()["result"]["structuredContent"] == {"caller": "sam"} for answer in answers)


def modern_call(tool: str, key: str, request_id: int) -> tuple[dict[str, Any], dict[str, str]]:
    params = {
        "name": tool,
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    }
    headers = {
        **HEADERS,
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": tool,
        "Authorization": f"Bearer {key}",
    }
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}, headers


@pytest.mark.parametrize("server", [(["--max-connections", "64"], 120)], indirect=True)
async def test_one_agent_keeping_64_reads_queued_does_not_lock_another_out(server: ServerProcess) -> None:
    limits = httpx2.Limits(max_connections=80, max_keepalive_connections=80)
    attacker = httpx2.AsyncClient(
        timeout=60, limits=limits, transport=httpx2.AsyncHTTPTransport(local_address="127.0.0.2", limits=limits)
    )
    fresh = httpx2.Limits(max_connections=1, max_keepalive_connections=0)  # Sam arrives on a new connection each time
    other = httpx2.AsyncClient(
        timeout=10, limits=fresh, transport=httpx2.AsyncHTTPTransport(local_address="127.0.0.3", limits=fresh)
    )
    statuses: collections.Counter[int] = collections.Counter()
    codes: set[str] = set()
    done = asyncio.Event()

    async def keep_reading(number: int) -> None:  # one of 64 reads in flight: sent again as soon as it ends
        while not done.is_set():
            message, headers = modern_call("queued_read", NOUR, number)
            try:
                response = await attacker.post(server.url, json=message, headers=headers)
            except httpx2.TransportError:
                statuses[0] += 1
                continue
            statuses[response.status_code] += 1
            if response.status_code == 429:
                codes.add(response.json()["error"]["data"]["code"])
                await asyncio.sleep(0.25)

    async with attacker, other:
        readers = [asyncio.create_task(keep_reading(n)) for n in range(64)]
        await asyncio.sleep(1)  # the reads are queued, one a quarter of a second
        answers = []
        for n in range(10):
            message, headers = modern_call("quick", SAM, n)
            try:
                answers.append((await other.post(server.url, json=message, headers=headers)).status_code)
            except httpx2.TransportError as exc:
                answers.append(type(exc).__name__)
        done.set()
        await asyncio.gather(*readers)

    assert answers == [200] * 10
    assert set(statuses) == {200, 429}  # the reads in turn, and the rest refused at once (calls_per_caller)...
    assert codes == {"TOO_MANY_CALLS"}  # ...saying which limit


async def test_listen_streams_are_not_counted_as_requests_in_progress(tmp_path: Path) -> None:
    target = f"{HERE / 'listen_limits_server.py'}:server"
    with serving(target, cwd=tmp_path, args=["--calls-per-caller", "1"]) as started:
        headers = {"Authorization": f"Bearer {LISTEN_KEYS['nour']}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            Client(streamable_http_client(started.url, http_client=http), mode="2026-07-28") as nour,
            nour.listen(resource_subscriptions=["notes://a"]),
            nour.listen(resource_subscriptions=["notes://b"]),  # two streams open, with one request allowed
        ):
            told = await nour.call_tool("touch_note", {"key": "a"})  # and a call beside them
    assert told.content == [types.TextContent(type="text", text="told")]


@pytest.mark.parametrize("server", [(["--calls-per-caller", "4"], 60)], indirect=True)
async def test_a_call_whose_stream_the_client_closes_still_holds_its_slot(server: ServerProcess) -> None:
    admitted = refused = 0
    async with httpx2.AsyncClient(timeout=30) as http:
        headers = await open_session(http, server.url, NOUR)
        for number in range(20):  # each call asks, and the client closes its stream instead of answering
            async with http.stream("POST", server.url, json=call(10 + number, "confirm_send"), headers=headers) as r:
                if r.status_code == 429:
                    refused += 1
                    continue
                async for line in r.aiter_lines():
                    if "elicitation/create" in line:
                        admitted += 1
                        break
    assert (admitted, refused) == (4, 16)  # the four calls go on in the session, waiting: they keep their slots


@pytest.mark.parametrize("server", [(["--calls-per-caller", "1"], 20)], indirect=True)
async def test_a_caller_at_its_limit_may_call_again_as_soon_as_an_answer_arrives(server: ServerProcess) -> None:
    statuses: collections.Counter[int] = collections.Counter()
    async with httpx2.AsyncClient(timeout=30) as http:
        for era_headers in (await open_session(http, server.url, NOUR), None):
            for number in range(150):  # one call at a time, each sent the moment the last answer is read
                if era_headers is None:
                    message, headers = modern_call("progressive", NOUR, number)
                else:
                    message, headers = call(number, "progressive"), era_headers
                meta = message["params"].setdefault("_meta", {})
                meta["progressToken"] = f"p{number}"  # its progress makes the answer a stream (lazy SSE)
                async with http.stream("POST", server.url, json=message, headers=headers) as answer:
                    body = b"".join([chunk async for chunk in answer.aiter_bytes()])
                statuses[answer.status_code] += 1
                assert answer.status_code == 429 or b'"done":true' in body.replace(b" ", b"")
    assert statuses == {200: 300}  # the slot is given back before the answer's last bytes leave
