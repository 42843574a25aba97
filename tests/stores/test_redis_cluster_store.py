"""The Redis Cluster store beyond the shared contract: its URL, its keyring, and what a real cluster does to it while
a slot moves (keys migrated one at a time, in random order, under a running load of writes and deletes), while its
client learns the layout again, and while a primary is replaced."""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
import time
from collections.abc import Callable

import pytest
import redis

import mcpkit_storage.stores.redis._redis_cluster_store as cluster_store
from mcpkit import ConfigurationError
from mcpkit_remember import RememberPlugin
from mcpkit_storage.sealing._keyring import Keyring
from mcpkit_storage.stores._store import Address, Postings, StoreUnavailableError
from mcpkit_storage.stores.redis._cluster_url import parse_cluster_url
from mcpkit_storage.stores.redis._redis_cluster_store import RedisClusterStore
from mcpkit_storage.vault._vault import Vault
from redis_cluster_fixtures import Cluster
from redis_fixtures import PrivateRedis
from stores.conftest import OWNER

SECRET = "cluster-test-secret-0123456789"


def test_the_url_names_nodes_credentials_and_options() -> None:
    url = parse_cluster_url("rediss+cluster://app:p%40ss?w/rd,@10.0.0.1:7000,[::1]:7001/0?wait=1&wait_timeout_ms=250")

    assert url.nodes == (("10.0.0.1", 7000), ("::1", 7001))
    assert (url.tls, url.username, url.password) == (True, "app", "p@ss?w/rd,")
    assert (url.wait, url.wait_timeout_ms) == (1, 250)
    assert url.redacted() == "rediss+cluster://app@10.0.0.1:7000,[::1]:7001?wait=1&wait_timeout_ms=250"


def test_the_url_names_the_tls_files_and_checks_as_redis_py_does() -> None:
    url = parse_cluster_url(
        "rediss+cluster://10.0.0.1:7000?ssl_cert_reqs=optional&ssl_ca_certs=/etc/ca.pem&wait=1"
        "&ssl_certfile=/etc/me.pem&ssl_keyfile=/etc/me.key"
    )

    assert url.tls_options == (
        ("ssl_ca_certs", "/etc/ca.pem"), ("ssl_certfile", "/etc/me.pem"), ("ssl_keyfile", "/etc/me.key"),
        ("ssl_cert_reqs", "optional"),
    )  # fmt: skip
    assert url.wait == 1
    assert url.redacted().endswith("?wait=1&ssl_ca_certs=/etc/ca.pem&ssl_certfile=/etc/me.pem"
                                   "&ssl_keyfile=/etc/me.key&ssl_cert_reqs=optional")  # fmt: skip
    assert parse_cluster_url("rediss+cluster://10.0.0.1:7000").tls_options == ()  # redis-py's defaults


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("redis+cluster://10.0.0.1:7000?ssl_ca_certs=/ca.pem", "ssl_ca_certs are TLS options: use rediss+cluster://"),
        ("rediss+cluster://10.0.0.1:7000?ssl_cert_reqs=maybe", "ssl_cert_reqs is one of required, optional, none"),
        ("rediss+cluster://10.0.0.1:7000?ssl_ca_certs=", "ssl_ca_certs is given once, with a value"),
        ("redis+cluster://10.0.0.1", "'10.0.0.1' is not HOST:PORT"),
        ("redis+cluster://10.0.0.1:0", "is not HOST:PORT (a port from 1 to 65535)"),
        ("redis+cluster://10.0.0.1:7000?wait", "wait is given once, as a whole number"),
        ("redis+cluster://10.0.0.1:7000?wait=1&wait=2", "wait is given once"),
        ("redis+cluster://10.0.0.1:7000?wait=\uff11", "wait is given once, as a whole number"),  # a fullwidth digit
        ("redis+cluster://10.0.0.1:7000?replicas=1", "unknown Redis Cluster option(s) ['replicas']"),
        ("redis+cluster://10.0.0.1:7000/3", "database 0 only, not /3"),
        ("redis+cluster://u:secret?x@10.0.0.1", "'10.0.0.1' is not HOST:PORT"),
    ],
)
def test_a_wrong_url_is_refused_saying_what_is_wrong_and_never_the_password(url: str, says: str) -> None:
    with pytest.raises(ValueError, match=re.escape(says)) as refused:
        parse_cluster_url(url)

    assert "secret" not in str(refused.value)


def test_a_cluster_url_given_as_type_redis_is_refused_naming_the_type() -> None:
    with pytest.raises(ConfigurationError) as refused:
        RememberPlugin.init(type="redis", url="redis+cluster://10.0.0.1:7000", secret=SECRET)

    assert "type='redis-cluster'" in str(refused.value)


def test_a_keyring_without_placement_is_refused_before_any_call() -> None:
    store = RedisClusterStore("redis+cluster://127.0.0.1:7000")

    with pytest.raises(ValueError, match=r"placed keyring, Keyring\(secrets, placed=True\)"):
        Vault(store, Keyring([SECRET]))
    Vault(store, Keyring([SECRET], placed=True))  # accepted, without connecting


def test_every_copy_of_an_identity_shares_its_placement_group_under_every_secret() -> None:
    keyring = Keyring([SECRET, "an-older-secret-0123456789"], placed=True)
    new, old = keyring.owners_for('["u","static:nour"]')

    assert new.split(".")[0] == old.split(".")[0]  # one hash slot for both copies
    assert new.split(".")[1] != old.split(".")[1]  # still keyed by each secret
    assert keyring.placed
    assert not Keyring([SECRET]).placed


async def test_scripts_wait_for_a_slot_moved_key_by_key_in_random_order_and_lose_nothing(
    make_redis_cluster: Callable[[], Cluster],
) -> None:
    cluster = make_redis_cluster()
    store = RedisClusterStore(cluster.url, prefix="mcpkit-test:")
    await store.open()
    searchable = Postings({7: 1}, 1)  # the bucket's search documents and postings exist too
    try:
        now = time.time()
        for number in range(200):
            await store.put(OWNER, "b", f"filler-{number}", b"f" * 50, None, now, index=searchable)
            await store.put(OWNER, "c", f"doomed-{number}", b"d", None, now, index=searchable)
        for number in range(40):
            await store.put(OWNER, "b", f"k{number}", b"x", None, now, index=searchable)
        moved = asyncio.create_task(asyncio.to_thread(migrate_randomly, cluster, store._value(OWNER, "b", "k0")))
        kept: set[str] = set()
        gone: set[str] = set()
        seen: list[set[str]] = []

        async def writer() -> None:  # a new key waits (TRYAGAIN) until its slot has moved
            for number in range(5):
                await store.put(OWNER, "b", f"n{number}", b"y", None, time.time(), index=searchable)
                kept.add(f"n{number}")

        async def deleter() -> None:
            for number in range(0, 40, 4):
                if await store.delete(OWNER, "b", f"k{number}", time.time()):
                    gone.add(f"k{number}")

        async def lister() -> None:
            while not moved.done():
                before = set(kept), set(gone)
                listed = {key for key, _ in await store.entries(OWNER, "b", time.time())}
                seen.append(listed if before[0] <= listed and not before[1] & listed else set())

        await asyncio.sleep(0.05)  # the move has begun
        await asyncio.gather(writer(), deleter(), lister(), store.delete_bucket(OWNER, "c", time.time()))
        await moved
        listed = {key for key, _ in await store.entries(OWNER, "b", time.time())}
        doomed = await store.get_many([Address(OWNER, "c", f"doomed-{n}") for n in range(200)], time.time())
    finally:
        await store.close()

    assert seen  # listings ran while the slot moved
    assert all(seen)  # none missed a kept key or showed a deleted one
    assert kept <= listed  # every acknowledged write is there and listed
    assert not gone & listed  # no deleted value came back
    assert doomed == [None] * 200  # the bucket deleted mid-move stays deleted


async def test_learning_the_layout_again_cuts_no_other_callers_command(
    redis_cluster: Cluster, cluster_prefix: str
) -> None:
    """redis-py's cluster client closes itself to learn the layout again (after MOVED, on CLUSTERDOWN); done under
    running writes that disconnected their connections mid-command (a write 'may have been made', or an error from
    inside redis-py). The store's client only asks for the layout at the next command."""
    store = RedisClusterStore(redis_cluster.url, prefix=cluster_prefix)
    await store.open()
    try:

        async def write(number: int) -> None:
            await store.put(OWNER, "b", f"k{number}", b"v%d" % number, None, time.time())

        async def relearn() -> None:
            for _ in range(20):
                await store._cluster_client.aclose()  # what redis-py calls on a burst of MOVED or CLUSTERDOWN
                await asyncio.sleep(0.001)

        await asyncio.gather(*(write(number) for number in range(300)), relearn())
        found = await store.get_many([Address(OWNER, "b", f"k{n}") for n in range(300)], time.time())
    finally:
        await store.close()

    assert [entry and entry.data for entry in found] == [b"v%d" % n for n in range(300)]


async def test_a_failed_or_cancelled_learning_of_the_layout_cuts_no_other_callers_command(
    redis_cluster: Cluster, cluster_prefix: str
) -> None:
    """redis-py's own ``initialize()`` closed every node's connections when learning the layout failed or was
    cancelled (a cancelled request): a command in flight on them then failed."""
    store = RedisClusterStore(redis_cluster.url, prefix=cluster_prefix)
    await store.open()
    try:
        client = store._cluster_client
        waiting = asyncio.create_task(client.blpop([f"{cluster_prefix}{{q}}"], timeout=1))  # in flight for 1 s
        await asyncio.sleep(0.2)
        await client.aclose()  # the layout is to be learnt again
        learning = asyncio.create_task(client.initialize())
        await asyncio.sleep(0)
        learning.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await learning
        answered = await waiting
        await store.put(OWNER, "b", "k", b"v", None, time.time())  # and the layout is learnt at the next call
    finally:
        await store.close()

    assert answered is None  # BLPOP's timeout, not a cut connection


async def test_a_slot_missing_from_the_clients_map_is_learnt_again(redis_cluster: Cluster, cluster_prefix: str) -> None:
    store = RedisClusterStore(redis_cluster.url, prefix=cluster_prefix)
    await store.open()
    try:
        await store.put(OWNER, "b", "k", b"v", None, time.time())
        client = store._cluster_client
        client.nodes_manager.slots_cache.pop(client.keyslot(store._value(OWNER, "b", "k")))  # a stale map

        started = time.monotonic()
        entry = await store.get(OWNER, "b", "k", time.time())
    finally:
        await store.close()

    assert entry is not None
    assert entry.data == b"v"
    assert time.monotonic() - started < cluster_store.MOVING_SECONDS / 2  # learnt at once, not waited out


async def test_calls_during_a_failover_wait_for_the_replica_instead_of_failing(
    make_redis_cluster: Callable[[], Cluster],
) -> None:
    cluster = make_redis_cluster()
    store = RedisClusterStore(cluster.url, prefix="mcpkit-test:")
    await store.open()
    try:
        await store.put(OWNER, "b", "before", b"kept", None, time.time())
        name = store._value(OWNER, "b", "before")
        with redis.Redis(host="127.0.0.1", port=_primary_of(cluster, name).port) as primary:
            assert primary.wait(1, 5000) == 1  # the replica has it
        cluster.kill(_primary_of(cluster, name))

        await asyncio.sleep(0.2)  # the dead node's idle pooled connections have seen it go
        started = time.monotonic()
        # a write first: sent on an idle connection the dead node had closed, it would be "may have been made"
        await store.put(OWNER, "b", "after", b"new", None, time.time())  # waits until the replica has taken over
        waited = time.monotonic() - started
        before = await store.get(OWNER, "b", "before", time.time())
        after = await store.get(OWNER, "b", "after", time.time())
    finally:
        await store.close()

    assert before is not None
    assert before.data == b"kept"
    assert after is not None
    assert after.data == b"new"
    assert waited > 0.5  # the replica took over meanwhile (about a second's node timeout, then an election)


async def test_a_write_to_a_frozen_primary_may_have_been_made_and_is_never_sent_again(
    make_redis_cluster: Callable[[], Cluster],
) -> None:
    """The write reached the primary's socket and no answer came (a timeout): it may run when the primary thaws,
    so it is reported at once as possibly made, and no other node is sent it (the replica that took over)."""
    cluster = make_redis_cluster()
    store = RedisClusterStore(cluster.url, prefix="mcpkit-test:")
    await store.open()
    try:
        await store.put(OWNER, "b", "k", b"before", None, time.time())
        primary = _primary_of(cluster, store._value(OWNER, "b", "k"))
        replica = cluster.replica_of(primary)
        assert replica is not None
        scripts_before = {node.port: _scripts_run(node) for node in (primary, replica)}
        primary.freeze()
        try:
            with pytest.raises(StoreUnavailableError) as refused:
                await store.put(OWNER, "b", "k", b"during", None, time.time())
        finally:
            primary.thaw()
        await asyncio.to_thread(cluster.wait_ready)
        ran = {node.port: _scripts_run(node) - scripts_before[node.port] for node in (primary, replica)}
    finally:
        await store.close()

    assert refused.value.maybe_applied
    assert ran[replica.port] == 0  # never sent a second time, to the node that took over
    assert ran[primary.port] <= 1


def _scripts_run(node: PrivateRedis) -> int:
    with redis.Redis(host="127.0.0.1", port=node.port) as client:
        return int(client.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0))


def _primary_of(cluster: Cluster, name: str) -> PrivateRedis:
    client = cluster.client()
    try:
        port = client.nodes_manager.get_node_from_slot(client.keyslot(name)).port
    finally:
        client.close()
    return next(node for node in cluster.nodes if node.port == port)


def migrate_randomly(cluster: Cluster, name: str) -> None:
    """Move the slot of ``name`` to another primary with one MIGRATE per key, in random order (as a slot whose
    keys come out in any order would move), between CLUSTER SETSLOT IMPORTING/MIGRATING and NODE."""
    client = cluster.client()
    try:
        slot = client.keyslot(name)
        source = client.nodes_manager.get_node_from_slot(slot)
        target = next(node for node in client.get_primaries() if node.name != source.name)  # type: ignore[no-untyped-call]
        with (
            redis.Redis(host=source.host, port=source.port) as from_node,
            redis.Redis(host=target.host, port=target.port) as to_node,
        ):
            source_id, target_id = from_node.execute_command("CLUSTER MYID"), to_node.execute_command("CLUSTER MYID")
            to_node.execute_command("CLUSTER SETSLOT", slot, "IMPORTING", source_id)
            from_node.execute_command("CLUSTER SETSLOT", slot, "MIGRATING", target_id)
            while keys := from_node.execute_command("CLUSTER GETKEYSINSLOT", slot, 1000):
                random.shuffle(keys)
                for key in keys:
                    from_node.execute_command("MIGRATE", target.host, target.port, "", 0, 5000, "KEYS", key)
                    time.sleep(0.002)  # let the load run between two keys
            for node in (to_node, from_node):
                node.execute_command("CLUSTER SETSLOT", slot, "NODE", target_id)
    finally:
        client.close()
