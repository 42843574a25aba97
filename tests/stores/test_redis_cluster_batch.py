"""``RedisClusterStore.swap_many`` on a real Redis Cluster: one pipeline per primary, answers in the writes' order, a
later write seeing the earlier ones, a quota refusal per write, writes refused by a moved slot sent again, and a
pipeline refused in part reported as possibly made (the single-node store's contract, spread over nodes)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pytest
import redis

import mcpkit_storage.stores.redis._redis_cluster_store as cluster_store
from mcpkit_storage.stores._store import Address, Entry, Quota, QuotaExceededError, StoreUnavailableError, Write
from mcpkit_storage.stores.redis._cluster_batch import Batch, Replication
from mcpkit_storage.stores.redis._redis_cluster_store import RedisClusterStore
from redis_cluster_fixtures import Cluster
from stores.test_redis_cluster_store import migrate_randomly

HASH = "0f3c9a1b2d4e5f60718293a4b5c6d7e8"
#: Owners of many placement groups: their hash slots fall on every primary.
OWNERS = [f"g{number}.{HASH}" for number in range(12)]


@pytest.fixture
async def store(redis_cluster: Cluster, cluster_prefix: str) -> AsyncIterator[RedisClusterStore]:
    opened = RedisClusterStore(redis_cluster.url, prefix=cluster_prefix)
    await opened.open()
    yield opened
    await opened.close()


def new(owner: str, key: str, data: bytes = b"v", bucket: str = "b", quota: Quota | None = None) -> Write:
    return Write(owner, bucket, key, None, data, None, (), quota, None)


async def test_writes_over_every_primary_go_in_one_pipeline_per_primary_answered_in_order(
    store: RedisClusterStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[tuple[int, int]] = []
    pipeline = cluster_store.node_pipeline

    async def counted(client: Any, sha: str, calls: Sequence[Any], wait: Replication | None) -> list[Any]:
        sent.append((client.connection_pool.connection_kwargs["port"], len(calls)))
        return await pipeline(client, sha, calls, wait)

    monkeypatch.setattr(cluster_store, "node_pipeline", counted)
    now = time.time()
    await store.put(OWNERS[0], "b", "taken", b"there", None, now)
    writes = [new(OWNERS[n % len(OWNERS)], f"k{n}", b"%d" % n) for n in range(300)]
    writes.insert(150, Write(OWNERS[0], "b", "taken", b"not what is there", b"v", None, (), None, None))

    answers = await store.swap_many(writes, now)

    assert answers == [True] * 150 + [False] + [True] * 150
    ports = [port for port, _ in sent]
    assert len(ports) == len(set(ports)) == 3  # one pipeline for each of the three primaries
    assert sum(count for _, count in sent) == 301
    found = [await store.get(OWNERS[n % len(OWNERS)], "b", f"k{n}", now) for n in range(300)]
    assert found == [Entry(b"%d" % n, None) for n in range(300)]
    assert await store.get(OWNERS[0], "b", "taken", now) == Entry(b"there", None)


async def test_a_later_write_sees_the_earlier_ones_and_each_refused_write_has_its_quota_error(
    store: RedisClusterStore,
) -> None:
    now, quota = time.time(), Quota(values=2, bytes=None)
    writes = [
        new(OWNERS[1], "a", b"first", quota=quota),
        Write(OWNERS[1], "b", "a", b"first", b"second", None, (), quota, None),  # expects the write before it
        new(OWNERS[2], "elsewhere"),
        new(OWNERS[1], "c", quota=quota),
        new(OWNERS[1], "d", quota=quota),  # a third value in a bucket allowed two
        Write(OWNERS[1], "b", "a", b"first", b"third", None, (), quota, None),  # no longer what is there
    ]

    answers = await store.swap_many(writes, now)

    assert answers[:4] == [True, True, True, True]
    assert isinstance(answers[4], QuotaExceededError)
    assert answers[4].limit == "values"
    assert answers[5] is False
    assert await store.get(OWNERS[1], "b", "a", now) == Entry(b"second", None)
    assert await store.get(OWNERS[1], "b", "d", now) is None


async def test_writes_sent_to_a_node_that_no_longer_serves_their_slot_are_sent_again_once(
    store: RedisClusterStore, redis_cluster: Cluster
) -> None:
    """The client's map is stale (a slot moved): that slot's writes come back MOVED, refused before running, while
    the other writes on that node run. Only the refused ones are sent again, in order, to the slot's primary."""
    now = time.time()
    client = store._cluster_client
    slot = client.keyslot(store._value(OWNERS[3], "b", "x"))
    right = client.nodes_manager.get_node_from_slot(slot)
    wrong = next(node for node in client.get_primaries() if node.name != right.name)  # type: ignore[no-untyped-call]
    client.nodes_manager.slots_cache[slot] = [wrong]
    wrong_owner = next(o for o in OWNERS[4:] if client.nodes_manager.get_node_from_slot(_slot(store, o)) is wrong)
    writes = [new(OWNERS[3], "x", b"1"), new(wrong_owner, "y"), Write(OWNERS[3], "b", "x", b"1", b"2", None)]
    before = _swaps_run(redis_cluster)

    answers = await store.swap_many(writes, now)

    assert answers == [True, True, True]
    assert await store.get(OWNERS[3], "b", "x", now) == Entry(b"2", None)  # the two writes of x in their order
    assert _swaps_run(redis_cluster) - before == 3  # each write ran once; the MOVED ones never ran where refused


async def test_a_primary_without_the_script_gets_it_and_the_writes_are_sent_again(
    store: RedisClusterStore, redis_cluster: Cluster
) -> None:
    for node in redis_cluster.primaries():  # as a replica promoted since the scripts were loaded
        with redis.Redis(host="127.0.0.1", port=node.port) as primary:
            primary.script_flush()
    writes = [new(owner, "k") for owner in OWNERS]

    assert await store.swap_many(writes, time.time()) == [True] * len(OWNERS)


async def test_a_write_possibly_made_on_one_primary_is_said_so_when_loading_the_script_on_another_fails(
    store: RedisClusterStore, redis_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One primary answers NOSCRIPT, another loses its reply after the writes went, and loading the script fails:
    the batch says its writes may have been made, and the possibly-made ones are never sent again."""
    flushed, lost = (node.port for node in redis_cluster.primaries()[:2])
    with redis.Redis(host="127.0.0.1", port=flushed) as primary:
        primary.script_flush()
    pipeline, sent = cluster_store.node_pipeline, list[int]()

    async def losing(client: Any, sha: str, calls: Sequence[Any], wait: Replication | None) -> list[Any]:
        port = client.connection_pool.connection_kwargs["port"]
        sent.append(port)
        replies = await pipeline(client, sha, calls, wait)
        if port == lost:
            raise redis.exceptions.TimeoutError("Timeout reading from the socket")
        return replies

    async def unloadable(*_: Any, **__: Any) -> None:
        raise redis.exceptions.ConnectionError("Error connecting to 127.0.0.1")

    monkeypatch.setattr(cluster_store, "node_pipeline", losing)
    monkeypatch.setattr(redis.asyncio.Redis, "script_load", unloadable)
    writes = [new(owner, "k") for owner in OWNERS]

    with pytest.raises(StoreUnavailableError) as raised:
        await store.swap_many(writes, time.time())

    assert raised.value.maybe_applied
    assert sent.count(lost) == 1  # never sent a second time


async def test_a_node_connection_the_server_closed_while_idle_is_made_again_before_the_writes_go(
    store: RedisClusterStore, redis_cluster: Cluster
) -> None:
    """Written on a connection the node had closed, the pipeline would fail as a lost reply: possibly made."""
    writes = [new(owner, "before") for owner in OWNERS]
    assert await store.swap_many(writes, time.time()) == [True] * len(OWNERS)  # each primary's connection pooled
    for node in redis_cluster.primaries():
        with redis.Redis(host="127.0.0.1", port=node.port) as primary:
            primary.client_kill_filter(_type="normal", skipme=True)  # a restart, an idle timeout
    await asyncio.sleep(0.2)  # the store's idle connections have seen it

    assert await store.swap_many([new(owner, "after") for owner in OWNERS], time.time()) == [True] * len(OWNERS)


async def test_a_pipeline_refused_in_part_says_the_others_were_made(
    store: RedisClusterStore, redis_cluster: Cluster, cluster_prefix: str
) -> None:
    now = time.time()
    await store.put(OWNERS[4], "broken", "x", b"1", None, now)
    raw = redis_cluster.client()
    try:  # the bucket's keys hold the wrong kind of value: the script fails inside, after it began
        for name in raw.scan_iter(match=f"{cluster_prefix}*broken*", target_nodes=raw.PRIMARIES):
            raw.delete(name)
            raw.set(name, "not what the store keeps")
    finally:
        raw.close()
    writes = [new(OWNERS[4], "k0"), new(OWNERS[4], "k1", bucket="broken"), new(OWNERS[5], "k2")]

    with pytest.raises(StoreUnavailableError, match=r"pipelined writes failed, others ran") as failed:
        await store.swap_many(writes, now)

    assert failed.value.maybe_applied
    assert await store.get(OWNERS[4], "b", "k0", now) == Entry(b"v", None)


async def test_with_wait_a_primary_whose_replica_does_not_confirm_fails_as_possibly_made(
    redis_cluster: Cluster, cluster_prefix: str
) -> None:
    store = RedisClusterStore(redis_cluster.url + "?wait=1&wait_timeout_ms=300", prefix=cluster_prefix)
    await store.open()
    try:
        now = time.time()
        assert await store.swap_many([new(owner, "confirmed") for owner in OWNERS], now) == [True] * len(OWNERS)
        primary = next(n for n in redis_cluster.primaries() if n.port == _port_of(store, OWNERS[6]))
        replica = redis_cluster.replica_of(primary)
        assert replica is not None
        replica.freeze()
        try:
            with pytest.raises(StoreUnavailableError, match=r"only 0 of the 1 replicas") as failed:
                await store.swap_many([new(owner, "unconfirmed") for owner in OWNERS], now)
        finally:
            replica.thaw()
        made = await store.get(OWNERS[6], "b", "unconfirmed", now)
    finally:
        await store.close()

    assert failed.value.maybe_applied
    assert made == Entry(b"v", None)  # it reached the primary; only its copy is unconfirmed


async def test_batches_written_while_a_slot_moves_key_by_key_are_each_answered_and_lose_nothing(
    make_redis_cluster: Callable[[], Cluster], monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the slot migrates, its writes are refused before running (TRYAGAIN or ASK, by the fence key) and sent
    again until it has moved; the other slots' writes in the same pipelines are answered at once."""
    sent: list[int] = []
    pipeline = cluster_store.node_pipeline

    async def counted(client: Any, sha: str, calls: Sequence[Any], wait: Replication | None) -> list[Any]:
        sent.append(len(calls))
        return await pipeline(client, sha, calls, wait)

    monkeypatch.setattr(cluster_store, "node_pipeline", counted)
    cluster = make_redis_cluster()
    store = RedisClusterStore(cluster.url, prefix="mcpkit-test:")
    await store.open()
    try:
        now = time.time()
        await store.swap_many([new(OWNERS[9], f"filler-{n}", b"f" * 50) for n in range(300)], now)
        sent.clear()
        moved = asyncio.create_task(asyncio.to_thread(migrate_randomly, cluster, store._value(OWNERS[9], "b", "k")))
        await asyncio.sleep(0.05)  # the move has begun
        answers: list[object] = []
        batch = 0
        while not moved.done() or batch < 3:
            writes = [new(owner, f"n{batch}") for owner in OWNERS]
            answers.extend(await store.swap_many(writes, time.time()))
            batch += 1
        await moved
        found = [await store.get(owner, "b", f"n{n}", time.time()) for n in range(batch) for owner in OWNERS]
        fillers = [await store.get(OWNERS[9], "b", f"filler-{n}", time.time()) for n in range(300)]
    finally:
        await store.close()

    assert answers == [True] * batch * len(OWNERS)
    assert sum(sent) > batch * len(OWNERS)  # the moving slot's writes were refused, and sent again
    assert found == [Entry(b"v", None)] * batch * len(OWNERS)
    assert fillers == [Entry(b"f" * 50, None)] * 300


def test_a_refused_write_followed_in_its_slot_by_one_that_ran_is_never_sent_again() -> None:
    """Sending the refused write again would run it after a later one: the batch is reported as possibly made."""
    calls = [(["t", "m"], ["p:{g}a"]), (["t", "m"], ["p:{g}b"]), (["t", "m"], ["p:{h}c"])]
    moved = redis.exceptions.MovedError("3999 127.0.0.1:7001")
    batch = Batch(calls)
    batch.begin()
    batch.node_answered([0, 1, 2], [moved, 1, moved], None)

    failure = batch.failure("here")
    assert isinstance(failure, StoreUnavailableError)
    assert failure.maybe_applied

    alone = Batch(calls)
    alone.begin()
    alone.node_answered([0, 1, 2], [1, moved, moved], None)
    assert alone.failure("here") is moved  # refused before running, nothing after them ran: sent again
    assert alone.pending() == [1, 2]
    assert alone.made() == 1


async def test_a_write_whose_addresses_span_two_slots_is_refused_before_anything_is_sent(
    store: RedisClusterStore,
) -> None:
    moving = Write(OWNERS[7], "b", "k", None, b"v", None, ((Address(OWNERS[8], "b", "k"), None),))

    with pytest.raises(ValueError, match=r"write 2 of a RedisClusterStore.swap_many names owners of several placement"):
        await store.swap_many([new(OWNERS[7], "first"), moving], time.time())

    assert await store.get(OWNERS[7], "b", "first", time.time()) is None


def test_with_wait_a_stamp_refused_with_its_moved_slot_is_made_up_for_by_another_that_landed() -> None:
    calls = [(["t", "m"], ["p:{g}a"]), (["t", "m"], ["p:{h}b"])]
    moved = redis.exceptions.MovedError("3999 127.0.0.1:7001")
    wait = Replication(1, 100)
    landed = Batch(calls)
    landed.begin()
    landed.node_answered([0, 1], [1, 1, moved, True, 1], wait)  # two writes, two stamps, WAIT
    lost = Batch(calls)
    lost.begin()
    lost.node_answered([0, 1], [1, 1, moved, moved, 1], wait)

    assert landed.failure("here") is None
    failure = lost.failure("here")
    assert isinstance(failure, StoreUnavailableError)
    assert failure.maybe_applied
    assert "their replication could not be confirmed" in str(failure)


def _slot(store: RedisClusterStore, owner: str) -> int:
    return store._cluster_client.keyslot(store._value(owner, "b", "k"))


def _port_of(store: RedisClusterStore, owner: str) -> int:
    return int(store._cluster_client.nodes_manager.get_node_from_slot(_slot(store, owner)).port)


def _swaps_run(cluster: Cluster) -> int:
    total = 0
    for node in cluster.primaries():
        with redis.Redis(host="127.0.0.1", port=node.port) as client:
            total += int(client.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0))
    return total
