"""Facets: when a value happened and where it came from, kept coarse beside its words as blind terms of its own.

Each indexed value also holds one term per level of a tree of its event day (the day itself, then spans of 16,
256, 4,096, 65,536 and 1,048,576 days from the epoch), and one term for its provenance source. A time window is
then a handful of those terms (``window_words``): the store counts and lists the values that hold them without
a value being opened, and only those are opened and checked against the exact, sealed time. The words cannot
come out of the analyser (they start with a NUL), and like every term they are keyed hashes of the bucket's
address: a store sees which values share a day or a source, not which day or which source by the terms alone;
but a store that can tell when any one value of a term happened (a ttl deadline minus its ttl, the day it watched
a write come in) knows that day for every value holding the term (docs/search.md says so).
"""

from __future__ import annotations

import math
from collections.abc import Collection

__all__ = ["FACET_LEVELS", "MAX_WINDOW_WORDS", "day_of", "facet_words", "source_words", "top_words", "window_words"]

_DAY = 86_400.0
_FANOUT = 16
#: Levels of the tree of days: spans of 16**level days, from one day up to 1,048,576 (some 2,870 years).
FACET_LEVELS = 6
#: The days past the tree's last span (16**6: far beyond the year 9999, the last a value's event time can hold).
_END: int = _FANOUT**FACET_LEVELS
#: The most words a window may take (a window needing more is filtered on its opened values alone).
MAX_WINDOW_WORDS = 160


def day_of(at: float) -> int:
    """The day (since the epoch, UTC) an event time falls on, bounded to the tree."""
    if not math.isfinite(at):
        return 0 if at < 0 else _END - 1
    return min(max(int(at // _DAY), 0), _END - 1)


def _word(level: int, span: int) -> str:
    return f"\x00t{level}:{span}"


def facet_words(at: float, source: str | None) -> list[str]:
    """The facet words of a value whose event time is ``at`` and whose source is ``source`` (None: unknown)."""
    day = day_of(at)
    words = [_word(level, day // _FANOUT**level) for level in range(FACET_LEVELS)]
    words.append(_source_word(source))
    return words


def _source_word(source: str | None) -> str:
    return "\x00s-" if source is None else f"\x00s{source}"


def source_words(sources: Collection[str | None]) -> list[str]:
    """The words of the values whose source is one of ``sources``."""
    return list(dict.fromkeys(_source_word(source) for source in sources))


def top_words() -> list[str]:
    """The words of the tree's top level: every value with facets holds exactly one of them."""
    return [_word(FACET_LEVELS - 1, span) for span in range(_FANOUT)]


def window_words(since: float | None, until: float | None) -> list[str] | None:
    """Words that together are held by every value whose event day meets ``[since, until)`` and only by values
    whose event day does (each such value holds exactly one), the fewest the tree allows; None when that takes
    more than ``MAX_WINDOW_WORDS``."""
    if (since is not None and math.isnan(since)) or (until is not None and math.isnan(until)):
        return None  # no window the tree can cover: the opened values alone decide
    first = 0 if since is None else day_of(since)
    open_end = until is None or until >= _END * _DAY  # infinity included
    end = _END if open_end else (0 if until is None or until <= 0 else math.ceil(until / _DAY))
    words: list[str] = []
    level, size = 0, 1
    while first < end:
        if level == FACET_LEVELS - 1:
            words += [_word(level, span) for span in range(first // size, end // size)]
            break
        up = size * _FANOUT
        while first < end and first % up:
            words.append(_word(level, first // size))
            first += size
        while first < end and end % up:
            end -= size
            words.append(_word(level, end // size))
        level, size = level + 1, up
    return words if len(words) <= MAX_WINDOW_WORDS else None
