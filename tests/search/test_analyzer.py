"""The analyser: the documented steps, and the ASCII shortcut giving exactly what those steps give."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcpkit_search._analyzer as analyzer_module
from mcpkit_search import ENGLISH_STOP_WORDS, Analyzer

ANALYZER = Analyzer()


def documented_terms(text: str) -> list[str]:
    """docs/search.md's steps, one after another, written as plainly as possible (slow, but obviously right)."""
    import snowballstemmer

    stem = snowballstemmer.stemmer("english").stemWord
    text = re.sub(r"\b([^\W\d_]+?)[nN]['\u2019][tT]\b", lambda m: f"{m[1]} not", text)  # 1. contractions
    text = re.sub(
        r"\b(wo|ca|sha|ai) not\b",
        lambda m: {"wo": "will", "ca": "can", "sha": "shall", "ai": "is"}[m[1]] + " not",
        text,
    )
    camel = r"(?<![^\W_])[^\W\d_]*[a-z][A-Z][^\W\d_]*(?![^\W_])"  # 2. a camelCase word of letters alone...
    text = re.sub(camel, lambda m: f"{m[0]} {m[0].lower()}", text)  # ... is also kept joined
    text = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text)  # 2. camelCase
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)).casefold()  # 2.
    terms = []
    for word in re.findall(r"[^\W_]+", text):  # 3. runs of letters and digits, cut to 64 characters
        word = word[:64]
        if word in ENGLISH_STOP_WORDS:  # 4.
            continue
        terms.append(stem(word) if word.isalpha() else word)  # 5. words with digits kept whole
    return terms


def test_the_documented_examples() -> None:
    assert ANALYZER.terms("ticketId") == ["ticket", "id", "ticketid"]
    assert ANALYZER.terms("EpiPen") == ["epi", "pen", "epipen"]  # found by "epipen" and by "epi pen"
    assert ANALYZER.terms("ticketId42 EpiPen2") == ["ticket", "id42", "epi", "pen2"]  # only a word of letters
    assert ANALYZER.terms("Café") == ["cafe"]
    assert ANALYZER.terms("pref:reply-style") == ["pref", "repli", "style"]
    assert ANALYZER.terms("preferences preferred prefers") == ["prefer"] * 3
    assert ANALYZER.terms("T1042 and 7731") == ["t1042", "7731"]
    assert ANALYZER.terms("the of and") == []
    assert ANALYZER.terms("not no like") == ["not", "no", "like"]
    assert ANALYZER.terms("x" * 100) == ["x" * 64]


def test_a_camelcase_word_is_kept_joined_in_place_in_any_text() -> None:
    assert ANALYZER.terms("my EpiPen, café") == ["epi", "pen", "epipen", "cafe"]
    expected = ["cafe", "epi", "pen", "epipen", "x", "naiv", "test", "naivetest"]
    assert ANALYZER.terms("café EpiPen_x naïveTest") == expected
    assert ANALYZER.terms("EpiPen café") == ["epi", "pen", "epipen", "cafe"]


def test_negative_contractions_leave_no_junk_term() -> None:
    assert ANALYZER.terms("I won't go, we haven't paid, they don't mind") == ["not", "go", "not", "paid", "not", "mind"]
    assert (
        ANALYZER.terms("Don\u2019t, can't, shan't, ain't, isn't, COULDN'T")
        == ["not", "not", "shall", "not"] + ["not"] * 3
    )
    assert "won" in ANALYZER.terms("she won the race")  # the real word is still itself
    assert ANALYZER.terms("the user's o'clock") == ["user", "o", "clock"]


def test_counts_count_each_term_across_the_texts() -> None:
    counts = ANALYZER.value_counts("pref:reply", {"reply": ["short replies", 3], "ok": True})
    assert counts == {"pref": 1, "repli": 3, "short": 1, "3": 1, "ok": 1}


# Letters of both cases, digits, separators, and a few characters that fold into something else.
ASCII = st.text(st.sampled_from("aAbBzZ019 _-:./'\"\t\nThEiDxYQnNtT"), max_size=60)
# Long s, the fi ligature, one half, final and capital sigma, dotted and dotless i, a lone combining accent.
FOLDING = "aB\u00e9\u00c9\u00df\u017f\ufb01\u00bd\u03a3\u03c3\u03c2\u0130\u0131A1 _\u0301"
ANY = st.text(st.characters(codec="utf-8"), max_size=40) | st.text(st.sampled_from(FOLDING), max_size=30)


@settings(max_examples=400, deadline=None)
@given(ASCII)
def test_the_ascii_shortcut_gives_what_the_documented_steps_give(text: str) -> None:
    assert ANALYZER.terms(text) == documented_terms(text)


@settings(max_examples=400, deadline=None)
@given(ANY)
def test_any_text_gives_what_the_documented_steps_give(text: str) -> None:
    assert ANALYZER.terms(text) == documented_terms(text)


def test_a_full_cache_starts_again_and_still_answers_right(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(analyzer_module, "STEM_CACHE_SIZE", 4)
    small = Analyzer()
    text = " ".join([f"word{letter}s" for letter in "abcdefghij"] + ["Preferences", "ticketIds"])
    for _ in range(3):
        assert small.terms(text) == documented_terms(text)
