"""Typo tolerance: the spellings one edit away from a query term that no value holds.

The index keeps keyed hashes of terms, never a word list, so near spellings cannot be looked up: they are made
(Norvig's edits: deletions, transpositions, substitutions, insertions) and the store is asked which exist. Made
from the stemmed term, then stemmed again: a misspelt word seldom stems ("educaton" stays whole), and its
corrections stem like the word meant ("education" is ``educ``).
"""

from __future__ import annotations

from collections.abc import Callable

from ._stop_words import ENGLISH_STOP_WORDS

__all__ = ["MAX_TYPO_CHARS", "MAX_TYPO_WORDS", "MIN_TYPO_CHARS", "TYPO_WEIGHT", "near"]

#: Shortest term given near spellings: a shorter one has many real words one edit away ("cat": "car", "bat").
MIN_TYPO_CHARS = 4
#: Longest term given near spellings (53 per letter are made: 20 letters make about a thousand).
MAX_TYPO_CHARS = 20
#: Words of one query given near spellings (its first ones that no value holds): each adds a few hundred terms to
#: hash and count.
MAX_TYPO_WORDS = 2
#: A near spelling's score, as a share of what the same match would score spelt as asked.
TYPO_WEIGHT = 0.5

_LETTERS = "abcdefghijklmnopqrstuvwxyz"

#: Every ending the Snowball English stemmer may change (its steps' suffixes and exceptional words, shortened to
#: the ending they share): a word with none of them stems to itself, so its edits skip the stemmer, which is most
#: of a typo's cost (tests/search/test_typos.py checks this against the stemmer).
STEMMED_ENDINGS = (
    *("s", "ed", "eed", "ing", "y", "enci", "anci", "abli", "li", "izer", "ator", "ation", "tional", "alism", "ogist"),
    *("ogi", "aliti", "iviti", "biliti", "alize", "icate", "iciti", "ical", "ful", "ative", "al", "ance", "ence"),
    *("er", "ic", "able", "ible", "ant", "ment", "ent", "ism", "ate", "iti", "ive", "ize", "ion", "e", "l"),
)


def edits(word: str) -> set[str]:
    """Every string one deletion, transposition, substitution or insertion away from ``word`` (letters a-z and
    the word's own), ``word`` itself left out."""
    letters = _LETTERS + "".join(sorted(set(word) - set(_LETTERS)))
    cuts = [(word[:at], word[at:]) for at in range(len(word) + 1)]
    made = {head + tail[1:] for head, tail in cuts if tail}
    made.update(head + tail[1] + tail[0] + tail[2:] for head, tail in cuts if len(tail) > 1)
    made.update(head + letter + tail[1:] for head, tail in cuts if tail for letter in letters)
    made.update(head + letter + tail for head, tail in cuts for letter in letters)
    made.discard(word)
    return made


def near(term: str, terms_of: Callable[[str], tuple[str, ...]]) -> list[str]:
    """The terms one edit from ``term`` may stand for: each edit as made and as ``terms_of`` (the analyser's)
    turns it; none for a term too short or too long, or not a word of letters (numbers and ids are exact)."""
    if not MIN_TYPO_CHARS <= len(term) <= MAX_TYPO_CHARS or not term.isalpha():
        return []
    found: dict[str, None] = {}
    for edit in sorted(edits(term)):
        if edit in ENGLISH_STOP_WORDS:  # never indexed
            continue
        found[edit] = None
        if edit.endswith(STEMMED_ENDINGS):
            found.update(dict.fromkeys(terms_of(edit)))
    found.pop(term, None)
    return list(found)
