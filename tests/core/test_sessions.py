"""2025-11-25 sessions per caller: a flood by one caller ends its own sessions, never another caller's.

Raw requests through ``server.http_app()`` with real ``Authorization`` headers; anonymous callers are
told apart by their client address (``httpx2.ASGITransport(client=...)``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
import pytest
from starlette.types import ASGIApp

from core._support import (
    ACCEPT,
    LEGACY,
    NOUR_KEY,
    SAM_KEY,
    IdentityApp,
    bearer,
    call_legacy,
    open_legacy_session,
    running,
    structured,
)
from mcpkit import ManualClock, Server, StaticKeys, ToolContext, app, tool


class Hold:
    """How many ``wait`` calls are in progress, and the event that lets them answer."""

    def __init__(self, calls: int) -> None:
        self.calls = calls
        self.in_progress = 0
        self.all_in = anyio.Event()
        self.release = anyio.Event()


HOLD = Hold(0)


@tool(name="wait", description="Answers once the test lets it.")
class Wait(ToolContext):
    async def execute(self) -> dict[str, bool]:
        HOLD.in_progress += 1
        if HOLD.in_progress == HOLD.calls:
            HOLD.all_in.set()
        await HOLD.release.wait()
        return {"waited": True}


@app(id="waiting", tools=[Wait])
class WaitingApp: ...


def make_server(clock: ManualClock | None = None) -> Server:
    keys = StaticKeys({"nour": NOUR_KEY, "sam": SAM_KEY})
    return Server([IdentityApp, WaitingApp], auth=keys, allow_anonymous=True, clock=clock)


async def initialize(http: httpx2.AsyncClient, token: str | None = None) -> httpx2.Response:
    """An ``initialize`` alone: the session is open, but its client never says it is initialized."""
    message = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "flood", "version": "1"}},
    }
    return await http.post("/mcp", json=message, headers={**ACCEPT, **bearer(token)})


async def works(http: httpx2.AsyncClient, session_id: str, token: str | None = None) -> bool:
    response = await call_legacy(http, session_id, "whoami", token=token)
    if response.status_code == 404:
        return False
    return structured(response)["session_id"] == session_id


@contextlib.asynccontextmanager
async def from_address(asgi: ASGIApp, address: str) -> AsyncIterator[httpx2.AsyncClient]:
    """A raw client of an already running app, connecting from ``address``."""
    transport = httpx2.ASGITransport(app=asgi, client=(address, 40000))
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
        yield http


async def test_a_caller_at_its_limit_ends_its_own_least_recently_used_session_and_nobody_elses() -> None:
    async with running(make_server().http_app(sessions_per_caller=3)) as http:
        sams = await open_legacy_session(http, token=SAM_KEY)
        first, second, third = [await open_legacy_session(http, token=NOUR_KEY) for _ in range(3)]
        assert await works(http, first, NOUR_KEY)  # now `second` is the one Nour used longest ago
        fourth = await open_legacy_session(http, token=NOUR_KEY)

        alive = {name: await works(http, sid, NOUR_KEY) for name, sid in [("1", first), ("3", third), ("4", fourth)]}
        assert not await works(http, second, NOUR_KEY)
        assert alive == {"1": True, "3": True, "4": True}
        assert await works(http, sams, SAM_KEY)


async def test_a_flood_of_initialize_by_one_caller_never_refuses_another() -> None:
    asgi = make_server().http_app(max_sessions=20, sessions_per_caller=5)
    async with running(asgi) as http, from_address(asgi, "192.0.2.7") as stranger:
        sams = await open_legacy_session(http, token=SAM_KEY)
        flood = [await initialize(http, NOUR_KEY) for _ in range(100)]
        anonymous = await open_legacy_session(stranger)
        late = await open_legacy_session(http, token=SAM_KEY)

        assert {response.status_code for response in flood} == {200}
        assert await works(http, sams, SAM_KEY)
        assert await works(http, late, SAM_KEY)
        assert await works(stranger, anonymous)
        newest = [response.headers["mcp-session-id"] for response in flood[-5:]]
        assert [await works(http, sid, NOUR_KEY) for sid in newest] == [True] * 5
        assert not await works(http, flood[0].headers["mcp-session-id"], NOUR_KEY)


async def test_concurrent_openings_by_one_caller_never_leave_it_more_sessions_than_its_limit() -> None:
    async with running(make_server().http_app(sessions_per_caller=3)) as http:
        results: list[httpx2.Response] = []
        async with anyio.create_task_group() as group:
            for _ in range(30):
                group.start_soon(_append, results, initialize(http, NOUR_KEY))
        minted = [response.headers["mcp-session-id"] for response in results if response.status_code == 200]
        alive = [sid for sid in minted if await works(http, sid, NOUR_KEY)]

    assert len(minted) + sum(response.status_code == 429 for response in results) == 30
    assert len(alive) == 3


async def test_anonymous_callers_are_counted_by_their_address() -> None:
    asgi = make_server().http_app(sessions_per_caller=2)
    async with running(asgi), from_address(asgi, "192.0.2.1") as one, from_address(asgi, "192.0.2.2") as two:
        theirs = await open_legacy_session(two)
        mine = [await open_legacy_session(one) for _ in range(3)]

        assert await works(two, theirs)
        assert [await works(one, sid) for sid in mine] == [False, True, True]


async def test_anonymous_ipv6_callers_are_counted_by_their_64_bit_prefix() -> None:
    asgi = make_server().http_app(sessions_per_caller=2)
    async with (
        running(asgi),
        from_address(asgi, "2001:db8:1:2::1") as one,
        from_address(asgi, "2001:db8:1:2:ffff::99") as same_host,
        from_address(asgi, "2001:db8:1:3::1") as neighbour,
    ):
        theirs = await open_legacy_session(neighbour)
        mine = [await open_legacy_session(one), await open_legacy_session(same_host), await open_legacy_session(one)]

        assert await works(neighbour, theirs)  # another /64: another caller
        assert [await works(one, sid) for sid in mine] == [False, True, True]  # one /64: one caller


async def test_a_session_that_never_sent_initialized_is_ended_after_ten_seconds() -> None:
    clock = ManualClock()
    async with running(make_server(clock).http_app()) as http:
        greeted = await open_legacy_session(http, token=NOUR_KEY)
        silent = (await initialize(http, NOUR_KEY)).headers["mcp-session-id"]
        clock.advance(9.9)
        assert await works(http, silent, NOUR_KEY)  # still within its handshake time
        clock.advance(0.1)

        assert not await works(http, silent, NOUR_KEY)
        assert await works(http, greeted, NOUR_KEY)


async def test_an_unfinished_handshake_is_ended_when_anyone_opens_a_session_after_its_deadline() -> None:
    clock = ManualClock()
    async with running(make_server(clock).http_app(sessions_per_caller=2)) as http:
        silent = [(await initialize(http, NOUR_KEY)).headers["mcp-session-id"] for _ in range(2)]
        clock.advance(10)
        await open_legacy_session(http, token=SAM_KEY)  # ends both, although Nour's limit is not reached
        kept = await open_legacy_session(http, token=NOUR_KEY)
        other = await open_legacy_session(http, token=NOUR_KEY)

        assert [await works(http, sid, NOUR_KEY) for sid in silent] == [False, False]
        assert await works(http, kept, NOUR_KEY)
        assert await works(http, other, NOUR_KEY)


async def test_when_each_of_a_callers_sessions_has_a_call_in_progress_a_new_one_gets_429_saying_what_to_do() -> None:
    global HOLD
    HOLD = Hold(2)
    async with running(make_server().http_app(sessions_per_caller=2)) as http:
        busy = [await open_legacy_session(http, token=NOUR_KEY) for _ in range(2)]
        answers: list[httpx2.Response] = []
        async with anyio.create_task_group() as group:
            for sid in busy:
                group.start_soon(lambda sid=sid: _append(answers, call_legacy(http, sid, "wait", token=NOUR_KEY)))
            with anyio.fail_after(10):
                await HOLD.all_in.wait()
            refused = await initialize(http, NOUR_KEY)
            sams = await initialize(http, SAM_KEY)
            HOLD.release.set()
        after = await initialize(http, NOUR_KEY)

    assert refused.status_code == 429
    assert refused.headers["retry-after"] == "1"
    message = refused.json()["error"]["message"]
    assert "already has 2 2025-11-25 sessions, each with a request in progress" in message
    assert "DELETE /mcp" in message
    assert "2026-07-28" in message
    assert sams.status_code == 200
    assert [structured(answer)["waited"] for answer in answers] == [True, True]
    assert after.status_code == 200


async def test_a_session_a_client_ends_frees_its_place() -> None:
    async with running(make_server().http_app(sessions_per_caller=2)) as http:
        first, second = [await open_legacy_session(http, token=NOUR_KEY) for _ in range(2)]
        ended = await http.delete("/mcp", headers={**bearer(NOUR_KEY), "Mcp-Session-Id": second})
        third = await open_legacy_session(http, token=NOUR_KEY)

        assert ended.status_code == 200
        assert await works(http, first, NOUR_KEY)
        assert await works(http, third, NOUR_KEY)


async def test_a_full_session_table_answers_503_with_what_to_do() -> None:
    async with running(make_server().http_app(max_sessions=2, sessions_per_caller=1)) as http:
        await open_legacy_session(http, token=NOUR_KEY)
        await open_legacy_session(http, token=SAM_KEY)
        refused = await initialize(http)

    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "5"
    assert refused.json()["error"]["message"].startswith("The server's table of 2025-11-25 sessions is full")


async def test_session_idle_timeout_ends_an_unused_session() -> None:
    async with running(make_server().http_app(session_idle_timeout=0.2)) as http:
        idle = await open_legacy_session(http, token=NOUR_KEY)
        # The SDK's own timer ends it, on anyio's clock, which no test clock moves (and every request
        # restarts it, so polling would keep the session alive): wait five times the timeout once.
        await anyio.sleep(1.0)

        assert not await works(http, idle, NOUR_KEY)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"sessions_per_caller": 0}, "sessions_per_caller is a whole number of sessions, at least 1; not 0."),
        ({"max_sessions": 10, "sessions_per_caller": 11}, "sessions_per_caller=11 is above max_sessions=10"),
        ({"session_idle_timeout": 0}, "session_idle_timeout is a positive number of seconds, not 0."),
    ],
)
def test_unusable_session_limits_are_refused_when_the_app_is_built(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(".", r"\.")):
        make_server().http_app(**options)


async def _append(answers: list[httpx2.Response], call: Any) -> None:
    answers.append(await call)


# -- anonymous callers and signed-in callers share the table --------------------------------------------------


async def test_anonymous_callers_together_hold_at_most_half_the_table_when_callers_also_sign_in() -> None:
    asgi = make_server().http_app(max_sessions=8, sessions_per_caller=4)
    async with running(asgi) as http:
        flood = []
        for n in range(12):  # anonymous callers from twelve addresses
            async with from_address(asgi, f"192.0.2.{n + 1}") as stranger:
                flood.append(await initialize(stranger))
        nours = [await open_legacy_session(http, token=NOUR_KEY) for _ in range(2)]
        sams = [await open_legacy_session(http, token=SAM_KEY) for _ in range(2)]

        assert {response.status_code for response in flood} == {200}
        assert [await works(http, sid, NOUR_KEY) for sid in nours] == [True, True]
        assert [await works(http, sid, SAM_KEY) for sid in sams] == [True, True]
        alive = []
        for n, response in enumerate(flood):
            async with from_address(asgi, f"192.0.2.{n + 1}") as stranger:
                alive.append(await works(stranger, response.headers["mcp-session-id"]))
        assert alive == [False] * 8 + [True] * 4  # the newest four: half of max_sessions


async def test_at_the_anonymous_half_the_anonymous_caller_holding_the_most_gives_one_up() -> None:
    asgi = make_server().http_app(max_sessions=8, sessions_per_caller=4)
    async with (
        running(asgi),
        from_address(asgi, "192.0.2.1") as busy,
        from_address(asgi, "192.0.2.2") as light,
        from_address(asgi, "192.0.2.3") as newcomer,
    ):
        busys = [await open_legacy_session(busy) for _ in range(3)]
        lights = [await open_legacy_session(light)]
        newcomers = [await open_legacy_session(newcomer)]

        assert [await works(busy, sid) for sid in busys] == [False, True, True]  # its least recently used
        assert await works(light, lights[0])
        assert await works(newcomer, newcomers[0])


async def test_on_a_server_without_sign_in_anonymous_callers_may_fill_the_whole_table() -> None:
    server = Server([IdentityApp], allow_anonymous=True)
    asgi = server.http_app(max_sessions=4, sessions_per_caller=1)
    async with running(asgi):
        opened = []
        for n in range(4):
            async with from_address(asgi, f"192.0.2.{n + 1}") as stranger:
                opened.append(await works(stranger, await open_legacy_session(stranger)))

    assert opened == [True] * 4


async def test_when_the_anonymous_half_is_busy_a_new_anonymous_caller_gets_503_saying_to_sign_in() -> None:
    global HOLD
    HOLD = Hold(2)
    asgi = make_server().http_app(max_sessions=4, sessions_per_caller=2)
    async with running(asgi) as http, from_address(asgi, "192.0.2.1") as busy:
        sessions = [await open_legacy_session(busy) for _ in range(2)]
        async with anyio.create_task_group() as group:
            for sid in sessions:
                group.start_soon(lambda sid=sid: call_legacy(busy, sid, "wait"))
            with anyio.fail_after(10):
                await HOLD.all_in.wait()
            async with from_address(asgi, "192.0.2.2") as stranger:
                refused = await initialize(stranger)
            signed_in = await initialize(http, NOUR_KEY)
            HOLD.release.set()

    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "5"
    assert refused.json()["error"]["message"].startswith(
        "The 2025-11-25 sessions this server keeps for anonymous callers (half of max_sessions) are all in use."
    )
    assert signed_in.status_code == 200


# -- durations on the monotonic clock ------------------------------------------------------------------------


async def test_a_wall_clock_set_forward_ends_no_handshake_early() -> None:
    clock = ManualClock()
    async with running(make_server(clock).http_app()) as http:
        silent = (await initialize(http, NOUR_KEY)).headers["mcp-session-id"]
        clock.set(clock.now() + 3600)  # NTP, or an operator, corrects the wall clock by an hour

        assert await works(http, silent, NOUR_KEY)


async def test_a_wall_clock_set_back_keeps_no_handshake_alive_for_longer() -> None:
    clock = ManualClock()
    async with running(make_server(clock).http_app()) as http:
        silent = (await initialize(http, NOUR_KEY)).headers["mcp-session-id"]
        clock.set(clock.now() - 3600)
        clock.advance(10)

        assert not await works(http, silent, NOUR_KEY)
