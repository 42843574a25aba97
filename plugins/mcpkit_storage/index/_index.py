"""The blind index: what a kept value contributes to search, as keyed hashes of its words.

A value's document is its key (unless ``keys`` is off) and the strings and numbers inside it, analysed
by ``mcpkit_search.Analyzer``; each term becomes a blind term (``Keyring.blind``)
of the bucket's address, so a store holds counts of numbers, never words.

Indexing sits on every write of a searchable value, so the blind terms of each word
are cached per bucket (the same words come back in every value a caller keeps):
a word met before costs one dictionary lookup, not a stem and a keyed hash.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import anyio.to_thread
import pydantic_core

from mcpkit_search import Analyzer, value_text

from ..sealing import Keyring
from ..stores import Address, Postings
from ._facets import facet_words

__all__ = ["ANALYSED_ON_LOOP", "MAX_QUERY_TERMS", "MAX_TERMS_PER_VALUE", "WORDS_CACHED", "BlindIndex"]

#: Distinct terms of a query that count; the rest of a longer query is ignored.
MAX_QUERY_TERMS = 32

#: Distinct terms of one value that are indexed (its first ones); the rest of a longer value is not searchable. Each
#: is a posting the store keeps: 60,000 characters of distinct short words made some 10,000 of them.
MAX_TERMS_PER_VALUE = 2048

#: Values longer than this (characters of JSON) are analysed in a worker thread: 60,000 characters of new words
#: took about 270 ms of stemming and hashing, on the event loop every other caller's call waits on.
ANALYSED_ON_LOOP = 8192

#: Words whose blind terms are cached, across all buckets together (about 150 bytes each: some 10 MB);
#: past it the least recently written buckets are forgotten first.
WORDS_CACHED = 65_536


class _BucketWords(dict[str, tuple[int, ...]]):
    """One bucket's word (an analyser token) -> its blind terms under the primary secret, computed when missing."""

    __slots__ = ("_bucket", "_index", "_owner")

    def __init__(self, index: BlindIndex, owner: str, bucket: str) -> None:
        super().__init__()
        self._index, self._owner, self._bucket = index, owner, bucket

    def __missing__(self, word: str) -> tuple[int, ...]:
        index = self._index
        blind = tuple(index.keyring.blind(0, self._owner, self._bucket, index.analyzer.terms_of(word)))
        index.cached(self)
        self[word] = blind
        return blind


class _Apart(dict[str, tuple[int, ...]]):
    """One long value's word -> its blind terms, made by ``blind`` when missing (a worker thread's, not cached)."""

    __slots__ = ("_blind",)

    def __init__(self, blind: Callable[[str], tuple[int, ...]]) -> None:
        super().__init__()
        self._blind = blind

    def __missing__(self, word: str) -> tuple[int, ...]:
        self[word] = terms = self._blind(word)
        return terms


def _capped(counts: dict[int, int], length: int, facets: list[int]) -> Postings:
    """A value's postings, its first ``MAX_TERMS_PER_VALUE`` distinct terms (its length is all of its words), and
    its facet terms (``facet_words``: counted once each, and not in its length, so no word's score changes)."""
    if len(counts) > MAX_TERMS_PER_VALUE:
        counts = dict(itertools.islice(counts.items(), MAX_TERMS_PER_VALUE))
    for term in facets:
        counts[term] = 1
    return Postings(counts, length)


class BlindIndex:
    """Turns values into postings and queries into blind terms, for one keyring."""

    def __init__(self, keyring: Keyring, analyzer: Analyzer | None = None, *, keys: bool = True) -> None:
        self.keyring = keyring
        self._analyzer = analyzer
        self._keys = keys
        self._buckets: OrderedDict[tuple[str, str], _BucketWords] = OrderedDict()  # least recently written first
        self._words = 0  # in all of them
        self._apart: Analyzer | None = None  # the worker threads' analyser, one long value at a time
        self._apart_lock = threading.Lock()

    @property
    def keys(self) -> bool:
        """Whether a value's key is part of its indexed text (``RememberPlugin(search_keys=...)``)."""
        return self._keys

    @property
    def analyzer(self) -> Analyzer:
        """The analyser, built when first needed: a server that never indexes never loads the stemmer."""
        if self._analyzer is None:
            self._analyzer = Analyzer()
        return self._analyzer

    def postings(self, address: Address, key: str, value_json: str | bytes, at: float, source: str | None) -> Postings:
        """The postings of a value written now at ``address`` (always under the primary secret), with the facets of
        its event time ``at`` and its source."""
        place = (address.owner, address.bucket)
        words = self._buckets.get(place)
        if words is None:
            words = self._buckets[place] = _BucketWords(self, *place)
        else:
            self._buckets.move_to_end(place)
        return _capped(
            *self.analyzer.counts(value_text(key if self._keys else "", pydantic_core.from_json(value_json)), words),
            self.keyring.blind(0, address.owner, address.bucket, facet_words(at, source)),
        )

    async def postings_of(
        self, address: Address, key: str, value_json: str | bytes, at: float, source: str | None
    ) -> Postings:
        """``postings``, in a worker thread for a long value (``ANALYSED_ON_LOOP``) so the event loop stays free."""
        if len(value_json) <= ANALYSED_ON_LOOP:
            return self.postings(address, key, value_json, at, source)
        return await anyio.to_thread.run_sync(self._postings_apart, address, key, value_json, at, source)

    def _postings_apart(
        self, address: Address, key: str, value_json: str | bytes, at: float, source: str | None
    ) -> Postings:
        """``postings`` with an analyser and word cache of its own (neither the loop's is shared with a thread);
        one long value at a time."""
        with self._apart_lock:
            if self._apart is None:
                self._apart = Analyzer()
            analyzer, keyring = self._apart, self.keyring
            words = _Apart(lambda word: tuple(keyring.blind(0, *address[:2], analyzer.terms_of(word))))
            return _capped(
                *analyzer.counts(value_text(key if self._keys else "", pydantic_core.from_json(value_json)), words),
                keyring.blind(0, address.owner, address.bucket, facet_words(at, source)),
            )

    def cached(self, words: _BucketWords) -> None:
        """Count one more cached word of ``words``; past ``WORDS_CACHED``, forget the least recent buckets."""
        self._words += 1
        while self._words > WORDS_CACHED and self._buckets:
            place, oldest = next(iter(self._buckets.items()))
            if oldest is words:  # the bucket being written is the only one left: it starts over
                self._words -= len(words)
                words.clear()
                break
            del self._buckets[place]
            self._words -= len(oldest)

    def words(self, query: str) -> list[str]:
        """The distinct terms of a query, in order, at most ``MAX_QUERY_TERMS``."""
        return list(dict.fromkeys(self.analyzer.terms(query)))[:MAX_QUERY_TERMS]

    def terms(self, secret: int, owner: str, bucket: str, words: Sequence[str]) -> list[int]:
        """The blind terms of a query's words in one bucket address of secret number ``secret``."""
        return self.keyring.blind(secret, owner, bucket, words)
