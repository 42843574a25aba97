"""What is particular to the Redis store: round trips, key layout, expiry of its indexes, outages."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from unittest.mock import ANY

import pytest
import redis
from redis.crc import key_slot

from mcpkit_storage.stores._store import Address, Entry, Quota, StoreUnavailableError, Write
from mcpkit_storage.stores.redis import _redis_scripts as lua
from mcpkit_storage.stores.redis._redis_scripts import SWAP_MARKER_MS
from mcpkit_storage.stores.redis._redis_store import EXPIRY_MARGIN_MS, RedisStore
from redis_fixtures import PrivateRedis
from redis_round_trips import RoundTrips
from stores._counter import increment, read
from stores.views import keys

OWNER = "0f3c9a1b2d4e5f60718293a4b5c6d7e8"
OTHER = "99999999999999999999999999999999"
HOUR = 3600.0
DAY = 24 * HOUR


@pytest.fixture
async def store(redis_url: str, redis_prefix: str) -> AsyncIterator[RedisStore]:
    opened = RedisStore(redis_url, prefix=redis_prefix)
    await opened.open()
    yield opened
    await opened.close()


@pytest.fixture
def raw(redis_url: str) -> Iterator[redis.Redis]:
    """A plain synchronous client, to look at what the store wrote."""
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


def names(client: redis.Redis, prefix: str) -> list[str]:
    """The store's keys under ``prefix``, but for its layout marker (which is meant to stay)."""
    found = (name.decode() for name in client.scan_iter(match=f"{prefix}*", count=1000))
    return sorted(name for name in found if name != f"{prefix}layout")


async def test_each_operation_is_one_round_trip(store: RedisStore, monkeypatch: pytest.MonkeyPatch) -> None:
    now = time.time()
    await store.put(OWNER, "user", "warm", b"v", None, now)  # the connection exists before counting
    trips = RoundTrips(monkeypatch)
    assert await trips.of(store.put(OWNER, "user", "k", b"1", now + DAY, now)) == 1
    assert await trips.of(store.get(OWNER, "user", "k", now)) == 1
    assert await trips.of(store.get(OWNER, "user", "k", now)) == 1
    assert await trips.of(store.swap(OWNER, "user", "k", b"1", b"2", None, now)) == 1
    assert await trips.of(store.swap(OWNER, "user", "k", b"1", b"3", None, now)) == 1
    assert await trips.of(store.swap(OWNER, "user", "new", None, b"3", None, now)) == 1
    assert await trips.of(store.entries(OWNER, "user", now)) == 1
    assert await trips.of(store.delete(OWNER, "user", "k", now)) == 1
    assert await trips.of(store.delete_bucket(OWNER, "user", now)) == 1
    assert await trips.of(store.delete_owner(OWNER)) == 1


async def test_swap_many_sends_its_writes_in_one_pipeline_each_answered_on_its_own(
    store: RedisStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = time.time()
    await store.put(OWNER, "user", "taken", b"there", None, now)
    writes = [Write(OWNER, "user", f"k{n}", None, b"v", None, (), None, None) for n in range(50)]
    writes.append(Write(OWNER, "user", "taken", b"not what is there", b"v", None, (), None, None))
    trips = RoundTrips(monkeypatch)

    answers: list[object] = []

    async def swapped() -> None:
        answers.extend(await store.swap_many(writes, now))

    sent = await trips.of(swapped())

    assert sent == 2  # the pipeline's check that SWAP is loaded, then the 51 SWAPs together
    assert answers == [True] * 50 + [False]
    assert await store.swap_many(writes[:1], now) == [True]  # resent: it is there as written
    assert [await store.get(OWNER, "user", f"k{n}", now) for n in (0, 49)] == [Entry(b"v", None, ANY)] * 2
    assert await store.get(OWNER, "user", "taken", now) == Entry(b"there", None, ANY)


async def test_open_reads_the_layout_and_loads_the_scripts_in_one_round_trip_once_the_layout_is_known(
    redis_url: str, redis_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = RedisStore(redis_url, prefix=redis_prefix)
    await first.open()  # a first start looks for entries of mcpkit 0.1, finds none and says so in the store
    await first.close()
    assert not first.legacy
    store = RedisStore(redis_url, prefix=redis_prefix)
    trips = RoundTrips(monkeypatch)
    await store.open()
    try:
        mine = [sent for sent in trips.sent if b"SCRIPT" in sent or b"SCAN" in sent or b"layout" in sent]
        assert len(mine) == 1  # besides the connection's own handshake
        assert mine[0].startswith(b"*2\r\n$4\r\nINFO\r\n$7\r\ncluster\r\n")
        assert mine[0].count(b"SCRIPT") == len(lua.STANDALONE)  # every script loaded in that one trip
        assert not store.legacy
        assert await trips.of(store.swap(OWNER, "user", "k", None, b"1", None, time.time())) == 1
    finally:
        await store.close()


async def test_moving_reading_many_and_quotas_are_one_round_trip_too(
    store: RedisStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = time.time()
    await store.put(OWNER, "user", "old", b"1", None, now)
    trips = RoundTrips(monkeypatch)
    here, there = Address(OWNER, "user", "old"), Address(OTHER, "user", "new")
    assert await trips.of(store.get_many([here, there], now)) == 1
    assert await trips.of(store.swap(*there, None, b"2", None, now, also=[(here, b"1")])) == 1
    assert await trips.of(store.put(OWNER, "user", "q", b"3", None, now, Quota(10, 1000))) == 1
    assert await trips.of(store.delete_many([here, there], now)) == 1


async def test_bucket_and_owner_operations_never_walk_the_keyspace(private_redis: PrivateRedis) -> None:
    store, now = RedisStore(private_redis.url), time.time()
    await store.open()
    admin = redis.Redis.from_url(private_redis.url)
    try:
        for number in range(20):
            await store.put(OWNER, "user", f"k{number}", b"v", now + number, now)
        admin.config_resetstat()
        assert len(await keys(store, OWNER, "user", now + 10)) == 9
        assert await store.delete_bucket(OWNER, "user", now + 10) == 9
        await store.put(OWNER, "tool.t", "k", b"v", None, now)
        assert await store.delete_owner(OWNER) == 1
        stats = admin.info("commandstats")
        assert {"cmdstat_zrangebyscore", "cmdstat_evalsha"} <= stats.keys()
        assert not {"cmdstat_scan", "cmdstat_keys"} & stats.keys()
    finally:
        admin.close()
        await store.close()


async def test_every_key_of_an_owner_shares_one_hash_tag(
    store: RedisStore, raw: redis.Redis, redis_prefix: str
) -> None:
    now = time.time()
    for bucket in ["user", "session", "global", "tool.search"]:
        await store.put(OWNER, bucket, "k:{x}", b"v", now + DAY, now)
    await store.put("someone-else", "user", "k", b"v", None, now)
    mine = [name for name in names(raw, redis_prefix) if name.startswith(f"{redis_prefix}{{{OWNER}}}:")]
    # values, bucket indexes, bucket size tables, bucket first-write times, the owner's bucket set
    assert len(mine) == 4 + 4 + 4 + 4 + 1
    assert {key_slot(name.encode()) for name in mine} == {key_slot(OWNER.encode())}
    assert f"{redis_prefix}{{{OWNER}}}:v:user:k:{{x}}" in mine


async def test_a_value_past_the_framework_deadline_reads_missing_though_redis_still_has_it(
    store: RedisStore, raw: redis.Redis, redis_prefix: str
) -> None:
    now = time.time()
    await store.put(OWNER, "user", "k", b"v", now + HOUR, now)
    assert await store.get(OWNER, "user", "k", now + 2 * HOUR) is None
    assert raw.exists(f"{redis_prefix}{{{OWNER}}}:v:user:k")
    assert 0 < raw.pttl(f"{redis_prefix}{{{OWNER}}}:v:user:k") <= HOUR * 1000 + EXPIRY_MARGIN_MS


async def test_indexes_expire_with_their_longest_value_and_leave_nothing_behind(
    store: RedisStore, raw: redis.Redis, redis_prefix: str
) -> None:
    now = time.time()
    base = f"{redis_prefix}{{{OWNER}}}"
    await store.put(OWNER, "user", "short", b"v", now + HOUR, now)
    await store.put(OWNER, "user", "long", b"v", now + DAY, now)
    await store.put(OWNER, "session", "k", b"v", now + HOUR, now)
    longest = raw.pexpiretime(f"{base}:v:user:long")
    # Redis' expiry is set relative to the framework's now: the same deadline, give or take the time between calls.
    assert abs(raw.pexpiretime(f"{base}:i:user") - longest) < 1000
    assert abs(raw.pexpiretime(f"{base}:z:user") - longest) < 1000
    assert abs(raw.pexpiretime(f"{base}:b") - longest) < 1000
    assert all(raw.pttl(name) > 0 for name in names(raw, redis_prefix))

    await store.put(OWNER, "tool.t", "forever", b"v", None, now)
    assert raw.pttl(f"{base}:i:tool.t") == -1
    assert raw.pttl(f"{base}:b") == -1
    assert await store.delete(OWNER, "tool.t", "forever", now)
    assert abs(raw.pexpiretime(f"{base}:b") - longest) < 1000

    assert await store.delete_bucket(OWNER, "user", now) == 2
    assert await store.delete(OWNER, "session", "k", now)
    assert names(raw, redis_prefix) == []


async def test_invalid_names_are_refused(store: RedisStore) -> None:
    now = time.time()
    with pytest.raises(ValueError, match="':'"):
        await store.put(OWNER, "tool:x", "k", b"v", None, now)
    with pytest.raises(ValueError, match="owner"):
        await store.get("a{b", "user", "k", now)
    with pytest.raises(ValueError, match="owner"):
        await store.delete_owner("")
    with pytest.raises(ValueError, match="prefix"):
        RedisStore("redis://127.0.0.1:6379/0", prefix="app:{x}:")


async def test_two_stores_on_one_prefix_lose_no_increments(redis_url: str, redis_prefix: str) -> None:
    now = time.time()
    first, second = RedisStore(redis_url, prefix=redis_prefix), RedisStore(redis_url, prefix=redis_prefix)
    await first.open()
    await second.open()
    try:
        racers = [increment(store, OWNER, "counter", 40, now) for store in (first, second) for _ in range(4)]
        lost = await asyncio.gather(*racers)
        assert await read(second, OWNER, "counter", now) == 8 * 40
        assert sum(lost) > 0
    finally:
        await first.close()
        await second.close()


async def test_opening_an_unreachable_redis_names_it_without_the_password(private_redis: PrivateRedis) -> None:
    private_redis.stop()
    url = private_redis.url.replace("redis://", "redis://:hunter2@")
    with pytest.raises(StoreUnavailableError) as raised:
        await RedisStore(url).open()
    message = str(raised.value)
    assert message.startswith(f"Redis at {private_redis.url} is unreachable: ")
    assert "hunter2" not in message


async def test_an_outage_raises_quickly_and_heals_when_redis_returns(private_redis: PrivateRedis) -> None:
    store, now = RedisStore(private_redis.url), time.time()
    await store.open()
    try:
        await store.put(OWNER, "user", "k", b"v", None, now)
        private_redis.stop()
        for call in (store.get(OWNER, "user", "k", now), store.swap(OWNER, "user", "k", b"v", b"w", None, now)):
            started = time.monotonic()
            with pytest.raises(StoreUnavailableError, match=f"Redis at {private_redis.url} is unreachable"):
                await call
            assert time.monotonic() - started < 1.5
        private_redis.start()  # empty again: it keeps nothing on disk
        assert await store.get(OWNER, "user", "k", now) is None
        assert await store.swap(OWNER, "user", "k", None, b"back", None, now)
        assert await store.get(OWNER, "user", "k", now) == Entry(b"back", None, ANY)
    finally:
        await store.close()


async def test_a_redis_that_stops_answering_times_out_instead_of_hanging(private_redis: PrivateRedis) -> None:
    store, now = RedisStore(private_redis.url), time.time()
    await store.open()
    try:
        await store.put(OWNER, "user", "k", b"v", None, now)
        private_redis.freeze()
        started = time.monotonic()
        with pytest.raises(StoreUnavailableError, match="unreachable"):
            await store.get(OWNER, "user", "k", now)
        assert time.monotonic() - started < 5
        private_redis.thaw()
        assert await store.get(OWNER, "user", "k", now) == Entry(b"v", None, ANY)
    finally:
        private_redis.thaw()
        await store.close()


async def test_a_swap_resent_after_a_lost_reply_succeeds_even_when_another_write_came_between(
    store: RedisStore,
) -> None:
    # The reply to a swap that ran is lost with its connection; before the client resends the same
    # script, another writer lands. The resend must report success (it was applied), not a conflict
    # that would make update() run its function a second time.
    now = time.time()
    assert await store.swap(OWNER, "user", "k", None, b"mine", None, now)
    await store.put(OWNER, "user", "k", b"theirs", None, now)
    assert await store.swap(OWNER, "user", "k", None, b"mine", None, now)
    assert await store.get(OWNER, "user", "k", now) == Entry(b"theirs", None, ANY)


async def test_a_swaps_applied_marker_is_short_lived_and_names_no_value(
    store: RedisStore, raw: redis.Redis, redis_prefix: str
) -> None:
    now = time.time()
    assert await store.swap(OWNER, "user", "k", None, b"secret-bytes", None, now)
    markers = [name for name in names(raw, redis_prefix) if ":s:" in name]
    assert len(markers) == 1
    assert 0 < raw.pttl(markers[0]) <= SWAP_MARKER_MS
    assert "secret" not in markers[0]
    assert key_slot(markers[0].encode()) == key_slot(OWNER.encode())


@pytest.mark.parametrize(
    ("error", "writing", "maybe_applied"),
    [
        (redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:1. Connection refused."), True, False),
        (redis.exceptions.TimeoutError("Timeout connecting to server"), True, False),
        (redis.exceptions.ConnectionError("Connection closed by server."), True, True),
        (redis.exceptions.TimeoutError("Timeout reading from 127.0.0.1:6379"), True, True),
        (redis.exceptions.ConnectionError("Connection closed by server."), False, False),
        (redis.exceptions.TimeoutError("Timeout reading from 127.0.0.1:6379"), False, False),
    ],
)
def test_only_a_write_that_may_have_reached_redis_says_it_may_have_been_applied(
    error: Exception, writing: bool, maybe_applied: bool
) -> None:
    store = RedisStore("redis://127.0.0.1:1/0")
    with pytest.raises(StoreUnavailableError) as caught, store._reaching(writing=writing):
        raise error
    assert caught.value.maybe_applied is maybe_applied


async def test_a_redis_cluster_node_is_refused_at_open_saying_what_is_needed(
    make_private_redis: Callable[..., PrivateRedis], tmp_path: Path
) -> None:
    node = make_private_redis("--cluster-enabled", "yes", "--cluster-config-file", str(tmp_path / "nodes.conf"))
    store = RedisStore(node.url, prefix="mcpkit-test:")
    with pytest.raises(StoreUnavailableError) as refused:
        await store.open()
    message = str(refused.value)
    assert "Redis Cluster" in message
    assert "redis+cluster://" in message
    assert node.url in message
    with pytest.raises(RuntimeError, match="not open"):
        await store.get(OWNER, "user", "k", time.time())


async def test_a_full_redis_refuses_writes_as_unavailable_and_leaves_no_value_unindexed(
    make_private_redis: Callable[..., PrivateRedis],
) -> None:
    node = make_private_redis("--maxmemory", "2mb", "--maxmemory-policy", "noeviction")
    store = RedisStore(node.url, prefix="mcpkit-test:")
    await store.open()
    now = time.time()
    try:
        await store.put(OWNER, "user", "kept", b"first", None, now)
        written = 0

        async def fill() -> None:
            nonlocal written
            while written < 10_000:
                await store.put(OWNER, "user", f"k{written}", b"x" * 4096, None, now)
                written += 1

        with pytest.raises(StoreUnavailableError) as full:
            await fill()
        assert "maxmemory" in str(full.value)
        # Redis refuses inside the script, on the first command that needs memory: which one, no answer says.
        assert full.value.maybe_applied is True
        with pytest.raises(StoreUnavailableError):
            await store.swap(OWNER, "user", "k-new", None, b"x" * 4096, None, now)
        assert await store.get(OWNER, "user", "kept", now) == Entry(b"first", None, ANY)
        listed = [key for key, _ in await store.entries(OWNER, "user", now)]
        assert listed == sorted(["kept", *(f"k{number}" for number in range(written))])  # no value left unindexed
        assert await store.delete_owner(OWNER) == written + 1  # and every value is found by a purge
    finally:
        await store.close()


async def test_a_pipelined_write_that_fails_says_the_others_may_have_run(
    store: RedisStore, raw: redis.Redis, redis_prefix: str
) -> None:
    now = time.time()
    await store.put(OWNER, "broken", "x", b"1", None, now)
    for name in raw.keys(f"{redis_prefix}*broken*"):  # the bucket's keys hold the wrong kind of value
        raw.delete(name)
        raw.set(name, "not what the store keeps")
    writes = [Write(OWNER, bucket, f"k{n}", None, b"v", None, (), None, None) for n, bucket in enumerate(BUCKETS)]

    with pytest.raises(StoreUnavailableError, match=r"pipelined writes failed, the others ran") as failed:
        await store.swap_many(writes, now)

    assert failed.value.maybe_applied  # a pipeline is no transaction: a write of "user" ran
    assert await store.get(OWNER, "user", "k0", now) == Entry(b"v", None, ANY)


BUCKETS = ("user", "broken", "user")


async def test_a_pipeline_refused_whole_before_running_says_nothing_was_made() -> None:
    from mcpkit_storage.stores.redis._redis_pipeline import pipelined

    class Pipe:  # what redis-py's pipeline answers with raise_on_error=False: each call's reply or error
        def __init__(self, answers: list[object]) -> None:
            self.answers = answers

        async def __aenter__(self) -> Pipe:
            return self

        async def __aexit__(self, *_: object) -> None:
            return None

        async def execute(self, *, raise_on_error: bool) -> list[object]:
            assert not raise_on_error
            return self.answers

    class Client:
        def __init__(self, answers: list[object]) -> None:
            self.answers = answers

        def pipeline(self, *, transaction: bool) -> Pipe:
            return Pipe(self.answers)

    async def script(**_: object) -> None:
        return None

    refused = redis.exceptions.ReadOnlyError("READONLY You can't write against a read only replica.")
    calls = [((), ())] * 2
    with pytest.raises(redis.exceptions.ReadOnlyError):  # every call refused before running: nothing made
        await pipelined(Client([refused, refused]), script, calls)  # type: ignore[arg-type]
    with pytest.raises(redis.exceptions.ResponseError, match=r"1 of 2 pipelined writes failed, the others ran"):
        await pipelined(Client([1, refused]), script, calls)  # type: ignore[arg-type]
