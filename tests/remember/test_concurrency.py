"""Atomic increments: 16 concurrent callers x 50 increments from one user lose nothing, on every store; an update
queued too long behind the other writers of its value gives up with a conflict."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpkit import ManualClock, Server, StaticKeys, ToolContext, app, tool
from mcpkit.testing import CallAs, CallerClient, ToolCallError, running
from mcpkit_remember import RememberPlugin
from remember.support import KEYS, NEW, SECRET, build_server, mem

CALLERS = 16
TIMES = 50


async def hammer(clients: list[CallerClient]) -> list[int]:
    """Each client increments one user-scope counter ``TIMES`` times, all at once; returns what they got back.

    Any error result (REMEMBER_CONFLICT included: the update gave up) fails the test.
    """
    returned: list[int] = []

    async def bump(client: CallerClient) -> None:
        for _ in range(TIMES):
            returned.append(await mem(client, "increment", key="counter", scope="user"))

    async with asyncio.TaskGroup() as group:
        for client in clients:
            group.create_task(bump(client))
    return returned


def assert_nothing_lost(returned: list[int]) -> None:
    """Atomic: every increment saw its own number, and together they counted to the end without a gap."""
    assert sorted(returned) == list(range(1, CALLERS * TIMES + 1))


@pytest.mark.parametrize("mcp_protocol", [NEW])
async def test_sixteen_concurrent_callers_lose_no_increment(call_as: CallAs) -> None:
    returned = await hammer([call_as("nour", fresh=True) for _ in range(CALLERS)])
    assert await mem(call_as("nour"), "get", key="counter", scope="user") == CALLERS * TIMES
    assert_nothing_lost(returned)


@pytest.mark.parametrize("store_kind", ["sqlite", "redis"])
async def test_two_servers_sharing_a_store_lose_no_increment(store_options: dict[str, Any]) -> None:
    clock = ManualClock()
    first = build_server(RememberPlugin.init(**store_options, secret=SECRET), name="first")
    second = build_server(RememberPlugin.init(**store_options, secret=SECRET), name="second")
    async with running(first, clock=clock) as on_first, running(second, clock=clock) as on_second:
        clients = [on_first("nour", fresh=True) for _ in range(CALLERS // 2)]
        clients += [on_second("nour", fresh=True) for _ in range(CALLERS // 2)]
        returned = await hammer(clients)
        assert await mem(on_first("nour"), "get", key="counter", scope="user") == CALLERS * TIMES
        assert await mem(on_second("nour"), "get", key="counter", scope="user") == CALLERS * TIMES
    assert_nothing_lost(returned)


async def test_an_update_queued_past_turn_timeout_behind_writers_of_its_value_is_a_conflict() -> None:
    writing, let_go = asyncio.Event(), asyncio.Event()

    @tool(name="slow_update", description="Updates a value with a function that waits for the test.")
    class SlowUpdate(ToolContext):
        async def execute(self, wait: bool) -> dict[str, int]:
            async def slowly(current: int) -> int:
                if wait:
                    writing.set()
                    await let_go.wait()
                return current + 1

            return {"counter": await self.remember.update("counter", slowly, default=0, scope="user")}

    @app(id="slow", tools=[SlowUpdate], plugins=[RememberPlugin.init(type="memory")])
    class Slow: ...

    async with running(Server([Slow], auth=StaticKeys(KEYS), turn_timeout=0.2)) as call_as:
        first = asyncio.create_task(call_as("nour").call("slow_update", {"wait": True}))
        await writing.wait()
        with pytest.raises(ToolCallError) as queued:
            await call_as("nour").call("slow_update", {"wait": False})
        sams = await call_as("sam").call("slow_update", {"wait": False})  # another caller's value: no queue
        let_go.set()
        assert await first == {"counter": 1}
    assert queued.value.code == "REMEMBER_CONFLICT"
    assert "waited 0.2 seconds for its turn behind other writers of it" in queued.value.message
    assert sams == {"counter": 1}
