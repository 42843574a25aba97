"""When a query asks about: the dates and spans written in an English query, read as a time window.

``when(query, now=...)`` finds the first date or span in the query ("in June 2023", "on 3 June 2023", "last week",
"between August 11 and 15", "yesterday", "in March", "3 days ago", "since May") and returns the window it means,
relative to an explicit ``now``, with the query's other words (the date's words taken out). A date given without
its year is the latest one not after ``now`` (memory is of the past: "in March" in February is last year's March).
Windows are half-open, ``since <= t < until``, in ``now``'s time zone; weeks start on Monday.

Standard library only: python-dateutil parses one date written alone (its fuzzy mode takes any number in a
sentence for a day) and knows neither spans nor "last week"; ``dateparser`` finds points, not windows, and costs a
large import. The grammar here is small and reads only what it is sure of; anything else stays in the query.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import NamedTuple

from ._date_words import (
    ANCHORS,
    MONTHS,
    NUMBERS,
    ONLY_DATES,
    OPENERS,
    RECENTLY_DAYS,
    SOME,
    UNITS,
    WEEKDAYS,
    YEAR_GOES_ON,
)

__all__ = ["When", "when"]

_TOKEN = re.compile(r"(\d{4})[-/](\d{1,2})[-/](\d{1,2})\b|(\d+)(?:st|nd|rd|th)?\b|[^\W\d_]+|[,-]")


class When(NamedTuple):
    """A query's time window: ``since`` (inclusive) and ``until`` (exclusive), None where open; ``query``: its other
    words; ``phrase``: the date words as written ("" when none was found)."""

    since: datetime | None
    until: datetime | None
    query: str
    phrase: str


@dataclass(frozen=True)
class _Token:
    text: str  # lowercased
    start: int
    end: int
    number: int | None = None
    iso: date | None = None


@dataclass(frozen=True)
class _Point:
    """A calendar date as written: any part may be missing (a bare day, a month of no year)."""

    year: int | None
    month: int | None
    day: int | None


def when(query: str, *, now: datetime) -> When:
    """The first date or span ``query`` names, as a window relative to ``now`` (timezone-aware), and its other words.

    ``since`` and ``until`` are both None (and ``query`` unchanged) when it names none.
    """
    if now.tzinfo is None:
        raise ValueError("when(): now must be timezone-aware (datetime.now(timezone.utc), say), not a naive datetime")
    tokens = [_token(match) for match in _TOKEN.finditer(query)]
    reader, at = _Reader(tokens, now, query), 0
    while at < len(tokens):
        try:
            found = reader.read(at)
        except (ValueError, OverflowError):  # "3000 years ago": before the calendar's first year, so no date
            found = None
        if found is None:
            at = max(at + 1, reader.no_such_day)  # "29 February 2023" is no date, nor is its "February 2023"
            continue
        end, since, until = found
        start = at - 1 if at and tokens[at - 1].text in OPENERS and not _opens(tokens[at]) else at
        left, right = tokens[start].start, tokens[end - 1].end
        rest = re.sub(r"\s+([?.!,;:])", r"\1", re.sub(r"\s{2,}", " ", f"{query[:left]} {query[right:]}")).strip()
        return When(since, until, rest, query[left:right])
    return When(None, None, query, "")


def _opens(token: _Token) -> bool:
    """Whether a phrase reads its own opening word (``between``, ``since``...): then it is not taken twice."""
    return token.text in {"between", "from", "since", "after", "before", "until", "till", "in", "on", "during"}


def _token(match: re.Match[str]) -> _Token:
    text = match.group(0).lower()
    if match.group(1):
        year, month, day = (int(match.group(group)) for group in (1, 2, 3))
        try:
            return _Token(text, match.start(), match.end(), iso=date(year, month, day))
        except ValueError:
            return _Token(text, match.start(), match.end())
    number = int(match.group(4)) if match.group(4) else None
    return _Token(text, match.start(), match.end(), number=number)


class _Reader:
    """Reads one date phrase from a token on: each ``_name`` returns the token after the phrase and its window."""

    def __init__(self, tokens: list[_Token], now: datetime, query: str = "") -> None:
        self.tokens, self.now, self.today, self.query = tokens, now, now.date(), query
        #: The token after the last date read that does not exist (31 June): none of its words are read again.
        self.no_such_day = 0

    def text(self, at: int) -> str:
        return self.tokens[at].text if at < len(self.tokens) else ""

    def read(self, at: int) -> tuple[int, datetime | None, datetime | None] | None:
        word = self.text(at)
        if word in {"between", "from"}:
            span = self._span(at + 1, "and" if word == "between" else None)
            if span is not None:
                return span
        if word in {"since", "after", "before", "until", "till"}:
            found = self._window(at + 1, anchored=True)
            if found is None:
                return None
            end, since, until = found
            if word == "since":
                return end, since, None
            if word == "after":
                return end, until, None
            return end, None, since if word == "before" else until
        if word in {"in", "during", "over", "within"} and self.text(at + 1) == "the":
            found = self._last_units(at + 2)
            if found is not None:
                return found
        anchored = at > 0 and self.text(at - 1) in ANCHORS
        return self._window(at, anchored=anchored)

    def _window(self, at: int, *, anchored: bool) -> tuple[int, datetime | None, datetime | None] | None:
        """One date or relative phrase at ``at``, as its whole window."""
        found = self._relative(at, anchored=anchored)
        if found is not None:
            return found
        point = self._point(at, anchored=anchored)
        if point is None:
            return None
        end, written = point
        since, until = self._resolved(written, None)
        return end, since, until

    def _span(self, at: int, joint: str | None) -> tuple[int, datetime | None, datetime | None] | None:
        """``A and B`` (after ``between``) or ``A to/until/through B`` (after ``from``); B may be a bare day."""
        first = self._point(at, anchored=True, bare_day=True)
        if first is None:
            return None
        end, left = first
        joints = {joint} if joint else {"to", "until", "till", "through", "thru", "-"}
        if self.text(end) not in joints:
            return None
        second = self._point(end + 1, anchored=True, bare_day=True)
        if second is None:
            return None
        end, right = second
        if right.month is None and right.day is not None and left.month is not None:
            right = _Point(right.year or left.year, left.month, right.day)  # "August 11 and 15"
        if left.month is None and left.day is not None and right.month is not None:
            left = _Point(left.year or right.year, right.month, left.day)  # "11 and 15 August"
        if (left.month is None and left.day is not None) or (right.month is None and right.day is not None):
            return None
        if left.year is None and right.year is not None and not _exists(right.year, left):
            return None  # "between 29 February and 3 March 2023"
        since, until = self._resolved(left, right)
        return end, since, until

    def _resolved(self, left: _Point, right: _Point | None) -> tuple[datetime, datetime]:
        """The window of a date (``right`` None) or of the span from ``left`` to ``right`` (both included)."""
        year = (right or left).year
        if year is None:  # the latest year in which the date exists and is not after today
            year = self.today.year
            while not _exists(year, right or left) or _first_day(year, right or left) > self.today:
                year -= 1
        last = _Point(year, (right or left).month, (right or left).day)
        first = _Point(left.year or year, left.month, left.day)
        if (
            right is not None
            and left.year is None
            and (not _exists(year, first) or _first_after_last(year, first, last))
        ):
            first = _Point(year - 1, left.month, left.day)  # "between December 20 and January 3"
        if not _exists(first.year or year, first):
            first = _Point(first.year, first.month, 28)  # "between 29 February and 3 March" of a common year
        return self._at(_first_day(year, first)), self._at(_after(last))

    def _at(self, day: date) -> datetime:
        return datetime.combine(day, time(), self.now.tzinfo)

    def _ends_a_year(self, at: int) -> bool:
        """Whether a bare number at ``at`` can be a year: it ends the query or a clause, a span goes on from it or
        ends with it ("in 2023", "in 2023, then", "between 2019 and 2021 trips"), where a word after it makes it a
        count ("in 2000 words", "for 2025 on 1500 servers")."""
        after = at + 1
        if after >= len(self.tokens) or (at and self.tokens[at - 1].text in YEAR_GOES_ON | ONLY_DATES):
            return True  # "... and 2021 trips", "since 2020 what changed"
        if self.query[self.tokens[at].end : self.tokens[after].start].strip():  # a full stop, a question mark...
            return True
        return self.tokens[after].text in YEAR_GOES_ON

    def _point(self, at: int, *, anchored: bool, bare_day: bool = False) -> tuple[int, _Point] | None:
        """A calendar date at ``at``: ISO, day month [year], month day [year], month [year], year, or a bare day."""
        if at >= len(self.tokens):
            return None
        token = self.tokens[at]
        if token.iso is not None:
            return at + 1, _Point(token.iso.year, token.iso.month, token.iso.day)
        if token.number is not None:
            day, month_at = token.number, at + 1 + (self.text(at + 1) == "of")
            if 1 <= day <= 31 and self.text(month_at) in MONTHS:
                end, year = self._year(month_at + 1)
                return self._existing(end, _Point(year, MONTHS[self.text(month_at)], day))
            if 1000 <= token.number <= 2999 and anchored and self._ends_a_year(at):
                return at + 1, _Point(token.number, None, None)
            if bare_day and 1 <= day <= 31:
                return at + 1, _Point(None, None, day)
            return None
        month = MONTHS.get(token.text)
        if month is None:
            return None
        following = self.tokens[at + 1].number if at + 1 < len(self.tokens) else None
        if following is not None and 1 <= following <= 31:
            end, year = self._year(at + 2)
            return self._existing(end, _Point(year, month, following))
        end, year = self._year(at + 1)
        if year is not None or (anchored and (len(token.text) > 3 or token.text == "may")):
            return end, _Point(year, month, None)
        return None

    def _existing(self, end: int, point: _Point) -> tuple[int, _Point] | None:
        assert point.month is not None
        assert point.day is not None
        if point.day <= calendar.monthrange(point.year or 2024, point.month)[1]:  # 2024: 29 February exists
            return end, point
        self.no_such_day = end
        return None

    def _year(self, at: int) -> tuple[int, int | None]:
        """A year after a date (``, 2023`` or ``2023``), and the token after it."""
        at_year = at + (self.text(at) == ",")
        if at_year < len(self.tokens):
            number = self.tokens[at_year].number
            if number is not None and 1000 <= number <= 2999 and len(self.tokens[at_year].text) == 4:
                return at_year + 1, number
        return at, None

    def _relative(self, at: int, *, anchored: bool) -> tuple[int, datetime | None, datetime | None] | None:
        """``today``, ``yesterday``, ``last week``, ``this month``, ``3 days ago``, ``last Tuesday``, ``on Friday``."""
        word, today = self.text(at), self.today
        if word in {"today", "tonight"}:
            return at + 1, self._at(today), self._at(today + timedelta(days=1))
        if word == "yesterday" or (word == "last" and self.text(at + 1) == "night"):
            end = at + 1 if word == "yesterday" else at + 2
            return end, self._at(today - timedelta(days=1)), self._at(today)
        if word == "the" and [self.text(at + n) for n in (1, 2, 3)] == ["day", "before", "yesterday"]:
            return at + 4, self._at(today - timedelta(days=2)), self._at(today - timedelta(days=1))
        vague = self._vague(at)
        if vague is not None:
            return vague
        if word in {"last", "this", "past", "previous"}:
            unit = self.text(at + 1)
            if unit in {"week", "weekend", "month", "year"}:
                back = 0 if word == "this" else 1
                since, until = self._unit(unit, back)
                return at + 2, since, until
            if unit in WEEKDAYS:
                return self._weekday(at + 1)
        if word in WEEKDAYS and anchored:
            return self._weekday(at)
        count = self.tokens[at].number if at < len(self.tokens) else NUMBERS.get(word)
        count = NUMBERS.get(word) if count is None else count
        if count is not None:
            unit_at = at + 1 + (self.text(at + 1) == "of")  # "a couple of weeks ago"
            measure = UNITS.get(self.text(unit_at))
            if measure is not None and self.text(unit_at + 1) == "ago":
                since, until = self._unit(measure, count)
                return unit_at + 2, since, until
        return None

    def _vague(self, at: int) -> tuple[int, datetime | None, datetime | None] | None:
        """The spans of vague words: ``a few days ago`` (2 to 5 days back), ``a couple of weeks ago``, ``this past
        week`` (the 7 days ending now), ``recently``, ``the other day``, ``earlier this month``."""
        word, today = self.text(at), self.today
        if word in {"recently", "lately"}:
            return at + 1, self.now - timedelta(days=RECENTLY_DAYS), self.now
        if word == "the" and [self.text(at + 1), self.text(at + 2)] == ["other", "day"]:
            return at + 3, self._at(today - timedelta(days=7)), self._at(today)
        if word == "earlier" and self.text(at + 1) in {"today", "this"}:
            found = self._relative(at + 1, anchored=False)
            if found is None or found[1] is None:
                return None
            return found[0], found[1], self.now
        past = at + (word in {"this", "the"})
        if self.text(past) == "past" and self.text(past + 1) in {"day", "week", "month", "year"}:
            return past + 2, self.now - _span_of(self.text(past + 1), 1), self.now  # not the calendar's last week
        if word == "this" and [self.text(at + 1), self.text(at + 2)] == ["past", "weekend"]:
            since, until = self._unit("weekend", 1)
            return at + 3, since, until
        some = at + (word == "a")
        if self.text(some) not in SOME:
            return None
        lo, hi = SOME[self.text(some)]
        unit_at = some + 1 + (self.text(some + 1) == "of")  # "a couple of weeks ago"
        unit = UNITS.get(self.text(unit_at))
        if unit is None or self.text(unit_at + 1) != "ago":
            return None
        days = _span_of(unit, 1).days
        return unit_at + 2, self._at(today - timedelta(days=hi * days)), self._at(today - timedelta(days=lo * days - 1))

    def _last_units(self, at: int) -> tuple[int, datetime | None, datetime | None] | None:
        """``last 3 weeks`` / ``past few days`` / ``last month`` after ``in the``: from that long ago until now."""
        if self.text(at) not in {"last", "past"}:
            return None
        count, unit_at = 1, at + 1
        number = self.tokens[unit_at].number if unit_at < len(self.tokens) else None
        if number is not None or self.text(unit_at) in NUMBERS:
            count, unit_at = number if number is not None else NUMBERS[self.text(unit_at)], unit_at + 1
        unit = UNITS.get(self.text(unit_at))
        if unit is None:
            return None
        return unit_at + 1, self.now - _span_of(unit, count), self.now

    def _weekday(self, at: int) -> tuple[int, datetime, datetime]:
        """The latest such weekday before today."""
        back = (self.today.weekday() - WEEKDAYS[self.text(at)]) % 7 or 7
        day = self.today - timedelta(days=back)
        return at + 1, self._at(day), self._at(day + timedelta(days=1))

    def _unit(self, unit: str, back: int) -> tuple[datetime, datetime]:
        """The calendar day, week (Monday on), weekend, month or year ``back`` of them before the current one."""
        today = self.today
        if unit == "day":
            first, after = today - timedelta(days=back), today - timedelta(days=back - 1)
        elif unit in {"week", "weekend"}:
            monday = today - timedelta(days=today.weekday() + 7 * back)
            first, after = monday, monday + timedelta(days=7)
            if unit == "weekend":
                first = monday + timedelta(days=5)
                if back == 1 and today.weekday() == 6:  # on a Sunday, "last weekend" is this one's Saturday on
                    first, after = first + timedelta(days=7), after + timedelta(days=7)
        elif unit == "month":
            index = today.year * 12 + today.month - 1 - back
            first = date(index // 12, index % 12 + 1, 1)
            after = date((index + 1) // 12, (index + 1) % 12 + 1, 1)
        else:
            first, after = date(today.year - back, 1, 1), date(today.year - back + 1, 1, 1)
        return self._at(first), self._at(after)


def _span_of(unit: str, count: int) -> timedelta:
    return timedelta(days=count * {"day": 1, "week": 7, "month": 30, "year": 365}[unit])


def _first_after_last(year: int, first: _Point, last: _Point) -> bool:
    return _first_day(year, first) > _first_day(year, last)


def _exists(year: int, point: _Point) -> bool:
    return point.month is None or (point.day or 1) <= calendar.monthrange(year, point.month)[1]


def _first_day(year: int, point: _Point) -> date:
    """The first day a date names, in ``year`` when it names none."""
    year = point.year or year
    if point.month is None:
        return date(year, 1, 1)
    return date(year, point.month, point.day or 1)


def _after(point: _Point) -> date:
    """The day after the last day a date (with its year) names."""
    assert point.year is not None
    if point.month is None:
        return date(point.year + 1, 1, 1)
    if point.day is None:
        return date(point.year + point.month // 12, point.month % 12 + 1, 1)
    return _first_day(point.year, point) + timedelta(days=1)
