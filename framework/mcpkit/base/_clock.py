"""The clock the framework and its plugins read time from, so tests can move it.

Two readings: ``now()`` is wall time (seconds since the Unix epoch), for deadlines that outlive the
process or are compared with other machines (a remembered value's ttl, a token's ``exp``);
``monotonic()`` only ever moves forward at the pace of real time, for durations inside the process (a
session's idle time, a handshake's deadline), so a wall clock set back or forward by NTP or an operator
neither ends every session at once nor keeps one forever. A wall time a model reads is written by ``iso_time``.
"""

from __future__ import annotations

import datetime
import time
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "ManualClock", "SystemClock", "iso_time"]


@runtime_checkable
class Clock(Protocol):
    """Anything with ``now()`` (seconds since the Unix epoch) and ``monotonic()`` (seconds, never going back)."""

    def now(self) -> float: ...

    def monotonic(self) -> float: ...


class SystemClock:
    """The real clocks: ``time.time`` and ``time.monotonic``."""

    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    def __repr__(self) -> str:
        return "SystemClock()"


class ManualClock:
    """A clock that only moves when told to; tests use it instead of sleeping.

    It starts at the real time by default, so deadlines handed to real services
    (such as Redis expiry) still land in the future. ``advance()`` moves both readings;
    ``set()`` moves only the wall time, as when a machine's clock is corrected.
    """

    def __init__(self, start: float | None = None) -> None:
        self._now = time.time() if start is None else float(start)
        self._monotonic = 0.0

    def now(self) -> float:
        return self._now

    def monotonic(self) -> float:
        return self._monotonic

    def advance(self, seconds: float) -> float:
        """Move the clock forward by ``seconds`` and return the new (wall) time."""
        if seconds < 0:
            raise ValueError(f"ManualClock.advance() takes a non-negative number of seconds, got {seconds!r}")
        self._now += seconds
        self._monotonic += seconds
        return self._now

    def set(self, timestamp: float) -> None:
        """Put the wall clock at ``timestamp`` (seconds since the epoch); ``monotonic()`` does not move."""
        self._now = float(timestamp)

    def __repr__(self) -> str:
        return f"ManualClock(now={self._now!r})"


def iso_time(seconds: float) -> str:
    """A wall time (seconds since the epoch) as a model reads it: ISO 8601 in UTC to the millisecond, like
    ``2026-12-01T09:30:00.000Z``, the form of task times; every mcpkit tool and demo writes its times so."""
    moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
