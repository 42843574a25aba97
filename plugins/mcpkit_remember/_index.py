"""The blind index: what a kept value contributes to search, as keyed hashes of its words.

A value's document is its key and the strings and numbers inside it, analysed
by ``mcpkit_search.Analyzer``; each term becomes a blind term (``Keyring.blind``)
of the bucket's address, so a store holds counts of numbers, never words.
"""

from __future__ import annotations

from collections.abc import Sequence

import pydantic_core

from mcpkit_search import Analyzer

from ._keyring import Keyring
from ._store import Address, Postings

__all__ = ["MAX_QUERY_TERMS", "BlindIndex"]

#: Distinct terms of a query that count; the rest of a longer query is ignored.
MAX_QUERY_TERMS = 32


class BlindIndex:
    """Turns values into postings and queries into blind terms, for one keyring."""

    def __init__(self, keyring: Keyring, analyzer: Analyzer | None = None) -> None:
        self.keyring = keyring
        self._analyzer = analyzer

    @property
    def analyzer(self) -> Analyzer:
        """The analyser, built when first needed: a server that never indexes never loads the stemmer."""
        if self._analyzer is None:
            self._analyzer = Analyzer()
        return self._analyzer

    def postings(self, address: Address, key: str, value_json: str | bytes) -> Postings:
        """The postings of a value written now at ``address`` (always under the primary secret)."""
        counts = self.analyzer.value_counts(key, pydantic_core.from_json(value_json))
        blind = self.keyring.blind(0, address.owner, address.bucket, list(counts))
        return Postings(tuple(zip(blind, counts.values(), strict=True)), sum(counts.values()))

    def words(self, query: str) -> list[str]:
        """The distinct terms of a query, in order, at most ``MAX_QUERY_TERMS``."""
        return list(dict.fromkeys(self.analyzer.terms(query)))[:MAX_QUERY_TERMS]

    def terms(self, secret: int, owner: str, bucket: str, words: Sequence[str]) -> list[int]:
        """The blind terms of a query's words in one bucket address of secret number ``secret``."""
        return self.keyring.blind(secret, owner, bucket, words)
