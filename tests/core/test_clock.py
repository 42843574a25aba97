"""The clock: tests move it instead of sleeping, and tools read the server's clock through ``self.clock``."""

from __future__ import annotations

import time

import pytest

from core._support import NOUR_KEY
from mcpkit import Clock, ConfigurationError, ManualClock, Server, StaticKeys, SystemClock, ToolContext, app, tool
from mcpkit.testing import CallAs

SEEN_CLOCKS: list[Clock] = []


@tool(name="now", description="What time the server thinks it is.")
class Now(ToolContext):
    async def execute(self) -> dict[str, float]:
        SEEN_CLOCKS.append(self.clock)
        return {"now": self.clock.now()}


@app(id="time", tools=[Now])
class TimeApp:
    pass


@pytest.fixture
def mcpkit_server() -> Server:
    return Server([TimeApp], auth=StaticKeys({"nour": NOUR_KEY}))


def test_a_manual_clock_stands_still_until_advanced() -> None:
    clock = ManualClock(start=1_000.0)

    assert clock.now() == 1_000.0
    assert clock.now() == 1_000.0
    assert clock.advance(90) == 1_090.0
    assert clock.now() == 1_090.0


def test_a_manual_clock_can_be_set_to_any_time() -> None:
    clock = ManualClock(start=1_000.0)

    clock.set(5.5)

    assert clock.now() == 5.5


def test_a_manual_clock_never_goes_back_through_advance() -> None:
    clock = ManualClock(start=1_000.0)

    with pytest.raises(ValueError, match="non-negative"):
        clock.advance(-1)
    assert clock.now() == 1_000.0


def test_a_manual_clock_starts_at_the_real_time_by_default() -> None:
    before = time.time()
    clock = ManualClock()

    assert before <= clock.now() <= time.time()


def test_both_clocks_are_clocks_and_the_server_defaults_to_the_system_clock() -> None:
    assert isinstance(ManualClock(), Clock)
    assert isinstance(SystemClock(), Clock)
    assert isinstance(Server([TimeApp], allow_anonymous=True).clock, SystemClock)


def test_a_server_reads_the_clock_it_was_given() -> None:
    clock = ManualClock(start=42.0)

    assert Server([TimeApp], allow_anonymous=True, clock=clock).clock is clock


async def test_a_tool_reads_the_servers_clock_and_sees_it_move(
    call_as: CallAs, clock: ManualClock, mcpkit_server: Server
) -> None:
    SEEN_CLOCKS.clear()
    start = clock.now()

    first = await call_as("nour").call("now")
    clock.advance(3_600)
    second = await call_as("nour").call("now")

    assert first == {"now": start}
    assert second == {"now": start + 3_600}
    assert mcpkit_server.clock is clock
    assert all(seen is clock for seen in SEEN_CLOCKS)


def test_a_manual_clocks_monotonic_reading_moves_with_advance_and_not_with_set() -> None:
    clock = ManualClock(start=1_000.0)
    start = clock.monotonic()

    clock.advance(90)
    clock.set(5.5)  # the wall clock corrected backwards: durations are not
    clock.set(10_000.0)

    assert clock.monotonic() == start + 90


def test_the_system_clocks_monotonic_reading_is_time_monotonic() -> None:
    before = time.monotonic()
    reading = SystemClock().monotonic()

    assert before <= reading <= time.monotonic()


def test_a_clock_without_monotonic_is_refused_when_the_server_is_built() -> None:
    class WallOnly:
        def now(self) -> float:
            return 0.0

    with pytest.raises(ConfigurationError, match=r"has no monotonic\(\): a clock needs now\(\) \(wall time"):
        Server([TimeApp], allow_anonymous=True, clock=WallOnly())  # type: ignore[arg-type]
