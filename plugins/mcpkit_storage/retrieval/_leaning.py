"""``Leaning``: what a search prefers without leaving anything out — recent values (a half-life), and the values of
the window a query's own dates named (``dates=True``) — and ``preferring``, the search that ranks a window's values
higher (docs/search.md "Searching by time")."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import NamedTuple

from ._kept import Kept, event_time, recency
from ._match import Match, Matches, SearchMode

__all__ = ["PREFERRED_BOOST", "Leaning", "Window", "preferring"]


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

    def prefers(self, at: float) -> bool:
        """Whether the event time ``at`` is in the preferred window."""
        return self.preferred is not None and Kept(*self.preferred).holds(at)

    def scored(self, score: float, at: float, newest: float) -> float:
        """``score`` of a value whose event time is ``at`` (``newest``: the newest among the candidates, no later than
        now), moved by its age and by the preferred window. A negative similarity is divided where a score is
        multiplied, so within the window every score moves up and their order stays."""
        if self.half_life is not None:
            score = recency(score, at, newest, self.half_life)
        if self.prefers(at):
            score = score * PREFERRED_BOOST if score >= 0 else score / PREFERRED_BOOST
        return score

    def ranked(self, matches: list[Match], now: float) -> list[Match]:
        """``matches`` scored again with the leaning, best first (a weak match still after every other; ties: the
        newest, then by key). A value dated after ``now`` is as recent as one of now, and in the window by its date."""
        if not matches:
            return matches
        times = [event_time(match.provenance, match.updated_at) for match in matches]
        newest = min(now, max(times))
        moved = [
            self._moved(match, self.scored(match.score, at, newest), at)
            for match, at in zip(matches, times, strict=True)
        ]
        moved.sort(key=lambda match: (match.weak, -match.score, -(match.updated_at or 0.0), match.key))
        return moved

    def merged(self, first: list[Match], second: list[Match], limit: int, now: float) -> list[Match]:
        """The best ``limit`` of two rankings' matches with the leaning (scores of one ranking: a key in both counts
        once)."""
        found = {match.key: match for match in first}
        for match in second:
            found.setdefault(match.key, match)
        return self.ranked(list(found.values()), now)[:limit]

    def within(self, kept: Kept | None) -> Kept | None:
        """``kept`` narrowed to the preferred window (None: they do not meet)."""
        assert self.preferred is not None
        since, until = self.preferred
        if kept is not None:
            since = kept.since if since is None else since if kept.since is None else max(since, kept.since)
            until = kept.until if until is None else until if kept.until is None else min(until, kept.until)
        if since is not None and until is not None and since >= until:
            return None
        return Kept(since, until, None if kept is None else kept.sources)

    def _moved(self, match: Match, score: float, at: float) -> Match:
        why = match.why if match.why is None or not self.prefers(at) else match.why._replace(preferred=True)
        return match._replace(score=score, why=why)


async def preferring(
    search: Callable[[Kept | None], Awaitable[tuple[Matches, SearchMode]]],
    kept: Kept | None,
    lean: Leaning,
    limit: int,
    now: float,
) -> tuple[Matches, SearchMode]:
    """The first ``limit`` of the ranking (what ``kept`` keeps) with the preferred window's values boosted: always
    among the first ``limit`` without the boost and the first ``limit`` of the window's values, since the boost keeps
    the window's values in their order and only ever moves a score up. So two ordinary searches answer it, each with
    its filter applied before its cut (``search(kept)``; the window's narrowed by its facets as a filter is), their
    scores those of one ranking (a filtered search scores as the whole ranking does): no value is lost to a cut, and
    none is opened beyond the two searches' own. By words; by meaning, ``_by_meaning`` asks the vector shards so, and
    where they cannot answer scores every value it opens with the leaning."""
    matches, mode = await search(kept)
    inside = lean.within(kept)
    more = [] if inside is None else (await search(inside))[0]
    return Matches(lean.merged(matches, more, limit, now), matches.note, matches.window), mode
