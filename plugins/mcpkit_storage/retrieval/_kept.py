"""``Kept``: which values a search may return, by when they happened and where they came from, checked on each
opened value before the ranking is cut to its limit; and ``recency``, the optional preference for recent ones."""

from __future__ import annotations

import math
from collections.abc import Collection
from datetime import UTC, date, datetime, time, timedelta
from typing import NamedTuple

from ..sealing import Payload, Provenance

__all__ = ["Kept", "event_time", "recency"]


def event_time(provenance: Provenance | None, written_at: float | None) -> float:
    """When what a value says happened: its sealed ``at``, else when it was written (0 when neither is known)."""
    if provenance is not None and provenance.at is not None:
        return provenance.at
    return written_at or 0.0


#: The last second a date can show (9999-12-31T23:59:59Z): where an ``until`` of the calendar's last day ends.
_LAST_SECOND = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp()


class Kept(NamedTuple):
    """A search's filter: event times from ``since`` (inclusive) to ``until`` (exclusive), seconds since the epoch,
    None where open; ``sources``: the provenance sources kept (None: every value, its source known or not)."""

    since: float | None = None
    until: float | None = None
    sources: Collection[str | None] | None = None

    @staticmethod
    def moment(moment: object, *, end: bool = False) -> float:
        """``moment`` (seconds since the epoch, a datetime or an ISO 8601 text) in seconds, or a ValueError saying
        what it takes. A datetime or ISO text without a time zone is UTC; an ISO date alone is its day's start, or
        with ``end`` (for an ``until``) the next day's, so an ``until`` of ``2023-03-31`` keeps the 31st."""
        if isinstance(moment, bool):
            raise ValueError(f"is a time, not {moment!r}.")
        if isinstance(moment, int | float):
            if not math.isfinite(moment):
                raise ValueError(f"is a finite number of seconds, not {moment!r}.")
            return float(moment)
        if isinstance(moment, str):
            text = moment.strip()
            try:
                if len(text) == 10:
                    day = date.fromisoformat(text)
                    if end and day == date.max:  # the calendar's last day has no next day: its last second
                        return _LAST_SECOND
                    moment = datetime.combine(day + timedelta(days=1 if end else 0), time(), UTC)
                else:
                    moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
            except ValueError:
                raise ValueError(
                    f"is an ISO 8601 date or time like '2023-03-01' or '2023-03-01T09:30:00Z', not {moment!r:.40}."
                ) from None
        if isinstance(moment, datetime):
            return (moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)).timestamp()
        raise ValueError(f"is seconds since the epoch, a datetime or an ISO 8601 text; not {moment!r:.40}.")

    def __call__(self, payload: Payload) -> bool:
        provenance = None
        if self.sources is not None:
            provenance = payload.provenance
            if provenance is None or provenance.source not in self.sources:
                return False
        if self.since is None and self.until is None:
            return True
        return self.holds(
            event_time(provenance if self.sources is not None else payload.provenance, payload.written_at)
        )

    def holds(self, at: float) -> bool:
        """Whether the event time ``at`` is in the window."""
        return (self.since is None or at >= self.since) and (self.until is None or at < self.until)


def recency(score: float, at: float, newest: float, half_life: float) -> float:
    """``score`` moved down by half for every ``half_life`` seconds its value happened before ``newest`` (the newest
    event time among the candidates: the same order as ages from now, without every score of an old memory
    rounding to 0); a negative similarity is doubled instead."""
    factor = math.exp2(-max(0.0, newest - at) / half_life)
    return score * factor if score >= 0 else score / factor
