"""``updated_at``: when a value was last written, sealed with it, on every store and in both eras (seed 004:
stale facts). ``lookup`` and search matches say it; reading never moves it, a rotation keeps it."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit import ManualClock, Server
from mcpkit.testing import CallAs, running
from mcpkit_remember import RememberPlugin
from mcpkit_storage._cli import rotate
from remember.support import SECRET, SECRET_B, build_server, keyring_for, mem
from remember.test_rotation import opened_store


@pytest.fixture
def mcpkit_server(store_options: dict[str, Any]) -> Server:
    return build_server(RememberPlugin.init(**store_options, secret=SECRET, search=True))


async def test_updated_at_is_the_time_of_the_last_write_and_reads_do_not_move_it(
    call_as: CallAs, clock: ManualClock
) -> None:
    nour = call_as("nour")
    assert await mem(nour, "lookup", key="tz", scope="user") is None
    written = clock.now()
    await mem(nour, "set", key="tz", value="Europe/Paris", scope="user", ttl=3600)
    assert await mem(nour, "lookup", key="tz", scope="user") == ["Europe/Paris", written, written + 3600]

    clock.advance(120)  # reads, a search and a listing later: still the time it was written
    await mem(nour, "get", key="tz", scope="user")
    assert await mem(nour, "search_times", query="paris", scope="user") == [["tz", written, written + 3600]]
    assert await mem(nour, "list", scope="user") == ["tz"]
    assert await mem(nour, "lookup", key="tz", scope="user") == ["Europe/Paris", written, written + 3600]

    rewritten = clock.advance(30)  # written again, without a ttl: a new time, and no deadline
    await mem(nour, "set", key="tz", value="Europe/Lisbon", scope="user")
    assert await mem(nour, "lookup", key="tz", scope="user") == ["Europe/Lisbon", rewritten, None]


async def test_an_atomic_update_is_a_write(call_as: CallAs, clock: ManualClock) -> None:
    nour = call_as("nour")
    first = clock.now()
    await mem(nour, "increment", key="tickets", by=2, scope="user")
    assert await mem(nour, "lookup", key="tickets", scope="user") == [2, first, None]
    later = clock.advance(5)
    await mem(nour, "increment", key="tickets", by=1, scope="user")
    await mem(nour, "append", key="seen", item="T-1042", scope="user")
    assert await mem(nour, "lookup", key="tickets", scope="user") == [3, later, None]
    assert await mem(nour, "lookup", key="seen", scope="user") == [["T-1042"], later, None]


@pytest.mark.parametrize("store_kind", ["sqlite", "redis", "redis-cluster"])
async def test_a_rotation_keeps_when_each_value_was_written(store_options: dict[str, Any], mcp_protocol: str) -> None:
    clock = ManualClock()
    written = clock.now()
    server = build_server(RememberPlugin.init(**store_options, secret=SECRET, search=True))
    async with running(server, clock=clock, protocol=mcp_protocol) as callers:
        await mem(callers("nour"), "set", key="tz", value="Europe/Paris", scope="user")
    clock.advance(600)
    async with opened_store(store_options) as store:
        assert (await rotate(store, keyring_for(store_options, [SECRET_B, SECRET]), clock.now())).rotated == 1
    after = build_server(RememberPlugin.init(**store_options, secret=SECRET_B, search=True))  # the new secret alone
    async with running(after, clock=clock, protocol=mcp_protocol) as callers:
        assert await mem(callers("nour"), "lookup", key="tz", scope="user") == ["Europe/Paris", written, None]
