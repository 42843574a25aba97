"""A real Redis Cluster under load (issue 14): three ``mcpkit run`` instances on one cluster of three primaries and
three replicas, while callers increment, set and list through all of them in turn —

- resharding: every slot of the primary that holds the callers' data moves to another (``redis-cli --cluster
  reshard``), without and with ``wait=1``: no acknowledged write lost, no forgotten value back, no listing that
  misses an acknowledged key;
- failover: that primary is killed (``kill -9``) and its replica takes over, without and with ``wait=1``;
  replication is asynchronous, so without ``wait`` an acknowledged write may be lost: measured, not assumed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis

from redis_cluster_fixtures import Cluster, slots_of
from redis_fixtures import PrivateRedis
from reliability.figures import Figures
from reliability.fleet_client import FLEET, Tally, fleet_env, log_tracebacks, one_call
from reliability.processes import ServerProcess

INSTANCES = 3
#: Callers per user: each keeps a counter and a value of its own, and lists its keys.
CALLERS_PER_USER = 3
USERS = ("nour", "sam")
WARM_UP_OPERATIONS = 8
#: Values each user keeps before the load: thousands of keys in each of the two hash slots, so a reshard
#: moves one owner's keys in many MIGRATE batches (100 keys each) while its scripts keep running.
FILL = 3000
AFTER_SECONDS = 2.0


@dataclass
class Caller:
    """One caller's own counter and value, what it was told, and how many of its writes failed."""

    user: str
    number: int
    counted: int = 0  # acknowledged increments
    set_to: int = -1  # the last acknowledged value
    tried: int = -1  # the last value it tried to set
    failed_counts: int = 0
    operations: int = 0
    short_listings: int = 0  # listings that missed a key this caller had been told was kept
    dropped: bool = False  # the last forget of its temporary key was acknowledged (and no put came after)

    @property
    def counter(self) -> str:
        return f"c-{self.number}"

    @property
    def value(self) -> str:
        return f"v-{self.number}"

    @property
    def temporary(self) -> str:
        return f"t-{self.number}"


@dataclass
class Load:
    """Callers going round the instances until ``stop``; errors by code and by exception."""

    urls: list[str]
    callers: list[Caller] = field(default_factory=list)
    tally: Tally = field(default_factory=Tally)
    exceptions: dict[str, int] = field(default_factory=dict)
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    warm: asyncio.Event = field(default_factory=asyncio.Event)  # every caller made WARM_UP_OPERATIONS

    async def run(self, caller: Caller) -> None:
        turn = caller.number
        while not self.stop.is_set():
            turn += 1
            url = self.urls[turn % len(self.urls)]
            step = turn % 4
            try:
                if step == 0:
                    result = await one_call(url, caller.user, "2026-07-28", "count", {"key": caller.counter})
                    if self.tally.code_of(result) is None:
                        caller.counted += 1
                    else:
                        caller.failed_counts += 1
                elif step == 1:
                    caller.tried += 1
                    wanted = caller.tried
                    arguments = {"key": caller.value, "value": str(wanted)}
                    result = await one_call(url, caller.user, "2026-07-28", "put", arguments)
                    if self.tally.code_of(result) is None:
                        caller.set_to = wanted
                elif step == 3:  # keep a value and forget it: a forget acknowledged must stay forgotten
                    caller.dropped = False
                    arguments = {"key": caller.temporary, "value": "temporary"}
                    result = await one_call(url, caller.user, "2026-07-28", "put", arguments)
                    if self.tally.code_of(result) is None:
                        result = await one_call(url, caller.user, "2026-07-28", "drop", {"key": caller.temporary})
                        caller.dropped = self.tally.code_of(result) is None
                else:
                    told = {caller.counter} if caller.counted else set()
                    told |= {caller.value} if caller.set_to >= 0 else set()
                    result = await one_call(url, caller.user, "2026-07-28", "keys", {"pattern": f"?-{caller.number}"})
                    if self.tally.code_of(result) is None:
                        listed = set((result.structured_content or {}).get("keys", []))
                        caller.short_listings += not told <= listed
            except Exception as exc:  # a transport failure: the call may or may not have been made
                name = type(exc).__name__
                self.exceptions[name] = self.exceptions.get(name, 0) + 1
                caller.failed_counts += step == 0
                caller.dropped = caller.dropped and step != 3
                await asyncio.sleep(0.05)
                continue
            caller.operations += 1
            if min(c.operations for c in self.callers) >= WARM_UP_OPERATIONS:
                self.warm.set()

    def errors(self) -> str:
        counted = {**self.tally.codes, **self.exceptions}
        return ", ".join(f"{name} {count}" for name, count in sorted(counted.items())) or "none"


@dataclass
class Outcome:
    calls: int
    lost_counts: int
    lost_values: int
    resurrected: int
    short_listings: int
    over_counted: int
    errors: str


async def finish(load: Load, tasks: list[asyncio.Task[None]]) -> Outcome:
    """Stop the callers, wait for their last calls, then read every counter and value back."""
    load.stop.set()
    await asyncio.gather(*tasks)  # a call still in flight would be counted by the store and not yet by its caller
    lost_counts = lost_values = over = resurrected = 0
    for caller in load.callers:
        keys = [caller.counter, caller.value, caller.temporary]
        result = await one_call(load.urls[0], caller.user, "2026-07-28", "read", {"keys": keys})
        values = Tally().take(result)["values"]
        final = values[caller.counter] or 0
        lost_counts += max(0, caller.counted - final)
        over += max(0, final - caller.counted - caller.failed_counts)
        kept = values[caller.value]
        if caller.set_to >= 0 and (kept is None or int(kept) < caller.set_to):
            lost_values += 1
        resurrected += caller.dropped and values[caller.temporary] is not None
    return Outcome(
        calls=load.tally.calls + sum(load.exceptions.values()),
        lost_counts=lost_counts,
        lost_values=lost_values,
        resurrected=resurrected,
        short_listings=sum(c.short_listings for c in load.callers),
        over_counted=over,
        errors=load.errors(),
    )


@pytest.fixture
def instances(
    make_redis_cluster: Callable[[], Cluster], tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[tuple[Cluster, list[ServerProcess]]]:
    cluster = make_redis_cluster()
    url = cluster.url + getattr(request, "param", "")
    servers = [ServerProcess(FLEET, cwd=tmp_path, env=fleet_env(url)) for _ in range(INSTANCES)]
    with ThreadPoolExecutor(INSTANCES) as pool:
        list(pool.map(ServerProcess.start, servers))
    try:
        yield cluster, servers
    finally:
        for server in servers:
            server.kill()


async def started(servers: list[ServerProcess]) -> tuple[Load, list[asyncio.Task[None]]]:
    load = Load([server.url for server in servers])
    for user in USERS:  # in calls of 100 sets, each well within CALL_SECONDS (a set writes its change history too)
        for start in range(0, FILL, 100):
            Tally().take(await one_call(load.urls[0], user, "2026-07-28", "fill", {"count": 100, "start": start}))
    number = 0
    for user in USERS:
        for _ in range(CALLERS_PER_USER):
            load.callers.append(Caller(user, number))
            number += 1
    tasks = [asyncio.create_task(load.run(caller)) for caller in load.callers]
    async with asyncio.timeout(60):
        await load.warm.wait()
    return load, tasks


def holder(cluster: Cluster) -> PrivateRedis:
    """The primary holding the most keys (the two users' data lives in two hash slots, on one or two primaries)."""
    counts = {}
    for node in cluster.primaries():
        with redis.Redis(host="127.0.0.1", port=node.port) as client:
            counts[node.port] = (int(client.dbsize()), node)
    return max(counts.values(), key=lambda pair: pair[0])[1]


@pytest.mark.parametrize("instances", ["", "?wait=1"], indirect=True, ids=["async-replication", "wait-1"])
async def test_resharding_every_slot_of_the_busy_primary_under_load_loses_nothing(
    instances: tuple[Cluster, list[ServerProcess]], figures: Figures, request: pytest.FixtureRequest
) -> None:
    cluster, servers = instances
    waiting = " with wait=1" if "wait-1" in request.node.name else ""
    load, tasks = await started(servers)
    source = holder(cluster)
    target = next(node for node in cluster.primaries() if node is not source)
    moving = slots_of(source)
    began = time.monotonic()
    await asyncio.to_thread(cluster.reshard, source, target, moving)
    took = time.monotonic() - began
    await asyncio.sleep(AFTER_SECONDS)
    outcome = await finish(load, tasks)

    internal = load.tally.internal_errors + log_tracebacks(*servers)
    figures.record(
        callers=len(load.callers),
        calls=outcome.calls,
        faults=1,
        lost=outcome.lost_counts + outcome.lost_values,
        leaks=0,
        internal_errors=internal,
        detail=(
            f"Redis Cluster (3 primaries + 3 replicas){waiting}, {INSTANCES} instances: redis-cli --cluster reshard "
            f"moved all {moving} slots of the primary holding most of the callers' data ({FILL} values each, in "
            f"100-key batches) in {took:.1f} s under {len(load.callers)} callers incrementing, setting, forgetting "
            f"and listing; {outcome.calls} calls, errors: {outcome.errors}; acknowledged writes lost: "
            f"{outcome.lost_counts + outcome.lost_values}; forgotten values back: {outcome.resurrected}; listings "
            f"missing an acknowledged key: {outcome.short_listings}."
        ),
    )
    assert slots_of(source) == 0  # the reshard really moved everything
    assert (outcome.lost_counts, outcome.lost_values, outcome.resurrected) == (0, 0, 0)
    assert (outcome.short_listings, outcome.over_counted) == (0, 0)
    assert internal == 0


@pytest.mark.parametrize("instances", ["", "?wait=1"], indirect=True, ids=["async-replication", "wait-1"])
async def test_failover_of_the_busy_primary_under_load(
    instances: tuple[Cluster, list[ServerProcess]], figures: Figures, request: pytest.FixtureRequest
) -> None:
    cluster, servers = instances
    waiting = "wait-1" in request.node.name
    load, tasks = await started(servers)
    victim = holder(cluster)
    replica = cluster.replica_of(victim)
    assert replica is not None
    killed = time.monotonic()
    cluster.kill(victim)
    await asyncio.to_thread(cluster.wait_ready)
    promoted = time.monotonic() - killed
    await asyncio.sleep(AFTER_SECONDS)
    outcome = await finish(load, tasks)

    internal = load.tally.internal_errors + log_tracebacks(*servers)
    lost = outcome.lost_counts + outcome.lost_values
    figures.record(
        callers=len(load.callers),
        calls=outcome.calls,
        faults=1,
        lost=lost,
        leaks=0,
        internal_errors=internal,
        detail=(
            f"Redis Cluster failover{' with wait=1' if waiting else ' (asynchronous replication)'}: kill -9 of the "
            f"primary holding most of the callers' data under {len(load.callers)} callers over {INSTANCES} "
            f"instances; its replica served again after {promoted:.1f} s; {outcome.calls} calls, errors: "
            f"{outcome.errors}; acknowledged writes lost: {lost}; forgotten values back: {outcome.resurrected}."
        ),
    )
    assert internal == 0
    assert outcome.over_counted == 0  # nothing counted that nobody asked for
    assert outcome.short_listings == 0 or not waiting  # without wait a lost write may be missing from a list too
    if waiting:
        assert lost == 0  # every acknowledged write had reached the replica that took over
        assert outcome.resurrected == 0  # and every acknowledged forget
