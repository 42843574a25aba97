"""Every acknowledged write outlives the server: a clean stop (SIGTERM) and a ``kill -9``, both mid-load.

Writers (several concurrent callers, two users, both eras) each write keys of their own and bump a
counter of their own. A write is *acknowledged* when its success came back to the writer before the
fault; each must be there after a restart on the same store. The one write each writer had in flight
when the server went may be there or not: the client never learnt its outcome, so either is correct.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import mcp_types
import pytest

from reliability.figures import Figures
from reliability.fleet_client import (
    ERAS,
    FLEET,
    Tally,
    call,
    connected,
    fleet_env,
    log_tracebacks,
    one_call,
    text_of,
)
from reliability.processes import ServerProcess

WRITERS = 8
USERS = ("nour", "sam")
#: Acknowledged writes (puts and increments, all writers) before the fault is injected.
WRITES_BEFORE_FAULT = 80
#: How long the writers may take to reach that many (a generous bound on a loaded machine).
LOAD_SECONDS = 30.0
READ_BATCH = 100


@dataclass
class Writer:
    """What one writer learnt: acknowledged puts and counts, and the write it had in flight at the fault."""

    number: int
    user: str
    era: str
    phase: str
    puts: dict[str, str] = field(default_factory=dict)
    counts: list[int] = field(default_factory=list)
    in_flight: tuple[str, str] | None = None  # ("put", key) or ("count", counter key)

    @property
    def counter(self) -> str:
        return f"{self.phase}-count-{self.number}"


@dataclass
class Load:
    """Writers hammering one server until it goes away."""

    url: str
    phase: str
    tally: Tally = field(default_factory=Tally)
    acknowledged: int = 0
    fault_injected: bool = False
    writers: list[Writer] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # error results (any time), exceptions before the fault

    async def write(self, writer: Writer) -> None:
        try:
            async with connected(self.url, writer.user, writer.era) as client:
                for step in range(1_000_000):
                    key = f"{writer.phase}-w{writer.number}-{step}"
                    value = f"{writer.user}:{key}"
                    writer.in_flight = ("put", key)
                    if not self._succeeded(await call(client, "put", {"key": key, "value": value})):
                        return
                    writer.puts[key] = value
                    writer.in_flight = ("count", writer.counter)
                    counted = await call(client, "count", {"key": writer.counter})
                    if not self._succeeded(counted):
                        return
                    writer.counts.append(int((counted.structured_content or {})["count"]))
                    writer.in_flight = None
                    self.acknowledged += 2
        except Exception as failure:  # the mcp client raises its transport error when the server goes away
            if not self.fault_injected:
                self.failures.append(f"writer {writer.number} before the fault: {failure!r}")

    def _succeeded(self, result: mcp_types.CallToolResult) -> bool:
        """Whether ``result`` acknowledges the write; an error result is a failure even during the fault."""
        code = self.tally.code_of(result)
        if code is not None:
            self.failures.append(f"{code}: {text_of(result)}")
        return code is None


async def load_then(fault: str, server: ServerProcess, phase: str) -> Load:
    """Run the writers against ``server``, inject ``fault`` ("stop" or "kill") mid-load, wait for them to end."""
    load = Load(server.url, phase)
    load.writers = [Writer(number, USERS[number % 2], ERAS[(number // 2) % 2], phase) for number in range(WRITERS)]
    tasks = [asyncio.create_task(load.write(writer)) for writer in load.writers]
    deadline = time.monotonic() + LOAD_SECONDS
    try:
        while load.acknowledged < WRITES_BEFORE_FAULT and not load.failures:
            assert time.monotonic() < deadline, f"{load.acknowledged} writes acknowledged in {LOAD_SECONDS}s"
            await asyncio.sleep(0.01)
    finally:
        load.fault_injected = True
        if fault == "stop":
            code = await asyncio.to_thread(server.stop)
            assert code in (0, -signal.SIGTERM), server.log()  # uvicorn re-raises the signal it handled
        else:
            await asyncio.to_thread(server.kill)
        await asyncio.gather(*tasks)
    assert not load.failures, load.failures
    return load


@dataclass
class Check:
    """The acknowledged writes of several loads, read back after a restart."""

    lost: int = 0
    counted: int = 0
    in_flight: int = 0
    in_flight_landed: int = 0


async def check(server: ServerProcess, loads: list[Load], tally: Tally) -> Check:
    """Read every writer's keys and counter through ``server``; count what is lost."""
    found = Check()
    for load in loads:
        for writer in load.writers:
            assert writer.counts == list(range(1, len(writer.counts) + 1))  # its own counter: 1, 2, 3, ...
            keys = [*writer.puts, writer.counter]
            if writer.in_flight is not None and writer.in_flight[0] == "put":
                keys.append(writer.in_flight[1])
            stored: dict[str, object] = {}
            async with connected(server.url, writer.user, writer.era) as client:
                for start in range(0, len(keys), READ_BATCH):
                    batch = keys[start : start + READ_BATCH]
                    stored |= tally.take(await call(client, "read", {"keys": batch}))["values"]
            found.lost += sum(stored[key] != value for key, value in writer.puts.items())
            acknowledged = len(writer.counts)
            counter = stored[writer.counter] or 0
            assert isinstance(counter, int)
            # An increment in flight may have landed (one more) or not; never fewer than acknowledged.
            ceiling = acknowledged + int(writer.in_flight == ("count", writer.counter))
            found.lost += max(0, acknowledged - counter)
            assert counter <= ceiling, f"{writer.counter} is {counter}, but only {ceiling} increments were sent"
            found.counted += acknowledged
            if writer.in_flight is not None:
                found.in_flight += 1
                kind, key = writer.in_flight
                landed = stored[key] is not None if kind == "put" else counter == ceiling
                found.in_flight_landed += int(landed)
    return found


@pytest.fixture(params=["sqlite", "redis"])
def store_env(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, str]:
    """The fleet server's environment on a SQLite file in tmp_path, or on the shared Redis under a fresh prefix."""
    if request.param == "sqlite":
        return fleet_env(f"sqlite:///{tmp_path / 'fleet.db'}")
    redis_url: str = request.getfixturevalue("redis_url")
    return fleet_env(redis_url, redis_prefix=request.getfixturevalue("redis_prefix"))


@pytest.fixture
def servers(tmp_path: Path, store_env: dict[str, str]) -> Iterator[list[ServerProcess]]:
    """The server processes a test starts (on one store, each on the previous one's port); all killed at the end."""
    started: list[ServerProcess] = []
    yield started
    for server in started:
        server.kill()


def start(servers: list[ServerProcess], tmp_path: Path, env: dict[str, str]) -> ServerProcess:
    port = servers[-1].port if servers else None
    server = ServerProcess(FLEET, cwd=tmp_path, env=env, port=port)
    servers.append(server)
    return server.start()


async def test_every_acknowledged_write_survives_a_clean_stop_and_a_kill_9_mid_load(
    servers: list[ServerProcess], store_env: dict[str, str], tmp_path: Path, figures: Figures
) -> None:
    began = time.monotonic()
    tally = Tally()
    first = start(servers, tmp_path, store_env)
    stopped = await load_then("stop", first, "stop")  # SIGTERM while the writers write

    second = start(servers, tmp_path, store_env)
    after_stop = await check(second, [stopped], tally)
    killed = await load_then("kill", second, "kill")  # kill -9 while the writers write

    third = start(servers, tmp_path, store_env)
    after_kill = await check(third, [killed], tally)
    stop_again = await check(third, [stopped], tally)  # and the first load's writes outlived both restarts
    assert tally.take(await one_call(third.url, "nour", ERAS[0], "ping"))["pid"] == third.pid

    loads = [stopped, killed]
    acknowledged = sum(load.acknowledged for load in loads)
    calls = tally.calls + sum(load.tally.calls for load in loads)
    internal_errors = tally.internal_errors + sum(load.tally.internal_errors for load in loads)
    internal_errors += log_tracebacks(*servers)
    store = store_env["REMEMBER_STORE"].split(":", 1)[0]
    figures.record(
        callers=WRITERS,
        calls=calls,
        faults=2,
        lost=max(after_stop.lost, stop_again.lost) + after_kill.lost,
        leaks=0,
        internal_errors=internal_errors,
        detail=(
            f"{store}: {WRITERS} writers, a SIGTERM then a kill -9 mid-load, {acknowledged} acknowledged writes "
            f"all found after restarts; of the writes in flight, {after_stop.in_flight_landed}/{after_stop.in_flight} "
            f"at the stop and {after_kill.in_flight_landed}/{after_kill.in_flight} at the kill had landed (either "
            f"is correct); {time.monotonic() - began:.1f} s."
        ),
    )
    assert after_stop.lost == 0
    assert after_kill.lost == 0
    assert stop_again.lost == 0
    assert internal_errors == 0
    assert all(load.acknowledged >= WRITES_BEFORE_FAULT for load in loads)
