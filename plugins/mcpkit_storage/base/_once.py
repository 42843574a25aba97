"""``first_time``: whether this process meets the cause of a warning for the first time, so it is logged once."""

from __future__ import annotations

from collections.abc import Hashable

__all__ = ["MAX_CAUSES", "first_time"]

#: Causes remembered at most; past that they are forgotten at once, and each may be logged once more.
MAX_CAUSES = 10_000

_seen: set[Hashable] = set()


def first_time(cause: Hashable) -> bool:
    """True the first time this process meets ``cause`` (log the warning now), then False."""
    if cause in _seen:
        return False
    if len(_seen) >= MAX_CAUSES:
        _seen.clear()
    _seen.add(cause)
    return True
