"""The English words dates are written with, as ``when`` reads them: months, weekdays, counts, units, vague counts,
and the words that open a date phrase or let a number be a year."""

from __future__ import annotations

__all__ = [
    "ANCHORS",
    "MONTHS",
    "NUMBERS",
    "ONLY_DATES",
    "OPENERS",
    "RECENTLY_DAYS",
    "SOME",
    "UNITS",
    "WEEKDAYS",
    "YEAR_GOES_ON",
]

MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sept", "sep"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
WEEKDAYS = {
    name: number
    for number, names in enumerate(
        (
            ("monday", "mon"),
            ("tuesday", "tue", "tues"),
            ("wednesday", "wed"),
            ("thursday", "thu", "thurs"),
            ("friday", "fri"),
            ("saturday", "sat"),
            ("sunday", "sun"),
        )
    )
    for name in names
}
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
NUMBERS |= {"eight": 8, "nine": 9, "ten": 10, "few": 3, "couple": 2}
UNITS = {"day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month", "months": "month"}
UNITS |= {"year": "year", "years": "year"}
#: Vague counts in "a few days ago", "a couple of weeks ago", "several months ago": how many back, at least and at most.
SOME = {"few": (2, 5), "couple": (1, 3), "several": (3, 9)}
#: How far back "recently" and "lately" reach: the days ending now.
RECENTLY_DAYS = 30
#: Words that open a date phrase and go with it when it is taken out of the query.
OPENERS = frozenset({"in", "on", "during", "over", "at", "from", "between", "since", "after", "before", "until"})
OPENERS |= {"till", "by", "around", "of", "throughout"}
#: Words that let a month or a year stand alone as a date ("in March", not "march on"; "since 2021", not "2021 items").
ANCHORS = OPENERS - {"at", "by", "of"}


#: What may follow a bare year in a date phrase (any other word after a number makes it a count).
YEAR_GOES_ON = frozenset({",", "-", "and", "or", "to", "through", "until", "till"})
#: Words after which a number is read as a year whatever follows it (unlike "in" or "for": "in 2000 words").
ONLY_DATES = frozenset({"since", "after", "before", "between", "from"})
