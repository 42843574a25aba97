"""The analyser stems with PyStemmer (C) through ``snowballstemmer``, and the C stemmer gives every word the stem the
pure-Python Snowball algorithm gives it: an index written with one reads the same with the other."""

from __future__ import annotations

import snowballstemmer
import Stemmer
from bench.data.quality import ROWS
from bench.search import WORDS
from hypothesis import given, settings
from hypothesis import strategies as st
from snowballstemmer.english_stemmer import EnglishStemmer

from mcpkit_search import Analyzer

PURE = EnglishStemmer()
C = Stemmer.Stemmer("english")


def corpus_words() -> set[str]:
    """Every word of the benches' corpora: the search bench's vocabulary and the labelled quality set's rows."""
    words = set(WORDS)
    for row in ROWS:
        for text in row:
            words.update(word.lower() for word in Analyzer.tokens(text) if word.isalpha())
    return words


def test_snowballstemmer_hands_the_analyser_the_c_stemmer() -> None:
    assert isinstance(snowballstemmer.stemmer("english"), Stemmer.Stemmer)


def test_every_word_of_the_bench_corpora_stems_the_same_in_c_and_in_python() -> None:
    words = sorted(corpus_words())

    stems = [(word, PURE.stemWord(word), C.stemWord(word)) for word in words]
    differing = [(word, pure, c) for word, pure, c in stems if pure != c]

    assert len(words) > 5000
    assert differing == []


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(categories=["Ll"]), min_size=1, max_size=24))
def test_any_lower_case_word_stems_the_same_in_c_and_in_python(word: str) -> None:
    assert C.stemWord(word) == PURE.stemWord(word)
