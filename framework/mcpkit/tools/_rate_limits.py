"""Rate limits on tool calls, per caller: a token bucket per (caller, limit), on the framework's monotonic clock.

A limit is written ``"N/second"``, ``"N/minute"`` or ``"N/hour"``: N calls at once at most, refilled evenly
over the period. ``Server(rate_limit=...)`` bounds every caller's calls to all tools together;
``@tool(rate_limit=...)`` one tool's. A signed-in caller is counted by user id (whichever credential or
instance of the token), an anonymous one by address (an IPv6 /64 as one). Buckets live in the process (with
several instances behind a load balancer each has its own) unless ``Server(rate_limit_store=...)`` puts them in
Redis (``_shared_rate_limits``).
"""

from __future__ import annotations

import math
import re
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from ..base import ConfigurationError

__all__ = ["RateLimit", "RateLimiter", "parse_rate_limit"]

#: Buckets kept at most; the least recently used go first (a full bucket is as good as none).
MAX_BUCKETS = 100_000

#: The most calls a limit may allow per period.
MAX_CALLS = 1_000_000

_PERIODS = {"second": 1.0, "minute": 60.0, "hour": 3600.0}
_FORM = re.compile(r"^\s*(\d+)\s*/\s*(second|minute|hour)\s*$")


@dataclass(frozen=True, slots=True)
class RateLimit:
    """At most ``calls`` at once, refilled at ``calls`` per ``per_seconds``."""

    calls: int
    per_seconds: float

    def __str__(self) -> str:
        period = next(name for name, seconds in _PERIODS.items() if seconds == self.per_seconds)
        return f"{self.calls}/{period}"


def parse_rate_limit(where: str, value: object) -> RateLimit | None:
    """``"N/minute"`` (or a RateLimit, or None) as a RateLimit; a ConfigurationError naming ``where`` otherwise."""
    if value is None or isinstance(value, RateLimit):
        return value
    match = _FORM.match(value) if isinstance(value, str) else None
    if match is None or not 1 <= int(match.group(1)) <= MAX_CALLS:
        raise ConfigurationError(
            f"{where}: rate_limit is written like '60/minute' (1 to {MAX_CALLS:,} calls per second, minute or "
            f"hour), not {value!r:.40}."
        )
    return RateLimit(int(match.group(1)), _PERIODS[match.group(2)])


class RateLimiter:
    """Token buckets by key; ``take`` spends one call from every bucket it names, or from none."""

    def __init__(self, max_buckets: int = MAX_BUCKETS) -> None:
        self._buckets: OrderedDict[Hashable, tuple[float, float]] = OrderedDict()  # key -> (tokens, when)
        self._max = max_buckets

    def take(self, wanted: Sequence[tuple[Hashable, RateLimit]], now: float) -> tuple[float, int]:
        """Spend one call from each (key, limit) at monotonic time ``now`` if every one has a call left: (0, -1).

        Otherwise nothing is spent, and the answer is the longest wait and which of ``wanted`` needs it: a call
        that one limit refuses does not use up the others.
        """
        levels = []
        wait, refusing = 0.0, -1
        for number, (key, limit) in enumerate(wanted):
            rate = limit.calls / limit.per_seconds
            tokens, then = self._buckets.get(key, (float(limit.calls), now))
            tokens = min(float(limit.calls), tokens + max(0.0, now - then) * rate)
            levels.append((key, tokens))
            if tokens < 1.0 and (1.0 - tokens) / rate > wait:
                wait, refusing = (1.0 - tokens) / rate, number
        for key, tokens in levels:
            self._buckets[key] = (tokens - (0.0 if refusing >= 0 else 1.0), now)
            self._buckets.move_to_end(key)
        while len(self._buckets) > self._max:
            self._buckets.popitem(last=False)
        return (max(wait, math.ulp(1.0)), refusing) if refusing >= 0 else (0.0, -1)
