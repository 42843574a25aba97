"""``self.remember.search``: ranked, per caller, exact after every change, on every store, in both eras."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import redis
from redis.cluster import RedisCluster

from mcpkit import ManualClock, Server
from mcpkit.testing import CallAs, CallerClient, ToolCallError, running
from mcpkit_remember import RememberPlugin
from mcpkit_storage._cli import purge_user, rotate
from mcpkit_storage.sealing._keyring import Keyring
from redis_fixtures import PrivateRedis
from redis_round_trips import RoundTrips
from remember.support import NEW, OLD, SECRET, SECRET_B, build_server, keyring_for, mem, refused, static_user_id
from remember.test_rotation import mcpkit, opened_store

# A small labelled set: what Nour keeps, and which key each query must find first.
NOTES = {
    "pref:reply-style": "Prefers short replies, no greetings",
    "pref:language": "Writes to customers in French when they write French",
    "fact:timezone": "Works from Europe/Paris, mornings only",
    "signature": "Nour, Help Desk",
    "draft:T-1042": "Dear customer, your refund for order 7731 is on its way",
    "note:vip": {"customer": "Acme Corp", "why": "renewal due in March", "tags": ["enterprise", "priority"]},
}
LABELLED = [
    ("preferences for replies", "pref:reply-style"),
    ("which timezone", "fact:timezone"),
    ("refund", "draft:T-1042"),
    ("ACME", "note:vip"),
    ("enterprise customers", "note:vip"),
    ("french", "pref:language"),
    ("T-1042", "draft:T-1042"),
    ("café in Paris", "fact:timezone"),  # accents fold, unknown words do not hurt
]


@pytest.fixture(params=[NEW, OLD])
def mcp_protocol(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def searching(store_options: dict[str, Any], secret: str | list[str] = SECRET) -> Server:
    """A test server whose plugin indexes every value (``search=True``)."""
    return build_server(RememberPlugin.init(**store_options, secret=secret, search=True))


@pytest.fixture
def mcpkit_server(store_options: dict[str, Any]) -> Server:
    return searching(store_options)


async def found(client: CallerClient, query: str, scope: str = "user", **options: Any) -> list[str]:
    return [key for key, _, _ in await mem(client, "search", query=query, scope=scope, **options)]


async def keep_notes(client: CallerClient, scope: str = "user") -> None:
    for key, value in NOTES.items():
        await mem(client, "set", key=key, value=value, scope=scope)


async def test_search_ranks_a_small_labelled_set(call_as: CallAs) -> None:
    nour = call_as("nour")
    await keep_notes(nour)
    for query, best in LABELLED:
        assert (await found(nour, query))[:1] == [best], query
    results = await mem(nour, "search", query="customer", scope="user")
    scores = [score for _, _, score in results]
    assert scores == sorted(scores, reverse=True)
    assert all(score > 0 for score in scores)
    assert {key for key, _, _ in results} == {"pref:language", "draft:T-1042", "note:vip"}
    assert dict((key, value) for key, value, _ in results)["note:vip"] == NOTES["note:vip"]


async def test_a_query_of_stop_words_or_nothing_finds_nothing(call_as: CallAs) -> None:
    nour = call_as("nour")
    await keep_notes(nour)
    assert await found(nour, "") == []
    assert await found(nour, "the and of") == []
    assert await found(nour, "zebra") == []


async def test_limit_caps_the_matches(call_as: CallAs) -> None:
    nour = call_as("nour")
    for number in range(30):
        await mem(nour, "set", key=f"ticket:{number}", value=f"printer jam on floor {number}", scope="user")
    assert len(await found(nour, "printer", limit=3)) == 3
    assert len(await found(nour, "printer", limit=100)) == 30
    for bad in (0, 101, "5", 2.5, True):
        assert (await refused(nour, "search", query="printer", scope="user", limit=bad)).code == "REMEMBER_INVALID"
    assert (await refused(nour, "search", query=["printer"], scope="user")).code == "REMEMBER_INVALID"


@pytest.mark.parametrize("scope", ["user", "session", "tool", "global"])
async def test_sam_never_finds_nours_values_even_with_the_same_words(call_as: CallAs, scope: str) -> None:
    nour, sam = call_as("nour"), call_as("sam")
    await mem(nour, "set", key="reminder", value="call the printer vendor about toner", scope=scope)
    await mem(sam, "set", key="reminder", value="call the printer vendor about toner", scope=scope)
    await mem(nour, "set", key="secret-plan", value="printer replacement budget", scope=scope)
    expected = ["reminder", "secret-plan"]
    if scope == "global":  # shared by design: both see both (Sam's write replaced Nour's equal key)
        assert sorted(await found(sam, "printer", scope)) == expected
        return
    assert sorted(await found(nour, "printer", scope)) == expected
    assert await found(sam, "printer", scope) == ["reminder"]
    assert await found(sam, "budget replacement", scope) == []
    # The same key and words: once Sam's own is gone he finds nothing, while Nour still finds hers.
    assert await mem(sam, "forget", key="reminder", scope=scope) is True
    assert await found(sam, "printer", scope) == []
    assert sorted(await found(nour, "printer", scope)) == expected


async def test_tool_scope_is_searched_per_tool(call_as: CallAs) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="seen", value="printer", scope="tool")
    assert await found(nour, "printer", "tool") == ["seen"]
    assert await mem(nour, "search", query="printer", scope="tool", tool="mem_twin") == []


async def test_every_change_is_visible_to_the_next_search(call_as: CallAs) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="note", value="printer jam", scope="user")
    assert await found(nour, "printer") == ["note"]
    await mem(nour, "set", key="note", value="scanner jam", scope="user")  # set again
    assert await found(nour, "printer") == []
    assert await found(nour, "scanner") == ["note"]
    await mem(nour, "append", key="seen", item="projector", scope="user")  # update
    await mem(nour, "append", key="seen", item="stapler", scope="user")
    assert await found(nour, "projector stapler") == ["seen"]
    await mem(nour, "increment", key="count", by=7, scope="user")  # increment: numbers are words too
    assert await found(nour, "7") == ["count"]
    await mem(nour, "increment", key="count", by=1, scope="user")
    assert await found(nour, "7") == []
    assert await found(nour, "8") == ["count"]
    assert await mem(nour, "forget", key="note", scope="user") is True  # forget
    assert await found(nour, "scanner") == []
    await mem(nour, "forget_all", scope="user")  # forget_all
    assert await found(nour, "projector count") == []


async def test_expired_values_never_appear(call_as: CallAs, clock: ManualClock) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="short", value="printer", scope="user", ttl=60)
    await mem(nour, "set", key="long", value="printer printer", scope="user", ttl=3600)
    assert sorted(await found(nour, "printer")) == ["long", "short"]
    clock.advance(60)
    assert await found(nour, "printer") == ["long"]
    clock.advance(3600)
    assert await found(nour, "printer") == []


async def test_an_anonymous_caller_cannot_search_user_scope(call_as: CallAs) -> None:
    assert (await refused(call_as(None), "search", query="x", scope="user")).code == "REMEMBER_IDENTITY_REQUIRED"


async def test_search_ranks_what_is_rarer_and_more_frequent_first(call_as: CallAs) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="a", value="printer on floor two", scope="user")
    await mem(nour, "set", key="b", value="printer printer printer jammed again", scope="user")
    await mem(nour, "set", key="c", value="toner for the printer", scope="user")
    assert (await found(nour, "printer"))[0] == "b"  # the term most often
    assert (await found(nour, "printer toner"))[0] == "c"  # the rarer term decides


STORED = pytest.mark.parametrize("store_kind", ["sqlite", "redis", "redis-cluster"])


@STORED
async def test_after_a_restart_search_still_finds_what_was_kept(
    store_options: dict[str, Any], mcp_protocol: str
) -> None:
    clock = ManualClock()
    async with running(searching(store_options), clock=clock, protocol=mcp_protocol) as callers:
        await keep_notes(callers("nour"))
    async with running(searching(store_options), clock=clock, protocol=mcp_protocol) as callers:
        assert (await found(callers("nour"), "refund"))[:1] == ["draft:T-1042"]


@STORED
async def test_purge_and_rotate_keep_the_index_exact(store_options: dict[str, Any], mcp_protocol: str) -> None:
    clock = ManualClock()
    async with running(searching(store_options), clock=clock, protocol=mcp_protocol) as callers:
        await keep_notes(callers("nour"))
        await keep_notes(callers("sam"))
    async with opened_store(store_options) as store:
        report = await rotate(store, keyring_for(store_options, [SECRET_B, SECRET]), clock.now())
        assert report.rotated == 2 * len(NOTES)
    after = searching(store_options, SECRET_B)  # the new secret alone
    async with running(after, clock=clock, protocol=mcp_protocol) as callers:
        for query, best in LABELLED:
            assert (await found(callers("nour"), query))[:1] == [best], query
    async with opened_store(store_options) as store:
        purged = await purge_user(store, keyring_for(store_options, [SECRET_B]), static_user_id("nour"))
        assert purged.deleted == 2 * len(NOTES)  # each note and its change history (the default)
    async with running(searching(store_options, SECRET_B), clock=clock, protocol=mcp_protocol) as callers:
        assert await found(callers("nour"), "refund customer french") == []
        assert (await found(callers("sam"), "refund"))[:1] == ["draft:T-1042"]


#: Words of NOTES that no store may hold in any form a reader could match (stems included).
DISTINCTIVE = ["refund", "greeting", "prefer", "Acme", "renewal", "enterprise", "Paris", "French"]


def redis_dump(url: str, prefix: str) -> bytes:
    """Every key name under ``prefix`` and everything stored under it, as one blob of bytes (on every primary of
    a cluster)."""
    client: Any
    if url.startswith("redis+cluster://"):
        host, port = url.removeprefix("redis+cluster://").split(",")[0].split(":")
        client = RedisCluster(host=host, port=int(port))
    else:
        client = redis.Redis.from_url(url)
    blob = bytearray()
    for name in client.scan_iter(match=prefix + "*"):
        blob += name
        kind = client.type(name)
        if kind == b"string":
            blob += client.get(name) or b""
        elif kind == b"hash":
            for field, value in client.hgetall(name).items():
                blob += field + value
        elif kind == b"zset":
            blob += b"".join(client.zrange(name, 0, -1))
        elif kind == b"set":
            blob += b"".join(client.smembers(name))
        else:
            raise AssertionError(f"unexpected {kind!r} at {name!r}")
    client.close()
    return bytes(blob)


@STORED
async def test_a_copy_of_the_store_holds_none_of_the_words_written(
    store_options: dict[str, Any], mcp_protocol: str
) -> None:
    clock = ManualClock()
    async with running(searching(store_options), clock=clock, protocol=mcp_protocol) as callers:
        await keep_notes(callers("nour"))
        assert (await found(callers("nour"), "refund"))[:1] == ["draft:T-1042"]  # searchable, so indexed
    if store_options["type"] == "sqlite":
        path = Path(store_options["path"])
        blob = b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))
    else:
        blob = redis_dump(store_options["url"], store_options["redis_prefix"])
    assert len(blob) > 1000
    for word in DISTINCTIVE:
        assert word.lower().encode() not in blob.lower(), word


@pytest.mark.parametrize("store_kind", ["redis"])
async def test_a_redis_search_is_two_round_trips_and_three_while_two_secrets_are_in_use(  # two more for a typo
    store_options: dict[str, Any], mcp_protocol: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    trips = RoundTrips(monkeypatch)

    async def search(client: CallerClient, query: str) -> tuple[int, int]:
        return await trips.waited(mem(client, "search", query=query, scope="user"))

    async with running(searching(store_options), protocol=mcp_protocol) as callers:
        nour = callers("nour")
        await keep_notes(nour)
        assert await search(nour, "refund customer") == (2, 2)  # rank, then open the best
        assert await search(nour, "zebra") == (2, 2)  # nothing ranked, no near spelling held, nothing to open
        assert await search(nour, "refnud") == (4, 4)  # the same, the near spellings' counts, their ranking, open
    # Values written under the old secret, read with new,old (a rotation under way): both addresses' statistics
    # at once, then both ranked with their sum at once, then one read of the best.
    async with running(searching(store_options, [SECRET_B, SECRET]), protocol=mcp_protocol) as callers:
        await search(callers("nour"), "refund customer")  # (the first opens a second pooled connection)
        assert await search(callers("nour"), "refund customer") == (5, 3)


async def test_search_while_redis_is_down_says_the_store_is_unavailable(
    private_redis: PrivateRedis, mcp_protocol: str
) -> None:
    server = build_server(RememberPlugin.init(type="redis", url=private_redis.url, secret=SECRET, search=True))
    async with running(server, clock=ManualClock(), protocol=mcp_protocol) as callers:
        nour = callers("nour")
        await mem(nour, "set", key="k", value="printer", scope="user")
        private_redis.stop()
        with pytest.raises(ToolCallError) as refusal:
            await mem(nour, "search", query="printer", scope="user")
        assert refusal.value.code == "REMEMBER_STORE_UNAVAILABLE"
        private_redis.start()
        assert await found(nour, "printer") == []  # a new, empty Redis: nothing found, no error


@pytest.mark.parametrize("store_kind", ["sqlite", "redis", "redis-cluster", "postgres"])
async def test_during_a_rotation_search_ranks_the_values_under_both_secrets_together(
    store_options: dict[str, Any],
) -> None:
    clock = ManualClock()
    async with running(searching(store_options), clock=clock) as callers:
        await keep_notes(callers("nour"))  # sealed and indexed under the old secret
    rotating = searching(store_options, [SECRET_B, SECRET])
    async with running(rotating, clock=clock) as callers:
        nour = callers("nour")
        await mem(nour, "set", key="note:refund-policy", value="Refunds over 500 euros need approval", scope="user")
        await mem(nour, "set", key="draft:T-1042", value="Your refund for order 7731 was sent", scope="user")  # moved
        during = await mem(nour, "search", query="refund", scope="user")
        assert sorted(key for key, _, _ in during) == ["draft:T-1042", "note:refund-policy"]
        assert (await found(nour, "french"))[:1] == ["pref:language"]  # still under the old secret
    async with running(searching(store_options, SECRET_B), clock=clock) as callers:
        # the same values, all under one secret after a rotation, score exactly as they did across both
        async with opened_store(store_options) as store:
            await rotate(store, keyring_for(store_options, [SECRET_B, SECRET]), clock.now())
        after = await mem(callers("nour"), "search", query="refund", scope="user")
    assert [(key, pytest.approx(score)) for key, _, score in during] == [(key, score) for key, _, score in after]


async def test_without_search_on_search_says_how_to_turn_it_on_and_reindex_finds_what_was_kept(
    store_options: dict[str, Any],
) -> None:
    clock = ManualClock()
    async with running(build_server(RememberPlugin.init(**store_options, secret=SECRET)), clock=clock) as callers:
        nour = callers("nour")
        await keep_notes(nour)  # search is off: kept without postings
        refusal = await refused(nour, "search", query="refund", scope="user")
        assert refusal.code == "REMEMBER_INVALID"
        assert "search=True" in refusal.message
        assert "mcpkit remember reindex" in refusal.message
    if store_options["type"] == "memory":
        return  # nothing outlives the process: the rest needs a store to reopen

    async with running(searching(store_options), clock=clock) as callers:
        assert await found(callers("nour"), "refund") == []  # kept before search was on: not indexed
    async with opened_store(store_options) as store:
        keyring = Keyring([SECRET], placed=store_options["type"] == "redis-cluster")
        report = await rotate(store, keyring, clock.now(), reindex=True)
        assert (report.rotated, report.reindexed, report.current) == (0, len(NOTES), 0)
        assert f"reindexed {len(NOTES)}" in str(report)
    async with running(searching(store_options), clock=clock) as callers:
        for query, best in LABELLED:
            assert (await found(callers("nour"), query))[:1] == [best], query


@STORED
async def test_rotate_keeps_each_values_postings_or_their_absence(store_options: dict[str, Any]) -> None:
    clock = ManualClock()
    async with running(searching(store_options), clock=clock) as callers:
        await mem(callers("nour"), "set", key="indexed", value="printer", scope="user")
    async with running(build_server(RememberPlugin.init(**store_options, secret=SECRET)), clock=clock) as callers:
        await mem(callers("nour"), "set", key="plain", value="printer", scope="user")  # search off: no postings
    async with opened_store(store_options) as store:
        assert (await rotate(store, keyring_for(store_options, [SECRET_B, SECRET]), clock.now())).rotated == 2
        # The two values (one indexed) and their change histories (the default), which are never indexed.
        assert sorted([record.indexed async for record in store.scan()]) == [False, False, False, True]
    async with running(searching(store_options, SECRET_B), clock=clock) as callers:
        assert await found(callers("nour"), "printer") == ["indexed"]


@pytest.mark.parametrize("store_kind", ["sqlite"])  # the command once; rotate(reindex=True) runs on every store
async def test_the_reindex_command_makes_values_kept_before_search_findable(store_options: dict[str, Any]) -> None:
    clock = ManualClock()
    async with running(build_server(RememberPlugin.init(**store_options, secret=SECRET)), clock=clock) as callers:
        await keep_notes(callers("nour"))
    done = mcpkit("reindex", "--store", f"sqlite:///{store_options['path']}", secret=SECRET)
    assert done.returncode == 0, done.stderr
    assert f"rotated 0, already current 0, unreadable 0, expired 0, reindexed {len(NOTES)}" in done.stdout
    async with running(searching(store_options), clock=clock) as callers:
        assert (await found(callers("nour"), "refund"))[:1] == ["draft:T-1042"]
