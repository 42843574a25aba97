"""The analyser: text to index terms, the same way for what is kept and for what is asked.

Steps, in order: camelCase splits (``ticketId`` is "ticket id"); Unicode NFKD
normalisation with combining marks dropped (accent folding: "café" is "cafe")
and case folding; words are runs of letters and digits, so every other
character (``:`` ``_`` ``-`` ``.`` ``/``, spaces, punctuation) splits them;
English stop words go; every other word made of letters alone is stemmed by the
Snowball English stemmer ("preferences" and "preferred" are both "prefer"), and
words with digits (numbers, ids) are kept whole.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

from ._stop_words import ENGLISH_STOP_WORDS

__all__ = ["Analyzer", "fold", "texts_of"]

#: Longest word kept, in characters: longer runs (hashes, base64) are cut to this.
MAX_TERM_CHARS = 64

#: Distinct words whose stems are cached (the same words come back in every value).
STEM_CACHE_SIZE = 65_536

_WORD = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def fold(text: str) -> str:
    """Case- and accent-folded text: NFKD, combining marks dropped, casefolded (ASCII takes a shortcut)."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if not unicodedata.combining(char)).casefold()


def _english_stemmer() -> Callable[[str], str]:
    # Imported when the first analyser is built, not with the package: snowballstemmer loads every language
    # it has (about 15 ms), which a server that never indexes should not pay. It uses PyStemmer, a C
    # implementation of the same algorithm, when that is installed.
    import snowballstemmer

    stem: Callable[[str], str] = snowballstemmer.stemmer("english").stemWord
    return stem


class Analyzer:
    """Turns text, and the strings inside JSON values, into stemmed, folded index terms."""

    def __init__(self, *, stop_words: frozenset[str] = ENGLISH_STOP_WORDS, stem: bool = True) -> None:
        self._stop_words = stop_words
        self._stemmer: Callable[[str], str] = _english_stemmer() if stem else str
        # word -> its term ("" for a stop word), cached: the same words come back in every value
        self._term: Callable[[str], str] = lru_cache(maxsize=STEM_CACHE_SIZE)(self._term_of)

    def _term_of(self, word: str) -> str:
        if word in self._stop_words:
            return ""
        if not word.isalpha():  # numbers and ids (T-1042, 7731, a3f9) are not English words: kept whole
            return word[:MAX_TERM_CHARS]
        return self._stemmer(word[:MAX_TERM_CHARS])

    def terms(self, text: str) -> list[str]:
        """The terms of ``text`` in order, repeats kept (a term's count is its weight)."""
        return [term for term in map(self._term, _WORD.findall(fold(_CAMEL.sub(" ", text)))) if term]

    def counts(self, *texts: str) -> Counter[str]:
        """How often each term occurs in all of ``texts`` together."""
        return Counter(self.terms(texts[0] if len(texts) == 1 else "\n".join(texts)))

    def value_counts(self, key: str, value: Any) -> Counter[str]:
        """The terms of a kept value: its key, and every string, number and object key inside the (JSON) value."""
        return self.counts(key, *texts_of(value))


def texts_of(value: Any) -> Iterator[str]:
    """The strings, numbers and object keys inside a JSON value, depth first (a field's name says what it holds)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int | float):
        yield str(value)
    elif isinstance(value, dict):
        for name, item in value.items():
            yield str(name)
            yield from texts_of(item)
    elif isinstance(value, list):
        for item in value:
            yield from texts_of(item)
