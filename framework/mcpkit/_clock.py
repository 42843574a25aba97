"""The clock the framework and its plugins read time from, so tests can move it."""

from __future__ import annotations

import time
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "ManualClock", "SystemClock"]


@runtime_checkable
class Clock(Protocol):
    """Anything with ``now()``: seconds since the Unix epoch, as a float."""

    def now(self) -> float: ...


class SystemClock:
    """The real wall clock (``time.time``)."""

    def now(self) -> float:
        return time.time()

    def __repr__(self) -> str:
        return "SystemClock()"


class ManualClock:
    """A clock that only moves when told to; tests use it instead of sleeping.

    It starts at the real time by default, so deadlines handed to real services
    (such as Redis expiry) still land in the future.
    """

    def __init__(self, start: float | None = None) -> None:
        self._now = time.time() if start is None else float(start)

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> float:
        """Move the clock forward by ``seconds`` and return the new time."""
        if seconds < 0:
            raise ValueError(f"ManualClock.advance() takes a non-negative number of seconds, got {seconds!r}")
        self._now += seconds
        return self._now

    def set(self, timestamp: float) -> None:
        """Put the clock at ``timestamp`` (seconds since the epoch)."""
        self._now = float(timestamp)

    def __repr__(self) -> str:
        return f"ManualClock(now={self._now!r})"
