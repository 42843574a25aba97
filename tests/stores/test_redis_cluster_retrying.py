"""Which failures the Redis Cluster store tries again, and what it says of the others — without a cluster: an
attempt that fails as redis-py would, then succeeds. Only what certainly did not run is tried again; a write
that may have run is reported at once as possibly made."""

from __future__ import annotations

from typing import Any

import pytest
from redis import exceptions as redis_errors

import mcpkit_storage.stores.redis._redis_cluster_store as cluster_store
from mcpkit_storage.stores._store import StoreUnavailableError
from mcpkit_storage.stores.redis._redis_cluster_store import RedisClusterStore

CONNECT_FAILED = redis_errors.ConnectionError("Error 111 connecting to 127.0.0.1:7000. Connection refused.")
REPLY_LOST = redis_errors.ConnectionError("Connection closed by server.")

UNREACHABLE = redis_errors.RedisClusterException("Redis Cluster cannot be connected. Please provide a reachable node")

#: (failure, writing, tried again, layout learnt again before the next try, else: "may have been made")
CASES = [
    (redis_errors.TryAgainError("TRYAGAIN Multiple keys request during rehashing of slot"), True, True, False, None),
    (redis_errors.AskError("3999 127.0.0.1:7001"), True, True, False, None),
    (redis_errors.MovedError("3999 127.0.0.1:7001"), True, True, True, None),
    (redis_errors.ClusterDownError("CLUSTERDOWN The cluster is down"), True, True, True, None),
    (redis_errors.ClusterError("TTL exhausted."), True, True, True, None),
    (redis_errors.SlotNotCoveredError('Slot "3999" not covered by the cluster.'), True, True, True, None),
    (redis_errors.ReadOnlyError("You can't write against a read only replica."), True, True, True, None),
    (redis_errors.MaxConnectionsError("Too many connections"), True, True, False, None),
    (CONNECT_FAILED, True, True, True, None),
    (REPLY_LOST, True, False, False, True),
    (REPLY_LOST, False, True, True, None),
    (redis_errors.TimeoutError("Timeout reading from 127.0.0.1:7000"), True, False, False, True),
    (redis_errors.TimeoutError("Timeout reading from 127.0.0.1:7000"), False, True, True, None),
    (UNREACHABLE, False, True, True, None),
    (redis_errors.RedisClusterException("EVALSHA - all keys must map to the same key slot"), True, False, False, False),
    (redis_errors.AuthenticationError("invalid username-password pair"), False, False, False, False),
    (redis_errors.OutOfMemoryError("OOM command not allowed"), True, False, False, True),  # mid-script: some ran
]


class FakeClient:
    def __init__(self) -> None:
        self.relearnt = 0

    async def aclose(self) -> None:  # ClusterClient.aclose: learn the layout at the next command
        self.relearnt += 1


@pytest.mark.parametrize(("failure", "writing", "again", "relearn", "maybe"), CASES)
async def test_only_what_certainly_did_not_run_is_tried_again(
    failure: Exception, writing: bool, again: bool, relearn: bool, maybe: bool | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cluster_store, "PAUSE_SECONDS", 0.001)
    store = RedisClusterStore("redis+cluster://127.0.0.1:7000")
    client = FakeClient()
    store._cluster = client  # type: ignore[assignment]
    attempts: list[int] = []

    async def attempt() -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise failure
        return "done"

    outcome: Any
    try:
        outcome = await store._retrying(attempt, writing=writing)
    except StoreUnavailableError as refused:
        outcome = refused

    if again:
        assert outcome == "done"
        assert len(attempts) == 2
    else:
        assert isinstance(outcome, StoreUnavailableError)
        assert len(attempts) == 1  # never sent a second time
        assert outcome.maybe_applied is maybe
    assert client.relearnt == (1 if relearn else 0)


async def test_a_slot_that_keeps_moving_is_given_up_after_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster_store, "MOVING_SECONDS", 0.05)
    monkeypatch.setattr(cluster_store, "PAUSE_SECONDS", 0.01)
    store = RedisClusterStore("redis+cluster://127.0.0.1:7000")
    store._cluster = FakeClient()  # type: ignore[assignment]

    async def attempt() -> None:
        raise redis_errors.TryAgainError("TRYAGAIN")

    with pytest.raises(StoreUnavailableError) as refused:
        await store._retrying(attempt, writing=True)

    assert not refused.value.maybe_applied  # refused before it started, every time
