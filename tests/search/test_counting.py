"""Counting terms through a word cache: the compiled twin gives exactly what the Python one and the analyser give."""

from __future__ import annotations

import os
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcpkit_search._counting as counting
from mcpkit_search import COMPILED, Analyzer

ANALYZER = Analyzer()

# ASCII text with what splits words and what does not: letters, digits, camelCase, separators, runs of spaces.
ASCII_TEXT = st.text(alphabet=st.sampled_from("abcTtXYZ019 _-:./\n\t\"'!"), max_size=200)


class Words(dict[str, tuple[str, ...]]):
    """A word cache as the blind index keeps one: a word's terms, made when first asked for."""

    def __missing__(self, word: str) -> tuple[str, ...]:
        terms = self[word] = ANALYZER.terms_of(word)
        return terms


def python_count(text: str) -> tuple[dict[str, int], int]:
    return counting._count_ascii(Words(), text)


@settings(max_examples=400, deadline=None)
@given(ASCII_TEXT)
def test_ascii_counts_are_the_analysers_terms_counted(text: str) -> None:
    counts, total = counting.count_ascii(Words(), text)
    terms = ANALYZER.terms(text)
    assert counts == Counter(terms)
    assert total == len(terms)
    assert (counts, total) == python_count(text)
    assert list(counts) == list(dict.fromkeys(terms))  # first met, first listed: both twins keep that order


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=120))
def test_any_text_through_the_analyser(text: str) -> None:
    counts, total = ANALYZER.counts(text, Words())
    terms = ANALYZER.terms(text)
    assert counts == Counter(terms)
    assert total == len(terms)


@pytest.mark.parametrize(
    "text",
    ["", " ", "word", "  two words  ", "ends with a word", "x" * 100, "ticketId T-1042 7731", "a:b_c-d.e/f"],
)
def test_edges(text: str) -> None:
    assert counting.count_ascii(Words(), text) == python_count(text)
    assert counting.count_ascii(Words(), text)[0] == Counter(ANALYZER.terms(text))


def test_a_word_asked_for_once_per_time_it_comes() -> None:
    """The cache is asked for each word as cut (no word skipped or merged), so its own misses fill it."""
    asked: list[str] = []

    class Counting(Words):
        def __getitem__(self, word: str) -> tuple[str, ...]:
            asked.append(word)
            return super().__getitem__(word)

    counting.count_ascii(Counting(), "Reply in French, reply-style: short")
    assert asked == ["Reply", "in", "French", "reply", "style", "short"]


def test_compiled_where_mcpkit_was_built_with_a_compiler() -> None:
    """CI builds mcpkit with gcc: there the compiled twin must be the one in use (else the bench measures Python)."""
    if not COMPILED and os.environ.get("CI") != "true":
        pytest.skip("mcpkit_search._counting_c is not built here (no C compiler at install): Python twin in use")
    assert COMPILED
    assert counting.count_ascii is not counting._count_ascii
