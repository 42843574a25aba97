"""Redis fails under load: calls that need it fail fast and cleanly, the rest keep working, and it all recovers.

A fleet server process runs on a private ``redis-server``; callers hammer tools that remember (put,
count, read) and one that does not (ping), and the server is never restarted. Two faults:

- the redis-server is killed (``kill -9``, by its PID), then started again on the same port. The private
  Redis keeps nothing on disk, so what was stored before is gone with it by design; what is checked for
  loss is every write acknowledged after the recovery;
- the redis-server is frozen (SIGSTOP: connections stay open, nothing answers), then thawed. Writes the
  server gave up on may still be sitting in Redis' socket buffers and run at the thaw, so a refusal may
  only promise "nothing was changed" when that is true.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from mcpkit_storage.stores.redis._redis_store import TIMEOUT_SECONDS
from redis_fixtures import PrivateRedis
from reliability.figures import Figures
from reliability.fleet_client import ERAS, FLEET, Tally, call, connected, fleet_env, log_tracebacks, text_of
from reliability.processes import ServerProcess, serving

STORE_CALLERS = 6
PING_CALLERS = 2
USERS = ("nour", "sam")
#: Results each caller must have seen in a phase before the test moves on.
PER_PHASE = 5
#: Refusals each store caller must have seen while Redis is frozen (each takes the store's socket timeout).
PER_FREEZE = 2
#: Freezes at most. Only a command in flight when Redis stops can be a write already sent: a store caller's next
#: call stops at its first read (a put or a count reads the key's change history first), or at its connection. So
#: one freeze catches a sent write about half the time, and the test freezes again until one has.
MAX_FREEZES = 10
#: How long a phase may take to gather them (generous: the machine is shared).
PHASE_SECONDS = 30.0
#: The slowest refusal allowed. Its floor is the Redis store's socket timeout (TIMEOUT_SECONDS), twice over
#: when a health-check PING on an idle connection times out before the command does; 6 s more absorb a
#: loaded, shared machine (two processes and a scheduler between the call and its answer).
UNAVAILABLE_BOUND_SECONDS = 2 * TIMEOUT_SECONDS + 6
UNAVAILABLE = "REMEMBER_STORE_UNAVAILABLE"
#: Between two pings of one ping caller (the store callers do not pause).
PING_PAUSE = 0.01
#: What a refusal says when it promises that the call changed nothing (reads, and writes never sent).
NOTHING_CHANGED = "nothing was read or changed"
#: What a refused write says when it was sent and may have run (a timeout, a connection dropped under it).
MAYBE_CHANGED = "may or may not have been made"


@dataclass
class Outcome:
    """One call: who made it, what it asked, when, and what came back (code None: success)."""

    caller: int
    user: str
    tool: str
    key: str
    value: str
    started: float
    ended: float
    code: str | None
    text: str
    answer: Any = None  # what a successful count returned, or the value a successful read found

    @property
    def seconds(self) -> float:
        return self.ended - self.started


@dataclass
class Traffic:
    """Callers calling until told to stop; every outcome kept."""

    url: str
    epoch: str = "before"  # part of each counter's key, so a test can start counters afresh
    tally: Tally = field(default_factory=Tally)
    outcomes: list[Outcome] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # exceptions: transport errors, HTTP 5xx, hangs
    done: asyncio.Event = field(default_factory=asyncio.Event)

    async def caller(self, number: int, remembers: bool) -> None:
        user, era = USERS[number % 2], ERAS[(number // 2) % 2]
        try:
            async with connected(self.url, user, era) as client:
                for step in range(1_000_000):
                    if self.done.is_set():
                        return
                    started = time.monotonic()
                    key, value = "", ""
                    arguments: dict[str, Any] = {}
                    if not remembers:
                        name = "ping"
                        await asyncio.sleep(PING_PAUSE)  # pace them: they only show that the server answers
                        started = time.monotonic()
                    elif step % 4 in (0, 2):  # half of the calls write: a freeze most likely catches one
                        name, key, value = "put", f"put-{number}-{step}", f"{user}-{step}"
                        arguments = {"key": key, "value": value}
                    elif step % 4 == 1:
                        name, key = "count", f"count-{number}-{self.epoch}"
                        arguments = {"key": key}
                    else:
                        name, key = "read", f"put-{number}-{step - 1}"
                        arguments = {"keys": [key]}
                    result = await call(client, name, arguments)
                    code = self.tally.code_of(result)
                    answer = None
                    if code is None and name == "count":
                        answer = (result.structured_content or {})["count"]
                    elif code is None and name == "read":
                        answer = (result.structured_content or {})["values"][key]
                    ended = time.monotonic()
                    self.outcomes.append(
                        Outcome(number, user, name, key, value, started, ended, code, text_of(result), answer)
                    )
        except Exception as failure:
            self.failures.append(f"caller {number}: {failure!r}")

    def seen(self, callers: range, since: float, *, succeeded: bool = False) -> int:
        """The fewest outcomes any of ``callers`` has had since ``since`` (only successes if asked)."""
        seen = dict.fromkeys(callers, 0)
        for outcome in self.outcomes:
            if outcome.caller in seen and outcome.started >= since and (outcome.code is None or not succeeded):
                seen[outcome.caller] += 1
        return min(seen.values())

    async def until(self, condition: Callable[[], bool], what: str) -> None:
        """Poll ``condition`` until it holds; fail naming ``what`` (and any caller failures) after PHASE_SECONDS."""
        deadline = time.monotonic() + PHASE_SECONDS
        while not condition():
            if self.failures or time.monotonic() > deadline:
                pytest.fail(f"{what} did not happen within {PHASE_SECONDS}s; caller failures: {self.failures}")
            await asyncio.sleep(0.02)


def misread(outcomes: list[Outcome], since: float) -> tuple[int, int, int]:
    """Reads that contradict the put (started after ``since``) before them: (lost, leaked, broken promises).

    A read after an acknowledged put must find its value, one after a put refused with "nothing
    changed" must find nothing, and none may ever find another user's value.
    """
    puts = {(o.caller, o.key): o for o in outcomes if o.tool == "put" and o.started >= since}
    lost = leaked = broken = 0
    for read in outcomes:
        put = puts.get((read.caller, read.key))
        if read.tool != "read" or read.code is not None or put is None or put.ended > read.started:
            continue
        if read.answer is not None and not str(read.answer).startswith(f"{read.user}-"):
            leaked += 1
        elif put.code is None and read.answer != put.value:
            lost += 1
        elif put.code is not None and NOTHING_CHANGED in put.text and read.answer is not None:
            broken += 1
    return lost, leaked, broken


STORE = range(STORE_CALLERS)
PINGS = range(STORE_CALLERS, STORE_CALLERS + PING_CALLERS)


def start_traffic(traffic: Traffic) -> list[asyncio.Task[None]]:
    return [asyncio.create_task(traffic.caller(number, number in STORE)) for number in (*STORE, *PINGS)]


async def read_back(url: str, keys: dict[str, set[str]], tally: Tally) -> dict[tuple[str, str], Any]:
    """The stored value of each (user, key), read through the server."""
    stored: dict[tuple[str, str], Any] = {}
    for user, names in keys.items():
        async with connected(url, user, ERAS[0]) as client:
            values = tally.take(await call(client, "read", {"keys": sorted(names)}))["values"]
        stored |= {(user, name): value for name, value in values.items()}
    return stored


@pytest.fixture
def fleet_on_private_redis(private_redis: PrivateRedis, tmp_path: Path) -> Iterator[ServerProcess]:
    with serving(FLEET, cwd=tmp_path, env=fleet_env(private_redis.url, redis_prefix="fleet:")) as server:
        yield server


async def test_a_redis_outage_gives_store_unavailable_fast_and_recovers_without_a_restart(
    fleet_on_private_redis: ServerProcess, private_redis: PrivateRedis, figures: Figures
) -> None:
    server = fleet_on_private_redis
    traffic = Traffic(server.url)
    tasks = start_traffic(traffic)
    try:
        await traffic.until(lambda: traffic.seen(STORE, 0, succeeded=True) >= PER_PHASE, "load on a healthy Redis")

        os.kill(private_redis.pid, signal.SIGKILL)  # kill -9 mid-load
        await asyncio.to_thread(private_redis.stop)  # reaps it: from here on, nothing listens on its port
        down_from = time.monotonic()
        await traffic.until(
            lambda: (
                traffic.seen(STORE, down_from) >= PER_PHASE
                and traffic.seen(PINGS, down_from, succeeded=True) >= PER_PHASE
            ),
            "calls during the outage",
        )

        restart_at = time.monotonic()
        await asyncio.to_thread(private_redis.start)  # the same port; returns once it answers PING
        up_from, traffic.epoch = time.monotonic(), "after"
        await traffic.until(lambda: traffic.seen(STORE, up_from) >= PER_PHASE, "calls after Redis came back")
    finally:
        traffic.done.set()
        await asyncio.gather(*tasks)
    alive = server.alive()

    # Every write acknowledged after the recovery is there, read back through the same server.
    after = [outcome for outcome in traffic.outcomes if outcome.tool != "ping" and outcome.started >= up_from]
    puts = {(o.user, o.key): o.value for o in after if o.tool == "put" and o.code is None}
    counts: dict[tuple[str, str], list[int | None]] = {}
    for outcome in after:
        if outcome.tool == "count" and outcome.code is None:
            counts.setdefault((outcome.user, outcome.key), []).append(outcome.answer)
    check = Tally()
    wanted: dict[str, set[str]] = {user: set() for user in USERS}
    for user, key in [*puts, *counts]:
        wanted[user].add(key)
    stored = await read_back(server.url, wanted, check)
    lost, leaks, broken_promises = misread(traffic.outcomes, up_from)
    lost += sum(stored[place] != value for place, value in puts.items())
    lost += sum(
        returned != list(range(1, len(returned) + 1)) or stored[place] != len(returned)
        for place, returned in counts.items()
    )

    store_outcomes = [outcome for outcome in traffic.outcomes if outcome.tool != "ping"]
    refused = [outcome for outcome in store_outcomes if outcome.code == UNAVAILABLE]
    during = [outcome for outcome in store_outcomes if outcome.started >= down_from and outcome.ended <= restart_at]
    pings = [outcome for outcome in traffic.outcomes if outcome.tool == "ping"]
    pings_during = [outcome for outcome in pings if down_from <= outcome.started and outcome.ended <= restart_at]
    worst = max((outcome.seconds for outcome in refused), default=0.0)
    other_codes = {outcome.code for outcome in traffic.outcomes if outcome.code not in (None, UNAVAILABLE)}
    internal_errors = traffic.tally.internal_errors + check.internal_errors + len(traffic.failures)
    internal_errors += log_tracebacks(server)
    figures.attach("worst_unavailable_seconds", round(worst, 3))
    figures.record(
        callers=STORE_CALLERS + PING_CALLERS,
        calls=traffic.tally.calls + check.calls,
        faults=1,
        lost=lost,
        leaks=leaks,
        internal_errors=internal_errors,
        detail=(
            f"kill -9 of redis-server under {STORE_CALLERS} store callers and {PING_CALLERS} ping callers: "
            f"{len(refused)} calls refused with {UNAVAILABLE} (worst {worst * 1000:.0f} ms), "
            f"{len(pings_during)} pings answered during the outage; once Redis was back every call succeeded "
            "and nothing acknowledged was lost, without restarting the server."
        ),
    )
    assert traffic.failures == []  # no hang, no HTTP error, no broken connection
    assert other_codes == set()  # never INTERNAL_ERROR, nor anything but store-unavailable
    assert internal_errors == 0
    assert alive, server.log()
    assert len(during) >= STORE_CALLERS * PER_PHASE
    assert {outcome.code for outcome in during} == {UNAVAILABLE}  # no call that needs Redis got through
    # A read changes nothing, so it never says "may or may not"; a write says either, depending on whether
    # it was sent on a connection the kill then dropped, or no connection could be made.
    assert all(
        NOTHING_CHANGED in outcome.text and MAYBE_CHANGED not in outcome.text
        for outcome in during
        if outcome.tool == "read"
    )
    assert all(NOTHING_CHANGED in outcome.text or MAYBE_CHANGED in outcome.text for outcome in during)
    assert worst < UNAVAILABLE_BOUND_SECONDS
    assert all("127.0.0.1" not in outcome.text and "Traceback" not in outcome.text for outcome in refused)
    assert [outcome.code for outcome in pings] == [None] * len(pings)  # ping never needed Redis
    assert len(after) >= STORE_CALLERS * PER_PHASE
    assert {outcome.code for outcome in after} == {None}  # recovered by itself
    assert lost == 0
    assert leaks == 0
    assert broken_promises == 0


async def freeze_once(traffic: Traffic, private_redis: PrivateRedis) -> tuple[float, float]:
    """Freeze Redis until every store caller has been refused, thaw it, and wait until they all succeed again."""
    private_redis.freeze()
    try:
        frozen_from = time.monotonic()
        await traffic.until(
            lambda: (
                traffic.seen(STORE, frozen_from) >= PER_FREEZE
                and traffic.seen(PINGS, frozen_from, succeeded=True) >= PER_PHASE
            ),
            "calls while Redis is frozen",
        )
    finally:
        private_redis.thaw()
    thawed_at = time.monotonic()
    await traffic.until(lambda: traffic.seen(STORE, thawed_at, succeeded=True) >= PER_PHASE, "calls after the thaw")
    return frozen_from, thawed_at


async def test_a_frozen_redis_gives_store_unavailable_in_bounded_time_and_promises_only_what_is_true(
    fleet_on_private_redis: ServerProcess, private_redis: PrivateRedis, figures: Figures
) -> None:
    server = fleet_on_private_redis
    traffic = Traffic(server.url)
    tasks = start_traffic(traffic)
    freezes: list[tuple[float, float]] = []  # (frozen from, thawed at)
    try:
        await traffic.until(lambda: traffic.seen(STORE, 0, succeeded=True) >= PER_PHASE, "load on a healthy Redis")
        while len(freezes) < MAX_FREEZES and not any(MAYBE_CHANGED in o.text for o in traffic.outcomes):
            freezes.append(await freeze_once(traffic, private_redis))
    finally:
        traffic.done.set()
        await asyncio.gather(*tasks)
    alive = server.alive()

    store_outcomes = [outcome for outcome in traffic.outcomes if outcome.tool in ("put", "count")]
    check = Tally()
    wanted: dict[str, set[str]] = {user: set() for user in USERS}
    for outcome in store_outcomes:
        wanted[outcome.user].add(outcome.key)
    stored = await read_back(server.url, wanted, check)

    # A put refused with "nothing changed" must not be there, in the end or when read back meanwhile; an
    # acknowledged one must.
    lost, leaks, broken_promises = misread(traffic.outcomes, 0)
    broken_promises += sum(
        stored[(o.user, o.key)] is not None
        for o in store_outcomes
        if o.tool == "put" and o.code == UNAVAILABLE and NOTHING_CHANGED in o.text
    )
    lost += sum(stored[(o.user, o.key)] != o.value for o in store_outcomes if o.tool == "put" and o.code is None)
    # A counter holds its acknowledged increments, plus any refused ones that ran after all: only those
    # refused without the promise may have.
    unsure_landed = 0
    for place in {(o.user, o.key) for o in store_outcomes if o.tool == "count"}:
        mine = [o for o in store_outcomes if (o.user, o.key) == place]
        acknowledged = sum(o.code is None for o in mine)
        unsure = sum(o.code == UNAVAILABLE and NOTHING_CHANGED not in o.text for o in mine)
        extra = (stored[place] or 0) - acknowledged
        lost += max(0, -extra)
        broken_promises += max(0, extra - unsure)
        unsure_landed += max(0, min(extra, unsure))
    unsure_landed += sum(
        stored[(o.user, o.key)] is not None
        for o in store_outcomes
        if o.tool == "put" and o.code == UNAVAILABLE and NOTHING_CHANGED not in o.text
    )

    refused = [outcome for outcome in traffic.outcomes if outcome.code == UNAVAILABLE]
    unsure = sum(MAYBE_CHANGED in outcome.text for outcome in refused)
    pings = [outcome for outcome in traffic.outcomes if outcome.tool == "ping"]
    pings_frozen = [o for o in pings if any(start <= o.started and o.ended <= end for start, end in freezes)]
    worst = max((outcome.seconds for outcome in refused), default=0.0)
    other_codes = {outcome.code for outcome in traffic.outcomes if outcome.code not in (None, UNAVAILABLE)}
    internal_errors = traffic.tally.internal_errors + check.internal_errors + len(traffic.failures)
    internal_errors += log_tracebacks(server)
    figures.attach("worst_unavailable_seconds", round(worst, 3))
    figures.record(
        callers=STORE_CALLERS + PING_CALLERS,
        calls=traffic.tally.calls + check.calls,
        faults=1,
        lost=lost,
        leaks=leaks,
        internal_errors=internal_errors,
        detail=(
            f"redis-server frozen (SIGSTOP) under load: {len(refused)} calls refused with {UNAVAILABLE} "
            f"(worst {worst * 1000:.0f} ms), {len(pings_frozen)} pings answered meanwhile; {unsure} writes were "
            f"refused as 'may or may not have been made' and {unsure_landed} of them ran at the thaw; "
            f"{broken_promises} refusals said 'nothing changed' wrongly."
        ),
    )
    assert traffic.failures == []
    assert other_codes == set()
    assert internal_errors == 0
    assert alive, server.log()
    assert len(refused) >= STORE_CALLERS * PER_FREEZE
    assert unsure >= 1  # a write the freeze caught was sent: it must not promise that nothing changed
    assert not any(MAYBE_CHANGED in outcome.text for outcome in refused if outcome.tool == "read")
    assert worst < UNAVAILABLE_BOUND_SECONDS
    assert [outcome.code for outcome in pings] == [None] * len(pings)  # ping never needed Redis
    assert broken_promises == 0  # "nothing was read or changed" was true every time it was said
    assert lost == 0
    assert leaks == 0
