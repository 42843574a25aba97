"""Dates and spans read from an English query, relative to an explicit now (issue 41, item 1's reading part)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit_search import When, when

UTC = UTC
#: A Wednesday.
NOW = datetime(2023, 6, 14, 15, 30, tzinfo=UTC)


def day(year: int, month: int, number: int) -> datetime:
    return datetime(year, month, number, tzinfo=UTC)


def window(query: str, now: datetime = NOW) -> tuple[datetime | None, datetime | None]:
    found = when(query, now=now)
    return found.since, found.until


@pytest.mark.parametrize(
    ("query", "since", "until"),
    [
        ("what did I say in June 2023", day(2023, 6, 1), day(2023, 7, 1)),
        ("what did I buy on 3 June 2023", day(2023, 6, 3), day(2023, 6, 4)),
        ("on the 3rd of June, 2023?", day(2023, 6, 3), day(2023, 6, 4)),
        ("on June 3rd, 2023 at noon", day(2023, 6, 3), day(2023, 6, 4)),
        ("notes from 2023-06-03", day(2023, 6, 3), day(2023, 6, 4)),
        ("notes of 2023/6/3", day(2023, 6, 3), day(2023, 6, 4)),
        ("in 2021", day(2021, 1, 1), day(2022, 1, 1)),
        ("in March", day(2023, 3, 1), day(2023, 4, 1)),
        ("in June", day(2023, 6, 1), day(2023, 7, 1)),  # the current month: this year's
        ("in September", day(2022, 9, 1), day(2022, 10, 1)),  # not yet this year: last year's
        ("on June 20", day(2022, 6, 20), day(2022, 6, 21)),
        ("on June 14", day(2023, 6, 14), day(2023, 6, 15)),
        ("yesterday", day(2023, 6, 13), day(2023, 6, 14)),
        ("last night", day(2023, 6, 13), day(2023, 6, 14)),
        ("the day before yesterday", day(2023, 6, 12), day(2023, 6, 13)),
        ("today", day(2023, 6, 14), day(2023, 6, 15)),
        ("last week", day(2023, 6, 5), day(2023, 6, 12)),
        ("this week", day(2023, 6, 12), day(2023, 6, 19)),
        ("last weekend", day(2023, 6, 10), day(2023, 6, 12)),
        ("last month", day(2023, 5, 1), day(2023, 6, 1)),
        ("this year", day(2023, 1, 1), day(2024, 1, 1)),
        ("last year", day(2022, 1, 1), day(2023, 1, 1)),
        ("3 days ago", day(2023, 6, 11), day(2023, 6, 12)),
        ("two weeks ago", day(2023, 5, 29), day(2023, 6, 5)),
        ("last Tuesday", day(2023, 6, 13), day(2023, 6, 14)),
        ("on Wednesday", day(2023, 6, 7), day(2023, 6, 8)),  # today is one: the one before
        ("on Friday", day(2023, 6, 9), day(2023, 6, 10)),
        ("between August 11 and 15", day(2022, 8, 11), day(2022, 8, 16)),
        ("between 11 and 15 August 2021", day(2021, 8, 11), day(2021, 8, 16)),
        ("between May 30 and June 2", day(2023, 5, 30), day(2023, 6, 3)),
        ("between December 20 and January 3", day(2022, 12, 20), day(2023, 1, 4)),
        ("from March to May", day(2023, 3, 1), day(2023, 6, 1)),
        ("from 1 May through 3 May 2023", day(2023, 5, 1), day(2023, 5, 4)),
        ("since May", day(2023, 5, 1), None),
        ("after June 3", day(2023, 6, 4), None),
        ("before 2023", None, day(2023, 1, 1)),
        ("until last week", None, day(2023, 6, 12)),
    ],
)
def test_each_kind_of_date_reads_as_its_window(query: str, since: datetime | None, until: datetime | None) -> None:
    assert window(query) == (since, until)


def test_in_the_last_units_runs_until_now() -> None:
    assert window("in the last 3 days") == (NOW - timedelta(days=3), NOW)
    assert window("in the past few weeks") == (NOW - timedelta(days=21), NOW)
    assert window("over the last month") == (NOW - timedelta(days=30), NOW)


@pytest.mark.parametrize(
    ("query", "since", "until"),
    [
        ("a few days ago", day(2023, 6, 9), day(2023, 6, 13)),  # 2 to 5 days before today, not the 3rd alone
        ("few days ago", day(2023, 6, 9), day(2023, 6, 13)),
        ("a couple of days ago", day(2023, 6, 11), day(2023, 6, 14)),  # 1 to 3 days before
        ("a couple of weeks ago", day(2023, 5, 24), day(2023, 6, 8)),  # 7 to 21 days before
        ("a few weeks ago", day(2023, 5, 10), day(2023, 6, 1)),  # 14 to 35 days before
        ("a couple of months ago", day(2023, 3, 16), day(2023, 5, 16)),  # 30 to 90 days before
        ("several days ago", day(2023, 6, 5), day(2023, 6, 12)),  # 3 to 9 days before
        ("the other day", day(2023, 6, 7), day(2023, 6, 14)),  # the week before today
        ("last weekend", day(2023, 6, 10), day(2023, 6, 12)),
        ("this past weekend", day(2023, 6, 10), day(2023, 6, 12)),
    ],
)
def test_vague_words_read_as_spans_of_days_not_one_day(query: str, since: datetime, until: datetime) -> None:
    assert window(query) == (since, until)


@pytest.mark.parametrize(
    ("query", "since"),
    [
        ("this past week", NOW - timedelta(days=7)),  # the 7 days ending now, not last calendar week
        ("the past week", NOW - timedelta(days=7)),
        ("past week", NOW - timedelta(days=7)),
        ("this past month", NOW - timedelta(days=30)),
        ("the past day", NOW - timedelta(days=1)),
        ("recently", NOW - timedelta(days=30)),
        ("lately", NOW - timedelta(days=30)),
        ("earlier today", day(2023, 6, 14)),
        ("earlier this week", day(2023, 6, 12)),
        ("earlier this month", day(2023, 6, 1)),
        ("earlier this year", day(2023, 1, 1)),
    ],
)
def test_spans_that_run_until_now(query: str, since: datetime) -> None:
    assert window(query) == (since, NOW)


def test_vague_words_leave_the_query_and_a_few_things_is_no_date() -> None:
    assert when("what did I cook this past week?", now=NOW).query == "what did I cook?"
    assert when("the dentist the other day", now=NOW).query == "the dentist"
    assert when("what did I say recently about the garden", now=NOW).phrase == "recently"
    for query in ("a few items", "a couple of books", "the other side", "earlier than planned", "past tense"):
        assert when(query, now=NOW) == When(None, None, query, "")


def test_the_date_words_leave_the_query_and_the_rest_stays() -> None:
    assert when("What did the user say about the garden in March?", now=NOW) == When(
        day(2023, 3, 1), day(2023, 4, 1), "What did the user say about the garden?", "in March"
    )
    found = when("which festival did I go to between August 11 and 15", now=NOW)
    assert (found.query, found.phrase) == ("which festival did I go to", "between August 11 and 15")
    assert when("yesterday's dentist appointment", now=NOW).query == "'s dentist appointment"
    assert when("the concert a few days ago", now=NOW) == When(
        day(2023, 6, 9), day(2023, 6, 13), "the concert", "a few days ago"
    )


@pytest.mark.parametrize(
    "query",
    [
        "march on to the next step",  # a verb, not the month
        "you may want the aisle seat",
        "I have 2023 photos",  # a number, not a year
        "Friday night lights review",  # a weekday that names no day asked about
        "the 15 items in the list",
        "on June 31",  # no such day
        "on 31 June 2023",  # nor is its month a date
        "in jun",  # an abbreviation alone is not read as a month
        "",
    ],
)
def test_words_that_only_look_like_dates_stay_in_the_query(query: str) -> None:
    assert when(query, now=NOW) == When(None, None, query, "")


def test_the_first_date_is_read_and_a_later_one_stays() -> None:
    found = when("in March or in April", now=NOW)
    assert (found.since, found.until, found.query) == (day(2023, 3, 1), day(2023, 4, 1), "or in April")


def test_windows_are_in_the_time_zone_of_now() -> None:
    paris = timezone(timedelta(hours=2))
    since, until = window("yesterday", datetime(2023, 6, 14, 0, 30, tzinfo=paris))
    assert (since, until) == (datetime(2023, 6, 13, tzinfo=paris), datetime(2023, 6, 14, tzinfo=paris))


def test_a_naive_now_is_refused_with_what_to_pass() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        when("yesterday", now=datetime(2023, 6, 14))


def test_29_february_of_a_year_without_one_is_refused_and_with_no_year_is_the_latest() -> None:
    assert when("on 29 February 2023", now=NOW).since is None
    assert window("on 29 February") == (day(2020, 2, 29), day(2020, 3, 1))


@settings(max_examples=300, deadline=None)
@given(
    st.dates(min_value=date(1990, 1, 1), max_value=date(2090, 12, 31)),
    st.sampled_from(
        ["on {d:%d %B %Y}", "on {d:%B %d, %Y}", "on {d:%Y-%m-%d}", "in {d:%B %Y}", "{d:%B} {d.day} {d:%Y}"]
    ),
)
def test_every_written_date_holds_its_day(written: date, form: str) -> None:
    since, until = window(f"what happened {form.format(d=written)} at work")
    assert since is not None
    assert until is not None
    noon = datetime(written.year, written.month, written.day, 12, tzinfo=UTC)
    assert since <= noon < until
    assert until - since <= timedelta(days=31)


@settings(max_examples=300, deadline=None)
@given(st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2090, 1, 1)), st.integers(1, 12))
def test_a_month_without_its_year_is_the_latest_not_after_now(now: datetime, month: int) -> None:
    now = now.replace(tzinfo=UTC)
    since, until = window(f"in {date(2000, month, 1):%B}", now)
    assert since is not None
    assert until is not None
    assert since.month == month
    assert since <= now
    assert now - since < timedelta(days=366)


WORDS = ["in", "on", "between", "and", "from", "to", "since", "before", "after", "last", "this", "the", "of", "ago"]
WORDS += ["February", "June", "may", "March", "week", "days", "Friday", "yesterday", "29", "31", "3rd", "2023", "0"]
WORDS += ["2024-02-30", "2023-06-03", ",", "-", "a", "few", "past", "weekend", "month", "year", "until", "notes"]


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=8), st.datetimes(min_value=datetime(1990, 1, 1)))
def test_any_sequence_of_date_words_reads_as_a_window_or_none(words: list[str], now: datetime) -> None:
    now = now.replace(tzinfo=UTC)
    query = " ".join(words)
    found = when(query, now=now)
    assert found.phrase in query
    if found.since is not None and found.until is not None:
        assert found.since < found.until
    if not found.phrase:
        assert found == When(None, None, query, "")


@pytest.mark.parametrize(
    "query",
    ["write the summary in 2000 words", "budget for 2025 on 1500 servers", "a list of 1200 items in 1999 style"],
)
def test_a_number_a_word_follows_is_a_count_not_a_year(query: str) -> None:
    """The memory tools always read a query's dates: a number followed by a word ("2000 words") must not become a
    year window that filters every value out."""
    assert when(query, now=NOW) == When(None, None, query, "")


@pytest.mark.parametrize(
    ("query", "since", "until"),
    [
        ("since 2020 what changed", 2020, None),
        ("between 2019 and 2021 trips", 2019, 2022),
        ("what did I do in 2023? tell me", 2023, 2024),
    ],
)
def test_a_year_before_a_word_is_still_read_after_since_between_or_a_full_stop(
    query: str, since: int | None, until: int | None
) -> None:
    asked = when(query, now=NOW)
    assert (asked.since and asked.since.year, asked.until and asked.until.year) == (since, until)


@pytest.mark.parametrize(
    "query", ["garden notes from 3000 years ago", "30000 months ago", "1000000 days ago", "in the last 99999 years"]
)
def test_a_date_the_calendar_cannot_hold_is_no_date(query: str) -> None:
    """Before the year 1 (or past 9999): the words stay words, rather than the search failing."""
    assert when(query, now=NOW) == When(None, None, query, "")
