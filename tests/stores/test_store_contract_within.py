"""A narrowed search (``NarrowingStore.search(within=...)``): only the entries holding a term of every
group are ranked, each scored as in the whole ranking, with the whole bucket's statistics.

On every store (memory, SQLite with fresh and merged postings, PostgreSQL, Redis, Redis Cluster, the toy store): each
says it ``narrows``.
"""

from __future__ import annotations

import random

import pytest

from mcpkit_storage.stores._store import NarrowingStore, Postings, Store, narrowing
from stores.conftest import OWNER

BUCKET = "b" * 32
WORDS = list(range(1, 9))  # query terms
DAYS = list(range(100, 140))  # one per entry: a window is a few of them
SOURCES = [200, 201, 202]  # one per entry


async def _filled(store: Store, now: float, rng: random.Random) -> dict[str, set[int]]:
    """60 entries, each with some words (a count each), one day term and one source term; each one's terms."""
    held: dict[str, set[int]] = {}
    for number in range(60):
        counts = {word: rng.randint(1, 4) for word in rng.sample(WORDS, rng.randint(1, 4))}
        length = sum(counts.values()) + number  # each entry's own length: no two score alike
        counts[rng.choice(DAYS)] = 1
        counts[rng.choice(SOURCES)] = 1
        key = f"k{number:02}"
        await store.put(OWNER, BUCKET, key, key.encode(), None, now, index=Postings(counts, length))
        held[key] = set(counts)
    return held


async def test_a_narrowed_search_ranks_what_filtering_the_whole_ranking_ranks(store: Store, now: float) -> None:
    narrow = narrowed(store)
    rng = random.Random(41)
    held = await _filled(store, now, rng)
    for _ in range(30):
        terms = rng.sample(WORDS, rng.randint(1, 3))
        days = rng.sample(DAYS, rng.choice([1, 3, 30]))  # few holders, or most of them
        groups = rng.choice([[days], [rng.sample(SOURCES, 1)], [days, SOURCES[:2]], [SOURCES, days]])
        whole = await store.search(OWNER, BUCKET, terms, now, limit=100)
        expected = [(key, score) for key, score in whole.hits if all(held[key] & set(group) for group in groups)]
        limit = rng.randint(1, 8)
        found = await narrow.search(OWNER, BUCKET, terms, now, limit=limit, within=groups)
        assert found.stats == whole.stats  # the whole bucket's, as without ``within``
        assert [key for key, _ in found.hits] == [key for key, _ in expected[:limit]], (terms, groups)
        for (_, score), (_, reference) in zip(found.hits, expected, strict=False):
            assert score == pytest.approx(reference, rel=1e-12)


async def test_a_group_no_entry_holds_ranks_nothing(store: Store, now: float) -> None:
    narrow = narrowed(store)
    await _filled(store, now, random.Random(7))
    assert (await narrow.search(OWNER, BUCKET, WORDS, now, limit=10, within=[[999]])).hits == []
    assert (await narrow.search(OWNER, BUCKET, WORDS, now, limit=10, within=[[]])).hits == []


def test_every_store_says_it_narrows(store: Store) -> None:
    assert narrowing(store) is store


def narrowed(store: Store) -> NarrowingStore:
    found = narrowing(store)
    if found is None:
        pytest.skip("this store ranks every holder of the terms: a caller filters the hits")
    return found


async def test_a_long_limit_ranks_as_a_short_one(store: Store, now: float) -> None:
    """A limit past every entry (a filter listing its holders asks for thousands) ranks them in the same order,
    narrowed or not, as the limit the search asks for."""
    narrow = narrowed(store)
    held = await _filled(store, now, random.Random(3))
    short = (await store.search(OWNER, BUCKET, WORDS, now, limit=100)).hits
    assert len(short) == len(held)
    assert (await store.search(OWNER, BUCKET, WORDS, now, limit=1000)).hits == short
    kept = [hit for hit in short if held[hit[0]] & {SOURCES[0]}]
    assert (await narrow.search(OWNER, BUCKET, WORDS, now, limit=1000, within=[[SOURCES[0]]])).hits == kept
