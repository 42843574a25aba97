"""Admission by caller (issue 35): each caller has at most ``calls_per_caller`` requests in progress; one more gets
429 with ``Retry-After`` and a JSON-RPC error naming the limit, while other callers (another key, another anonymous
address) are served. In process, both eras; the live 2025-11-25 questions are in ``test_admission_live.py``."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import admission_server
import httpx2
import pytest
from _support import ACCEPT, LEGACY, MODERN, bearer, body_of, call_modern, open_legacy_session, post_modern
from admission_server import KEYS, Gate, make_server

NOUR, SAM = KEYS["nour"], KEYS["sam"]
LIMIT = 2


@pytest.fixture(autouse=True)
def gate() -> Gate:
    admission_server.GATE = fresh = Gate()  # the tool reads the module's, set anew for each test
    return fresh


@contextlib.asynccontextmanager
async def serving(**options: Any) -> AsyncIterator[Callable[..., httpx2.AsyncClient]]:
    """The admission server's HTTP app, running; yields a factory of raw clients (one client address each)."""
    asgi = make_server().http_app(calls_per_caller=LIMIT, **options)
    clients: list[httpx2.AsyncClient] = []

    def client_at(address: str = "127.0.0.1") -> httpx2.AsyncClient:
        transport = httpx2.ASGITransport(app=asgi, client=(address, 40000))
        made = httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000", timeout=30)
        clients.append(made)
        return made

    async with asgi.router.lifespan_context(asgi):
        try:
            yield client_at
        finally:
            for made in clients:
                await made.aclose()


async def until_holding(gate: Gate, count: int) -> None:
    for _ in range(500):
        if gate.holding >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{gate.holding} calls holding, not {count}")


Caller = Callable[[httpx2.AsyncClient, str, str | None], Awaitable[httpx2.Response]]


async def modern(http: httpx2.AsyncClient, tool: str, token: str | None) -> httpx2.Response:
    return await call_modern(http, tool, token=token)


def legacy_caller() -> Caller:
    """Calls on one 2025-11-25 session per client and key, each request with an id of its own (from 100)."""
    sessions: dict[tuple[int, str | None], str] = {}
    ids = itertools.count(100)

    async def call(http: httpx2.AsyncClient, tool: str, token: str | None) -> httpx2.Response:
        key = (id(http), token)
        if key not in sessions:
            sessions[key] = await open_legacy_session(http, token=token)
        message = {"jsonrpc": "2.0", "id": next(ids), "method": "tools/call", "params": {"name": tool, "arguments": {}}}
        headers = {**ACCEPT, **bearer(token), "Mcp-Session-Id": sessions[key], "MCP-Protocol-Version": LEGACY}
        return await http.post("/mcp", json=message, headers=headers)

    return call


@pytest.fixture(params=[MODERN, LEGACY])
def call(request: pytest.FixtureRequest) -> Caller:
    return modern if request.param == MODERN else legacy_caller()


def assert_refused(response: httpx2.Response, request_id: int) -> None:
    assert response.status_code == 429, response.text
    assert response.headers["retry-after"] == "1"
    body = body_of(response)
    assert body["id"] == request_id
    assert body["error"]["data"] == {"code": "TOO_MANY_CALLS", "limit": LIMIT}
    assert f"already has {LIMIT} requests in progress" in body["error"]["message"]
    assert "(calls_per_caller)" in body["error"]["message"]


async def test_a_caller_at_its_limit_is_refused_and_another_caller_is_served(gate: Gate, call: Caller) -> None:
    async with serving() as client_at:
        http = client_at()
        # Sessions first (the handshake counts too, while it is in progress): Sam's, and Nour's.
        assert (await call(http, "quick", SAM)).status_code == 200
        assert (await call(http, "quick", NOUR)).status_code == 200
        held = [asyncio.create_task(call(http, "hold", NOUR)) for _ in range(LIMIT)]
        await until_holding(gate, LIMIT)

        refused = await call(http, "quick", NOUR)
        served = await call(http, "quick", SAM)

        gate.open.set()
        done = await asyncio.gather(*held)
        again = await call(http, "quick", NOUR)

    assert_refused(refused, 1 if call is modern else 104)  # 2025-11-25: ids 100-103 before it
    assert body_of(served)["result"]["structuredContent"] == {"caller": "sam"}
    assert all(body_of(response)["result"]["structuredContent"] == {"held": True} for response in done)
    assert body_of(again)["result"]["structuredContent"] == {"caller": "nour"}  # the count went down again


async def test_anonymous_callers_are_counted_per_address(gate: Gate) -> None:
    async with serving() as client_at:
        here, elsewhere = client_at("203.0.113.5"), client_at("203.0.113.6")
        held = [asyncio.create_task(call_modern(here, "hold")) for _ in range(LIMIT)]
        await until_holding(gate, LIMIT)

        refused = await call_modern(here, "quick")
        served = await call_modern(elsewhere, "quick")

        gate.open.set()
        await asyncio.gather(*held)

    assert_refused(refused, 1)
    assert body_of(served)["result"]["structuredContent"] == {"caller": None}


async def test_a_notification_from_a_caller_at_its_limit_is_never_refused(gate: Gate) -> None:
    async with serving() as client_at:
        http = client_at()
        session = await open_legacy_session(http, token=NOUR)
        hold = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "hold", "arguments": {}}}
        headers = {**ACCEPT, **bearer(NOUR), "Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY}
        held = [asyncio.create_task(http.post("/mcp", json={**hold, "id": n}, headers=headers)) for n in range(LIMIT)]
        await until_holding(gate, LIMIT)
        progress = {"progressToken": "p", "progress": 1}
        notified = await http.post(
            "/mcp", json={"jsonrpc": "2.0", "method": "notifications/progress", "params": progress}, headers=headers
        )
        listed = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 9, "method": "tools/list"}, headers=headers)

        gate.open.set()
        await asyncio.gather(*held)

    assert notified.status_code == 202, notified.text  # a notification passes; a request does not
    assert_refused(listed, 9)


async def test_calls_per_caller_must_be_a_whole_number_of_requests() -> None:
    from mcpkit import ConfigurationError

    for wrong in (0, -1, 1.5, True, "8"):
        with pytest.raises(ConfigurationError, match="calls_per_caller is a whole number of requests"):
            make_server().http_app(calls_per_caller=wrong)  # type: ignore[arg-type]


async def test_a_2025_11_25_request_naming_itself_a_listen_stream_in_a_header_is_still_counted(gate: Gate) -> None:
    async with serving() as client_at:
        http = client_at()
        session = await open_legacy_session(http, token=NOUR)
        hold = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "hold", "arguments": {}}}
        headers = {**ACCEPT, **bearer(NOUR), "Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY}
        held = [asyncio.create_task(http.post("/mcp", json={**hold, "id": n}, headers=headers)) for n in range(LIMIT)]
        await until_holding(gate, LIMIT)
        disguised = {**headers, "Mcp-Method": "subscriptions/listen"}  # the SDK reads no such header on 2025-11-25
        refused = await http.post("/mcp", json={**hold, "id": 9}, headers=disguised)
        gate.open.set()
        await asyncio.gather(*held)

    assert_refused(refused, 9)


async def test_a_2026_07_28_call_claiming_to_be_a_listen_stream_is_refused_by_the_header_check(gate: Gate) -> None:
    async with serving() as client_at:
        http = client_at()
        held = [asyncio.create_task(call_modern(http, "hold", token=NOUR)) for _ in range(LIMIT)]
        await until_holding(gate, LIMIT)
        disguised = await post_modern(
            http,
            "tools/call",
            {"name": "hold", "arguments": {}},
            token=NOUR,
            headers={"Mcp-Method": "subscriptions/listen"},
        )
        holding_then = gate.holding
        gate.open.set()
        await asyncio.gather(*held)

    assert disguised.status_code == 400, disguised.text  # answered at once: the tool never ran, nothing is held
    assert body_of(disguised)["error"]["code"] == -32020  # HEADER_MISMATCH
    assert holding_then == LIMIT


async def test_a_caller_at_its_limit_sending_json_nested_too_deep_gets_the_parse_error_not_a_crash(gate: Gate) -> None:
    async with serving() as client_at:
        http = client_at()
        held = [asyncio.create_task(call_modern(http, "hold", token=NOUR)) for _ in range(LIMIT)]
        await until_holding(gate, LIMIT)
        headers = {**ACCEPT, **bearer(NOUR), "Content-Type": "application/json", "MCP-Protocol-Version": MODERN}
        nested = await http.post("/mcp", content=b"[" * 200_000, headers=headers)
        gate.open.set()
        await asyncio.gather(*held)

    assert nested.status_code == 400, nested.text  # read at the limit to see whether it is a request: it is not JSON
    assert body_of(nested)["error"]["code"] == -32700
