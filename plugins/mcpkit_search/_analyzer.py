"""The analyser: text to index terms, the same way for what is kept and for what is asked.

Steps, in order: negative contractions open up ("don't" is "do not", "won't" is "will not": no junk term such as
``don`` or ``won``, which would collide with real words); camelCase splits (``ticketId`` is "ticket id"), and a
camelCase word of letters alone is also kept joined (``EpiPen`` is "epi", "pen" and "epipen": a brand written as one
word is found by it, and by its parts); Unicode NFKD
normalisation with combining marks dropped (accent folding: "café" is "cafe")
and case folding; words are runs of letters and digits, so every other
character (``:`` ``_`` ``-`` ``.`` ``/``, spaces, punctuation) splits them;
English stop words go; every other word made of letters alone is stemmed by the
Snowball English stemmer ("preferences" and "preferred" are both "prefer"), and
words with digits (numbers, ids) are kept whole.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from itertools import chain
from typing import Any, TypeVar

from ._counting import ascii_tokens, count_ascii, count_tokens
from ._stop_words import ENGLISH_STOP_WORDS

__all__ = ["Analyzer", "fold", "texts_of", "value_text"]

T = TypeVar("T")

#: Longest word kept, in characters: longer runs (hashes, base64) are cut to this.
MAX_TERM_CHARS = 64

#: Distinct words whose terms are cached (the same words come back in every value); past it the cache restarts.
STEM_CACHE_SIZE = 65_536

_WORD = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
#: A camelCase word of letters alone, in non-ASCII text: it is followed by itself lowered (no camelCase step), so
#: that it is kept joined as well as split, in place, as ``_Terms`` does for an ASCII word.
_CAMEL_WORD = re.compile(r"(?<![^\W_])[^\W\d_]*[a-z][A-Z][^\W\d_]*(?![^\W_])")
_NOT = re.compile(r"\b([^\W\d_]+?)[nN]['\u2019][tT]\b")
#: The negative contractions whose first part is not a word ("won't" is "will not").
_IRREGULAR = {"wo": "will", "ca": "can", "sha": "shall", "ai": "is"}
# ASCII text takes a shortcut with the same result: its words are cut as written (_counting.ascii_tokens),
# and each is then split at camelCase steps and lowered once, when first met (see _Terms).


def fold(text: str) -> str:
    """Case- and accent-folded text: NFKD, combining marks dropped, casefolded (ASCII takes a shortcut)."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if not unicodedata.combining(char)).casefold()


def _opened(match: re.Match[str]) -> str:
    base = match.group(1)
    return f"{_IRREGULAR.get(base.lower(), base)} not"


def _with_joined(match: re.Match[str]) -> str:
    return f"{match[0]} {match[0].lower()}"


def uncontracted(text: str) -> str:
    """``text`` with its negative contractions opened ("haven't" is "have not"); as it was when it has none."""
    if "'" not in text and "\u2019" not in text:
        return text
    return _NOT.sub(_opened, text)


def _english_stemmer() -> Callable[[str], str]:
    # Imported when the first analyser is built, not with the package: snowballstemmer loads every language
    # it has (about 15 ms), which a server that never indexes should not pay. It uses PyStemmer, a C
    # implementation of the same algorithm, when that is installed.
    import snowballstemmer

    stem: Callable[[str], str] = snowballstemmer.stemmer("english").stemWord
    return stem


class _Terms(dict[str, tuple[str, ...]]):
    """A word -> its terms (none for a stop word, two for ``ticketId``), computed once.

    A dict rather than ``functools.lru_cache``: a hit is one C-level lookup, which matters because indexing
    asks for every word of every value written; and the terms it hands out are the same string objects each
    time, whose hashes are already known. Past ``STEM_CACHE_SIZE`` words it starts again empty.
    """

    __slots__ = ("_stem", "_stop_words")

    def __init__(self, stop_words: frozenset[str], stem: Callable[[str], str]) -> None:
        super().__init__()
        self._stop_words = stop_words
        self._stem = stem

    def __missing__(self, word: str) -> tuple[str, ...]:
        # An ASCII word is as written (camelCase split and case folded here); any other is already folded.
        pieces = _CAMEL.sub(" ", word).lower().split() if word.isascii() else [word]
        if len(pieces) > 1 and word.isalpha():  # "EpiPen": "epi", "pen", and the word joined, "epipen"
            pieces.append(word.lower())
        terms = tuple(term for term in map(self._term, pieces) if term)
        if len(self) >= STEM_CACHE_SIZE:
            self.clear()
        self[word] = terms
        return terms

    def _term(self, word: str) -> str:
        if word in self._stop_words:
            return ""
        if not word.isalpha():  # numbers and ids (T-1042, 7731, a3f9) are not English words: kept whole
            return word[:MAX_TERM_CHARS]
        return sys.intern(self._stem(word[:MAX_TERM_CHARS]))


class Analyzer:
    """Turns text, and the strings inside JSON values, into stemmed, folded index terms.

    In two steps, for callers that cache the second: ``tokens`` cuts text into words (as written for ASCII
    text, folded otherwise), and ``terms_of`` turns one such word into its terms (cached).
    """

    def __init__(self, *, stop_words: frozenset[str] = ENGLISH_STOP_WORDS, stem: bool = True) -> None:
        #: ``terms_of(token)``: the terms of one word from ``tokens``: none for a stop word, two for ``ticketId``.
        self.terms_of: Callable[[str], tuple[str, ...]] = _Terms(
            stop_words, _english_stemmer() if stem else str
        ).__getitem__

    @staticmethod
    def tokens(text: str) -> list[str]:
        """The words of ``text``, in order, before camelCase splits (ASCII), stop words and stemming."""
        text = uncontracted(text)
        if text.isascii():
            return ascii_tokens(text)
        text = _CAMEL_WORD.sub(_with_joined, text)  # "EpiPen" is "EpiPen epipen", then "Epi Pen epipen"
        return _WORD.findall(fold(_CAMEL.sub(" ", text)))

    def counts(self, text: str, words: Mapping[str, tuple[T, ...]]) -> tuple[dict[T, int], int]:
        """Each term ``words`` gives for the ``tokens`` of ``text``, with how often it comes, and how many in all.

        ``words`` maps each word, as ``tokens`` cuts it, to a tuple of its terms, and makes those it lacks: a
        ``dict`` with ``__missing__`` over ``terms_of`` (the blind index's per-bucket cache of keyed hashes is
        one). One pass, compiled when mcpkit was built with a C compiler.
        """
        text = uncontracted(text)
        if text.isascii():
            return count_ascii(words, text)
        return count_tokens(words, self.tokens(text))

    def terms(self, text: str) -> list[str]:
        """The terms of ``text`` in order, repeats kept (a term's count is its weight)."""
        return list(chain.from_iterable(map(self.terms_of, self.tokens(text))))

    def value_counts(self, key: str, value: Any) -> Counter[str]:
        """The terms of a kept value: its key, and every string, number and object key inside the (JSON) value."""
        return Counter(chain.from_iterable(map(self.terms_of, self.value_tokens(key, value))))

    def value_tokens(self, key: str, value: Any) -> list[str]:
        """The ``tokens`` of a kept value's text (see ``value_counts``)."""
        return self.tokens(value_text(key, value))


def value_text(key: str, value: Any) -> str:
    """The text a kept value is indexed by: its key, then every string, number and object key inside it."""
    return f"{key}\n{value}" if isinstance(value, str) else "\n".join((key, *texts_of(value)))


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
