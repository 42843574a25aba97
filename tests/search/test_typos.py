"""Near spellings: the edits skip the stemmer only where it would leave them as they are."""

from __future__ import annotations

import snowballstemmer
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mcpkit_search import Analyzer, near
from mcpkit_search._typos import STEMMED_ENDINGS, edits

STEM = snowballstemmer.stemmer("english").stemWord


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz"), min_size=4, max_size=12))
@example("abogis")  # "abogist", one edit away, stems to "abog": Snowball's step 2 ending "ogist"
def test_a_word_without_a_stemmed_ending_stems_to_itself(word: str) -> None:
    for edit in edits(word) | {word}:
        assert edit.endswith(STEMMED_ENDINGS) or STEM(edit) == edit, edit


def test_near_spellings_are_the_edits_as_the_analyser_turns_them() -> None:
    terms_of = Analyzer().terms_of
    made = {term for edit in edits("educaton") for term in (edit, *terms_of(edit)) if terms_of(edit)}
    assert set(near("educaton", terms_of)) == made - {"educaton"}
