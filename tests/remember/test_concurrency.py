"""Atomic increments: 16 concurrent callers x 50 increments from one user lose nothing, on every store."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpkit import ManualClock
from mcpkit.testing import CallAs, CallerClient, running
from mcpkit_remember import RememberPlugin
from remember.support import NEW, SECRET, build_server, mem

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
