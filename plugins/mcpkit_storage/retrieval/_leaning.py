"""``Leaning``: what a search prefers without leaving anything out — recent values (a half-life), and the values of
the window a query's own dates named (``dates=True``) — applied to the best ``MAX_SEARCH_LIMIT`` candidates' scores
before the ranking is cut (docs/search.md "Searching by time")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from ._kept import event_time, recency
from ._match import Match

__all__ = ["PREFERRED_BOOST", "Leaning", "Window"]

#: A window of event times: since (inclusive) and until (exclusive), seconds since the epoch, None where open.
Window = tuple[float | None, float | None]

#: How many times its score a value whose event time is in the preferred window gets: it counts double, as a value a
#: half-life old counts half. A preference, not a filter: a query's date is not always when its answer was kept ("what
#: did I paint last year" asked of a value written this year), and a value outside the window can still rank first.
PREFERRED_BOOST = 2.0


class Leaning(NamedTuple):
    """A search's preferences: ``half_life``, seconds after which a value's score counts half (None: no preference
    for recent values); ``preferred``, event times from ``since`` (inclusive) to ``until`` (exclusive), None where
    open, whose values score ``PREFERRED_BOOST`` times as much (None: no window preferred)."""

    half_life: float | None = None
    preferred: Window | None = None

    @classmethod
    def of(cls, half_life: float | None, preferred: Window | None) -> Leaning | None:
        """The leaning, or None when the search prefers nothing (its plain path, cut at its limit)."""
        return None if half_life is None and preferred is None else cls(half_life, preferred)

    def reach(self, scores: Sequence[float], limit: int) -> int:
        """How many of a ranking's first hits (``scores``, best first) can still be among its first ``limit`` once
        leaned: with a window alone, those whose score its boost lifts to the ``limit``-th's; with a half-life, all."""
        if self.half_life is not None or len(scores) <= limit or scores[limit - 1] <= 0:
            return len(scores)
        lowest = scores[limit - 1] / PREFERRED_BOOST
        return next((number for number, score in enumerate(scores) if score < lowest), len(scores))

    def scored(self, score: float, at: float, newest: float) -> float:
        """``score`` of a value whose event time is ``at`` (``newest``: the newest among the candidates), moved by its
        age and by the preferred window; a negative similarity is moved the other way, so it is never helped up."""
        if self.half_life is not None:
            score = recency(score, at, newest, self.half_life)
        if self.preferred is not None:
            since, until = self.preferred
            if (since is None or at >= since) and (until is None or at < until):
                score = score * PREFERRED_BOOST if score >= 0 else score / PREFERRED_BOOST
        return score

    def ranked(self, matches: list[Match], now: float) -> list[Match]:
        """``matches`` scored again with the leaning, best first (a weak match still after every other; ties: the
        newest, then by key)."""
        if not matches:
            return matches
        times = [min(now, event_time(match.provenance, match.updated_at)) for match in matches]
        newest = max(times)
        moved = [
            match._replace(score=self.scored(match.score, at, newest)) for match, at in zip(matches, times, strict=True)
        ]
        moved.sort(key=lambda match: (match.weak, -match.score, -(match.updated_at or 0.0), match.key))
        return moved
