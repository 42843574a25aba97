"""Ranked search over one place's values: BM25 over the blind index, values opened only for the best hits.

Every address the place's values may live at takes part: one bucket per
secret (during a rotation, a bucket under each), whose corpora are merged
before ranking so scores stay comparable, and, while entries of mcpkit 0.1 may
remain, its unindexed buckets, analysed here from their opened values.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, NamedTuple, cast

import pydantic_core

from mcpkit_search import Corpus, bm25

from ._payload import Payload
from ._scope import Place
from ._store import Address
from ._vault import Vault, _newer

__all__ = ["MAX_SEARCH_LIMIT", "Match", "search"]

#: The most matches one search returns.
MAX_SEARCH_LIMIT = 100


class Match(NamedTuple):
    """One value a search found: its key, the value, its BM25 score (higher is better) and when it was written.

    ``updated_at`` is None for a value written by mcpkit 0.1; ``expires_at`` None for a value kept until forgotten.
    """

    key: str
    value: Any
    score: float
    updated_at: float | None
    expires_at: float | None


#: A document of the merged corpus: (which bucket address, the store's key there).
_Doc = tuple[int, str]


async def search(vault: Vault, place: Place, query: str, now: float, limit: int) -> list[Match]:
    """The place's ``limit`` best matches for ``query``, best first (ties by key)."""
    words = vault.index.words(query)
    if not words:
        return []
    buckets = vault.buckets(place)
    secrets = len(vault.keyring)
    documents = length = 0
    postings: dict[int, list[tuple[Hashable, int, int]]] = {}  # word number -> postings over every bucket address
    opened: dict[_Doc, Payload] = {}  # unindexed (0.1) documents, opened while analysing them
    for where, (owner, bucket) in enumerate(buckets):
        if where < secrets:
            terms = vault.index.terms(where, owner, bucket, words)
            corpus = await vault.store.search(owner, bucket, terms, now)
            by_term = {term: number for number, term in enumerate(terms)}
        else:
            corpus, payloads = await _analysed(vault, place, Address(owner, bucket, ""), words, now)
            by_term = {number: number for number in range(len(words))}
            opened.update(((where, key), payload) for key, payload in payloads.items())
        documents += corpus.documents
        length += corpus.length
        for term, held in corpus.postings.items():
            postings.setdefault(by_term[term], []).extend(((where, key), count, size) for key, count, size in held)
    scores = bm25(range(len(words)), Corpus(documents, length, postings))
    ranked = cast("list[_Doc]", sorted(scores, key=lambda doc: -scores[doc]))
    return await _fetch(vault, place, buckets, ranked, scores, opened, now, limit)


async def _analysed(
    vault: Vault, place: Place, bucket: Address, words: Sequence[str], now: float
) -> tuple[Corpus, dict[str, Payload]]:
    """An unindexed bucket's corpus for ``words`` (word numbers as terms), from its values opened here."""
    began = vault.begin()
    wanted = {word: number for number, word in enumerate(words)}
    postings: dict[int, list[tuple[str, int, int]]] = {}
    payloads: dict[str, Payload] = {}
    length = 0
    for name, entry in await vault.store.entries(bucket.owner, bucket.bucket, now):
        payload = vault.opened(Address(bucket.owner, bucket.bucket, name), entry, now, place, began)
        if payload is None:
            continue
        payloads[name] = payload
        counts = vault.index.analyzer.value_counts(payload.key, pydantic_core.from_json(payload.value_json))
        size = sum(counts.values())
        length += size
        for word, count in counts.items():
            if word in wanted:
                postings.setdefault(wanted[word], []).append((name, count, size))
    return Corpus(len(payloads), length, postings), payloads


async def _fetch(
    vault: Vault,
    place: Place,
    buckets: Sequence[tuple[str, str]],
    ranked: list[_Doc],
    scores: dict[Hashable, float],
    opened: dict[_Doc, Payload],
    now: float,
    limit: int,
) -> list[Match]:
    """Open the best-ranked documents, a batch at a time, until ``limit`` values are found or none are left.

    A document whose entry no longer opens (written over meanwhile, or tampered with) is passed over; a key
    found at two addresses (a writer that knew only one secret) counts once, as its newest copy.
    """
    best: dict[str, tuple[float, Payload]] = {}
    at = 0
    while at < len(ranked) and len(best) < limit:
        batch = ranked[at : at + max(limit - len(best), 8)]
        at += len(batch)
        wanted = [doc for doc in batch if doc not in opened]
        addresses = [Address(*buckets[where], key) for where, key in wanted]
        began = vault.begin()
        entries = await vault.store.get_many(addresses, now) if addresses else []
        for doc, address, entry in zip(wanted, addresses, entries, strict=True):
            payload = None if entry is None else vault.opened(address, entry, now, place, began)
            if payload is not None:
                opened[doc] = payload
        for doc in batch:
            payload = opened.get(doc)
            if payload is None:
                continue
            kept = best.get(payload.key)
            if kept is None:
                best[payload.key] = (scores[doc], payload)
            elif _newer(payload, kept[1]):
                best[payload.key] = (max(kept[0], scores[doc]), payload)
    matches = [
        Match(key, payload.value(), score, payload.written_at, payload.expires_at)
        for key, (score, payload) in best.items()
    ]
    matches.sort(key=lambda match: (-match.score, match.key))
    return matches[:limit]
