"""``Kept``: which values a search may return, by when they happened and where they came from, checked on each
opened value before the ranking is cut to its limit; and ``recency``, the optional preference for recent ones."""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import NamedTuple

from ..sealing import Payload, Provenance

__all__ = ["Kept", "event_time", "recency"]


def event_time(provenance: Provenance | None, written_at: float | None) -> float:
    """When what a value says happened: its sealed ``at``, else when it was written (0 when neither is known)."""
    if provenance is not None and provenance.at is not None:
        return provenance.at
    return written_at or 0.0


class Kept(NamedTuple):
    """A search's filter: event times from ``since`` (inclusive) to ``until`` (exclusive), seconds since the epoch,
    None where open; ``sources``: the provenance sources kept (None: every value, its source known or not)."""

    since: float | None = None
    until: float | None = None
    sources: Collection[str | None] | None = None

    def __call__(self, payload: Payload) -> bool:
        provenance = None
        if self.sources is not None:
            provenance = payload.provenance
            if provenance is None or provenance.source not in self.sources:
                return False
        if self.since is None and self.until is None:
            return True
        at = event_time(provenance if self.sources is not None else payload.provenance, payload.written_at)
        return (self.since is None or at >= self.since) and (self.until is None or at < self.until)


def recency(score: float, at: float, newest: float, half_life: float) -> float:
    """``score`` moved down by half for every ``half_life`` seconds its value happened before ``newest`` (the newest
    event time among the candidates: the same order as ages from now, without every score of an old memory
    rounding to 0); a negative similarity is doubled instead."""
    factor = math.exp2(-max(0.0, newest - at) / half_life)
    return score * factor if score >= 0 else score / factor
