"""``first_time``: whether this process meets the cause of a warning for the first time, so it is logged once.

Every plugin of a server checks the store's secret when it starts (the help desk has four on one store), and a
value that does not open is met again at every call that reads it: without this, one cause would be logged
once per plugin, vault or call. The set of causes is the process's; it is bounded, so causes that keep changing
(one per tampered value, say) cannot grow it without limit: past ``MAX_CAUSES`` it starts again.
"""

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
