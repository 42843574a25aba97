"""The time window of a search as asked: ``since`` / ``until`` (seconds, datetimes or ISO dates), a filter turned into
the store's ``Kept``; the dates read from the query (``dates=True``), a window preferred; and the recency half-life."""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime
from typing import Annotated

from pydantic import Field
from typing_extensions import TypedDict

from mcpkit import iso_time
from mcpkit_search import when
from mcpkit_storage import Kept, RememberInvalidError, Window

__all__ = ["Moment", "SearchWindow", "Since", "Until", "checked_half_life", "instant", "shown_window", "window"]

#: A point in time as ``search(since=, until=)`` take it: seconds since the epoch, a datetime or an ISO 8601 text.
Moment = float | datetime | str


def instant(moment: object, name: str, *, end: bool = False) -> float:
    """``moment`` in seconds since the epoch (``mcpkit_storage.Kept.moment``), or a RememberInvalidError."""
    try:
        return Kept.moment(moment, end=end)
    except ValueError as exc:
        raise RememberInvalidError(f"search({name}=...) {exc}") from None


def window(
    query: str,
    since: object,
    until: object,
    dates: object,
    now: object,
    clock: float,
    sources: Collection[str | None] | None,
) -> tuple[str, Kept | None, Window | None]:
    """The query left to search (without its date words when ``dates`` read some), the filter (None: none) and the
    window the query's dates named, preferred (None: none).

    ``now``: the moment the query's dates are read against (an aware datetime; None: the server clock, in UTC).
    ``since``/``until`` leave out every value outside them; the query's window only ranks its values higher (a
    query's date is not always when its answer was kept: "what did I paint last year", asked of this year's note).
    """
    start = None if since is None else instant(since, "since")
    stop = None if until is None else instant(until, "until", end=True)
    if dates not in (True, False):
        raise RememberInvalidError(f"search(dates=...) is True or False, not {dates!r:.40}.")
    if now is not None and not (isinstance(now, datetime) and now.tzinfo is not None):
        raise RememberInvalidError(
            f"search(now=...) is a datetime with a time zone (datetime.now(timezone.utc)), not {now!r:.60}."
        )
    preferred = None
    if dates:
        asked = when(query, now=now if isinstance(now, datetime) else datetime.fromtimestamp(clock, UTC))
        if asked.phrase:
            query = asked.query
            preferred = (_seconds(asked.since), _seconds(asked.until))
    if start is None and stop is None and sources is None:
        return query, None, preferred
    return query, Kept(start, stop, sources), preferred


def _seconds(moment: datetime | None) -> float | None:
    return None if moment is None else moment.timestamp()


def checked_half_life(half_life: object) -> float | None:
    """``search(half_life=...)``: None, or a positive number of seconds."""
    if half_life is None:
        return None
    if isinstance(half_life, bool) or not isinstance(half_life, int | float) or not 0 < half_life < float("inf"):
        raise RememberInvalidError(
            f"search(half_life=...) is a positive number of seconds (86400: a day-old value counts half), "
            f"not {half_life!r:.40}."
        )
    return float(half_life)


#: The memory tools' ``since`` and ``until`` arguments.
Since = Annotated[
    str | None,
    Field(
        max_length=40,
        description="Only memories of what happened from this ISO 8601 date or time on, like 2023-03-01; "
        "omit: no start.",
    ),
]
Until = Annotated[
    str | None,
    Field(
        max_length=40,
        description="Only memories of what happened before this ISO 8601 time; a date alone, like 2023-03-31, "
        "includes that day. Omit: no end.",
    ),
]


class SearchWindow(TypedDict):
    """Event times as a memory tool shows them (ISO 8601 UTC; None where open): the window its search kept, or the
    one the query's dates named, whose memories it ranked higher."""

    since: str | None
    until: str | None


def shown_window(window: Window | None) -> SearchWindow | None:
    """A search's ``Matches.window`` or ``Matches.preferred`` as the memory tools show it (None: none)."""
    if window is None:
        return None
    since, until = window
    return {"since": None if since is None else iso_time(since), "until": None if until is None else iso_time(until)}
