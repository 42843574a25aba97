"""Time to live, moved by the framework clock (never by sleeping), identically on every store."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
import redis

from mcpkit import ConfigurationError, ManualClock, Server
from mcpkit.testing import CallAs, running
from mcpkit_remember import RememberPlugin
from mcpkit_storage import versions_key
from mcpkit_storage.base._values import MAX_TTL
from mcpkit_storage.stores.redis._redis_store import EXPIRY_MARGIN_MS
from remember.support import (
    NEW,
    SECRET,
    address_of,
    build_server,
    mem,
    refused,
    static_user_id,
    store_of,
    user_identity,
)
from remember.tools import MISSING

DAY = 24 * 60 * 60


@pytest.fixture(params=[NEW])
def mcp_protocol(request: pytest.FixtureRequest) -> str:
    """Time does not depend on the protocol era; user scope keeps these on the stateless one."""
    return str(request.param)


async def assert_present(client: Any, key: str, value: Any, scope: str = "user") -> None:
    assert await mem(client, "get", key=key, scope=scope) == value
    assert await mem(client, "knows", key=key, scope=scope) is True
    assert key in await mem(client, "list", scope=scope)


async def assert_missing(client: Any, key: str, scope: str = "user") -> None:
    assert await mem(client, "get", key=key, scope=scope) == MISSING
    assert await mem(client, "knows", key=key, scope=scope) is False
    assert key not in await mem(client, "list", scope=scope)
    assert key not in await mem(client, "list", scope=scope, pattern=key[:1] + "*")


async def test_a_value_past_its_ttl_reads_as_missing_in_get_knows_and_list(call_as: CallAs, clock: ManualClock) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="draft:T-1", value="Dear customer", scope="user", ttl=DAY)
    await mem(nour, "set", key="draft:T-2", value="kept", scope="user")

    clock.advance(DAY - 1)
    await assert_present(nour, "draft:T-1", "Dear customer")
    clock.advance(1)
    await assert_missing(nour, "draft:T-1")
    assert await mem(nour, "forget", key="draft:T-1", scope="user") is False
    assert await mem(nour, "forget_all", scope="user") == 1  # only the live one counts
    assert await mem(nour, "list", scope="user") == []


async def test_an_expired_value_can_be_set_again(call_as: CallAs, clock: ManualClock) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="k", value="old", scope="session", ttl=10)
    clock.advance(11)
    assert await mem(nour, "increment", key="k", scope="session") == 1  # expired counts as missing
    await mem(nour, "set", key="k", value="new", scope="session", ttl=10)
    await assert_present(nour, "k", "new", scope="session")


async def test_setting_a_value_again_without_a_ttl_drops_the_old_deadline(call_as: CallAs, clock: ManualClock) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="k", value=1, scope="user", ttl=10)
    await mem(nour, "set", key="k", value=2, scope="user")
    clock.advance(DAY)
    await assert_present(nour, "k", 2)


async def test_increment_and_update_without_a_ttl_keep_the_existing_deadline(
    call_as: CallAs, clock: ManualClock
) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="n", value=1, scope="user", ttl=100)
    await mem(nour, "set", key="seen", value=[], scope="user", ttl=100)
    clock.advance(60)
    assert await mem(nour, "increment", key="n", scope="user") == 2
    assert await mem(nour, "append", key="seen", item="T-1", scope="user") == ["T-1"]

    clock.advance(39)
    await assert_present(nour, "n", 2)
    await assert_present(nour, "seen", ["T-1"])
    clock.advance(1)
    await assert_missing(nour, "n")
    await assert_missing(nour, "seen")


async def test_increment_and_update_with_a_ttl_replace_the_deadline(call_as: CallAs, clock: ManualClock) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="n", value=1, scope="user", ttl=100)
    await mem(nour, "set", key="seen", value=[], scope="user", ttl=100)
    clock.advance(60)
    assert await mem(nour, "increment", key="n", scope="user", ttl=100) == 2
    assert await mem(nour, "append", key="seen", item="T-1", scope="user", ttl=10) == ["T-1"]

    clock.advance(10)  # 70 s after set: the shorter new deadline has passed, the longer one has not
    await assert_missing(nour, "seen")
    clock.advance(89)
    await assert_present(nour, "n", 2)
    clock.advance(1)
    await assert_missing(nour, "n")


async def test_a_value_without_a_ttl_and_no_default_lives_until_forgotten(call_as: CallAs, clock: ManualClock) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="signature", value="Nour", scope="user")
    await mem(nour, "increment", key="n", scope="user")
    clock.advance(10 * 365 * DAY)
    await assert_present(nour, "signature", "Nour")
    await assert_present(nour, "n", 1)


class TestDefaultTtl:
    """``default_ttl`` applies to values stored without one, the same way on every store."""

    @pytest.fixture
    def mcpkit_server(self, store_options: dict[str, Any]) -> Server:
        return build_server(RememberPlugin.init(**store_options, secret=SECRET, default_ttl=DAY))

    async def test_default_ttl_applies_to_values_stored_without_one(self, call_as: CallAs, clock: ManualClock) -> None:
        nour = call_as("nour")
        await mem(nour, "set", key="draft", value="d", scope="user")
        await mem(nour, "increment", key="n", scope="user")
        await mem(nour, "append", key="seen", item="T-1", scope="user")
        await mem(nour, "set", key="banner", value="b", scope="global")
        await mem(nour, "set", key="long", value="l", scope="user", ttl=2 * DAY)

        clock.advance(DAY - 1)
        for key, value in (("draft", "d"), ("n", 1), ("seen", ["T-1"])):
            await assert_present(nour, key, value)
        await assert_present(nour, "banner", "b", scope="global")
        clock.advance(1)
        for key in ("draft", "n", "seen"):
            await assert_missing(nour, key)
        await assert_missing(nour, "banner", scope="global")
        await assert_present(nour, "long", "l")  # an explicit ttl wins over the default
        clock.advance(DAY)
        await assert_missing(nour, "long")

    async def test_an_increment_keeps_the_default_deadline_of_the_first_write(
        self, call_as: CallAs, clock: ManualClock
    ) -> None:
        nour = call_as("nour")
        assert await mem(nour, "increment", key="n", scope="user") == 1
        clock.advance(DAY - 10)
        assert await mem(nour, "increment", key="n", scope="user") == 2  # does not restart the day
        clock.advance(10)
        await assert_missing(nour, "n")


async def test_a_ttl_of_100_years_is_kept_on_every_store_and_a_longer_one_is_refused(
    call_as: CallAs, clock: ManualClock
) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="k", value=1, scope="user", ttl=MAX_TTL)  # within Redis' expire range too
    await mem(nour, "increment", key="n", scope="user", ttl=float(MAX_TTL))
    clock.advance(MAX_TTL - 1)
    await assert_present(nour, "k", 1)
    await assert_present(nour, "n", 1)
    clock.advance(1)
    await assert_missing(nour, "k")
    for ttl in (MAX_TTL + 1, 1e17, 1e306):
        error = await refused(nour, "set", key="k", value=1, scope="user", ttl=ttl)
        assert error.code == "REMEMBER_INVALID"
        assert "100 years" in error.message


@pytest.mark.parametrize("default_ttl", [0, -1, MAX_TTL + 1, float("inf"), float("nan"), True, "60"])
def test_a_bad_default_ttl_is_refused_when_the_plugin_is_made(default_ttl: Any) -> None:
    with pytest.raises(ConfigurationError, match="default_ttl"):
        RememberPlugin.init(type="memory", secret=SECRET, default_ttl=default_ttl)


@pytest.mark.parametrize("store_kind", ["redis"])
async def test_redis_keeps_its_own_expiry_through_an_update_without_ttl(
    call_as: CallAs, redis_url: str, redis_prefix: str
) -> None:
    """The peer's bug: an update without ttl dropped the Redis expiry while the value lived on."""
    nour = call_as("nour")
    await mem(nour, "set", key="n", value=1, scope="user", ttl=100)
    await mem(nour, "increment", key="n", scope="user")
    await mem(nour, "append", key="seen", item=1, scope="user", ttl=100)
    await mem(nour, "append", key="seen", item=2, scope="user")
    client = redis.Redis.from_url(redis_url)
    try:
        names = [name for name in client.scan_iter(match=f"{redis_prefix}*") if b":v:" in name]
        assert len(names) == 4  # n and seen, each with its change history (the default), which keeps the ttl too
        for name in names:
            assert 0 < client.pttl(name) <= 100_000 + EXPIRY_MARGIN_MS
    finally:
        client.close()


class TestExpiredValuesAreDeleted:
    """A value past its ttl is eventually deleted from memory and SQLite (Redis expires keys itself)."""

    @pytest.fixture(params=["memory", "sqlite"])
    def store_kind(self, request: pytest.FixtureRequest) -> str:
        return str(request.param)

    @pytest.fixture
    def mcpkit_server(self, store_options: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> Server:
        monkeypatch.setattr("mcpkit_storage.backing._backing.PURGE_INTERVAL", 0.01)  # the purger's pause, not the clock
        return build_server(RememberPlugin.init(**store_options, secret=SECRET))

    async def test_the_purger_deletes_expired_values_nobody_reads(
        self, call_as: CallAs, mcpkit_server: Server, clock: ManualClock
    ) -> None:
        nour = call_as("nour")
        await mem(nour, "set", key="draft", value="gone soon", scope="user", ttl=60)
        await mem(nour, "set", key="kept", value="stays", scope="user")
        store = store_of(mcpkit_server)
        identity = user_identity(static_user_id("nour"))
        # The kept value and its change history (the default); the draft's history expires with the draft.
        kept = sorted(address_of(mcpkit_server, identity, "user", key).key for key in ("kept", versions_key("kept")))
        clock.advance(61)
        for _ in range(500):  # wait for the background task, bounded
            remaining = sorted([record.key async for record in store.scan()])
            if remaining == kept:
                break
            await asyncio.sleep(0.01)
        assert remaining == kept


@pytest.mark.parametrize("store_kind", ["redis"])
@pytest.mark.parametrize("skew", [-3600.0, 3600.0], ids=["app-clock-an-hour-behind", "app-clock-an-hour-ahead"])
async def test_a_skewed_server_clock_never_makes_redis_delete_a_live_value_early(
    store_options: dict[str, Any], skew: float
) -> None:
    """Redis' own expiry is relative to the framework clock: a Redis clock an hour off deletes nothing early."""
    clock = ManualClock(time.time() + skew)
    async with running(build_server(RememberPlugin.init(**store_options, secret=SECRET)), clock=clock) as call_as:
        nour = call_as("nour")
        await mem(nour, "set", key="draft", value="short-lived", scope="user", ttl=60)
        await mem(nour, "increment", key="visits", scope="user", ttl=60)
        assert await mem(nour, "get", key="draft", scope="user") == "short-lived"
        clock.advance(59)
        assert await mem(nour, "get", key="draft", scope="user") == "short-lived"
        assert await mem(nour, "list", scope="user") == ["draft", "visits"]
        clock.advance(2)
        assert await mem(nour, "get", key="draft", scope="user") == MISSING
        assert await mem(nour, "list", scope="user") == []
