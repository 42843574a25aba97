"""The time window of a search as asked: ``since`` / ``until`` (seconds, datetimes or ISO dates), the dates read
from the query (``dates=True``), and the recency half-life, checked and turned into the store's ``Kept``."""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime
from typing import Annotated

from pydantic import Field
from typing_extensions import TypedDict

from mcpkit import iso_time
from mcpkit_search import when
from mcpkit_storage import Kept, Matches, RememberInvalidError

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
) -> tuple[str, Kept | None]:
    """The query left to search (without its date words when ``dates`` read some) and the filter (None: none).

    ``now``: the moment the query's dates are read against (an aware datetime; None: the server clock, in UTC).
    The query's window and ``since``/``until`` both apply (their overlap).
    """
    start = None if since is None else instant(since, "since")
    stop = None if until is None else instant(until, "until", end=True)
    if dates not in (True, False):
        raise RememberInvalidError(f"search(dates=...) is True or False, not {dates!r:.40}.")
    if now is not None and not (isinstance(now, datetime) and now.tzinfo is not None):
        raise RememberInvalidError(
            f"search(now=...) is a datetime with a time zone (datetime.now(timezone.utc)), not {now!r:.60}."
        )
    if dates:
        asked = when(query, now=now if isinstance(now, datetime) else datetime.fromtimestamp(clock, UTC))
        if asked.phrase:
            query = asked.query
            if asked.since is not None:
                start = max(start, asked.since.timestamp()) if start is not None else asked.since.timestamp()
            if asked.until is not None:
                stop = min(stop, asked.until.timestamp()) if stop is not None else asked.until.timestamp()
    if start is None and stop is None and sources is None:
        return query, None
    return query, Kept(start, stop, sources)


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
    """The event times a memory tool's search kept (ISO 8601 UTC; None where open)."""

    since: str | None
    until: str | None


def shown_window(matches: Matches) -> SearchWindow | None:
    """The window a search applied, as the memory tools show it (None: none)."""
    if matches.window is None:
        return None
    since, until = matches.window
    return {"since": None if since is None else iso_time(since), "until": None if until is None else iso_time(until)}
