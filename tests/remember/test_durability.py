"""How long values live with their store: SQLite and Redis survive a restart, memory dies with its server."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit import ManualClock
from mcpkit.testing import running
from mcpkit_remember import RememberPlugin
from remember.support import SECRET, build_server, mem
from remember.tools import MISSING


@pytest.mark.parametrize("store_kind", ["sqlite", "redis", "redis-cluster"])
async def test_a_restart_keeps_values_in_every_scope(store_options: dict[str, Any]) -> None:
    clock = ManualClock()
    async with running(build_server(RememberPlugin.init(**store_options, secret=SECRET)), clock=clock) as before:
        for scope in ("user", "session", "tool", "global"):
            await mem(before("nour"), "set", key="k", value=f"{scope} value", scope=scope)
        await mem(before("nour"), "set", key="draft", value="tomorrow", scope="user", ttl=86400)

    clock.advance(3600)
    async with running(build_server(RememberPlugin.init(**store_options, secret=SECRET)), clock=clock) as after:
        for scope in ("user", "session", "tool", "global"):
            assert await mem(after("nour"), "get", key="k", scope=scope) == f"{scope} value"
        assert await mem(after("nour"), "get", key="draft", scope="user") == "tomorrow"
        assert await mem(after("sam"), "get", key="k", scope="user") == MISSING
        clock.advance(86400)
        assert await mem(after("nour"), "get", key="draft", scope="user") == MISSING  # the deadline survived too


async def test_memory_store_values_die_with_the_server() -> None:
    clock = ManualClock()
    async with running(build_server(RememberPlugin.init(type="memory", secret=SECRET)), clock=clock) as before:
        await mem(before("nour"), "set", key="signature", value="Nour", scope="user")
        await mem(before("nour"), "set", key="banner", value="Outage", scope="global")
    async with running(build_server(RememberPlugin.init(type="memory", secret=SECRET)), clock=clock) as after:
        assert await mem(after("nour"), "get", key="signature", scope="user") == MISSING
        assert await mem(after("nour"), "get", key="banner", scope="global") == MISSING


async def test_a_banner_set_on_one_memory_server_is_not_seen_by_another() -> None:
    clock = ManualClock()
    plugin = RememberPlugin.init(type="memory", secret=SECRET)  # one template, two servers: two stores
    first, second = build_server(plugin, name="first"), build_server(plugin, name="second")
    async with running(first, clock=clock) as on_first, running(second, clock=clock) as on_second:
        await mem(on_first("nour"), "set", key="banner", value="Outage on EU-1", scope="global")
        assert await mem(on_first(None), "get", key="banner", scope="global") == "Outage on EU-1"
        assert await mem(on_second(None), "get", key="banner", scope="global") == MISSING
        assert await mem(on_second("nour"), "get", key="banner", scope="global") == MISSING
