"""The store contract's search index: postings written with a value, gone with it, over live entries only.

Every test runs against memory, SQLite and a real Redis (``stores/conftest.py``). Terms here are small
numbers standing for blind terms; a store never sees anything else.
"""

from __future__ import annotations

import pytest

from mcpkit_search import Corpus, Stats, bm25, top
from mcpkit_storage.stores._store import (
    INDEX_BYTES_PER_WORD,
    Address,
    Postings,
    Quota,
    QuotaExceededError,
    Ranking,
    Store,
)
from stores.conftest import OTHER, OWNER, MakeStore

HOUR = 3600.0
BUCKET = "b" * 32
ELSEWHERE = "c" * 32

COFFEE, TEA, MILK = 11, 12, 13


def postings(*terms: tuple[int, int]) -> Postings:
    return Postings(dict(terms), sum(count for _, count in terms))


async def found(store: Store, terms: list[int], now: float, owner: str = OWNER, bucket: str = BUCKET) -> Ranking:
    return await store.search(owner, bucket, terms, now, limit=10)


def keys(ranking: Ranking) -> list[str]:
    return [key for key, _ in ranking.hits]


async def test_search_returns_the_bucket_statistics_and_its_best_keys_scored_by_bm25(store: Store, now: float) -> None:
    await store.put(OWNER, BUCKET, "k1", b"1", None, now, index=postings((COFFEE, 2), (MILK, 1)))
    await store.put(OWNER, BUCKET, "k2", b"2", None, now, index=postings((TEA, 1)))
    await store.put(OWNER, BUCKET, "k3", b"3", None, now, index=postings())  # searchable, but no terms
    await store.put(OWNER, BUCKET, "k4", b"4", None, now, index=postings((COFFEE, 1), (TEA, 1), (MILK, 5)))
    ranking = await found(store, [COFFEE, TEA, 99], now)
    assert ranking.stats == Stats(4, 11, (2, 2, 0))
    corpus = Corpus(4, 11, {COFFEE: [("k1", 2, 3), ("k4", 1, 7)], TEA: [("k2", 1, 1), ("k4", 1, 7)]})
    expected = top(bm25([COFFEE, TEA, 99], corpus), 10)
    assert keys(ranking) == [key for key, _ in expected]
    assert sorted(keys(ranking)) == ["k1", "k2", "k4"]  # k3 holds no asked term
    for (_, score), (_, reference) in zip(ranking.hits, expected, strict=True):
        assert score == pytest.approx(reference, rel=1e-12)  # the same formula, in SQL and Lua too


async def test_a_search_scores_with_the_statistics_it_is_given_and_limit_0_gives_only_the_bucket_s(
    store: Store, now: float
) -> None:
    await store.put(OWNER, BUCKET, "k1", b"1", None, now, index=postings((COFFEE, 1)))
    await store.put(OWNER, BUCKET, "k2", b"2", None, now, index=postings((COFFEE, 3), (TEA, 1)))
    assert await store.search(OWNER, BUCKET, [COFFEE], now, limit=0) == Ranking(Stats(2, 5, (2,)), [])
    wider = Stats(50, 500, (40,))  # the bucket and others of the same place together
    ranking = await store.search(OWNER, BUCKET, [COFFEE], now, limit=1, stats=wider)
    assert ranking.stats == Stats(2, 5, (2,))
    corpus = Corpus(2, 5, {COFFEE: [("k1", 1, 1), ("k2", 3, 4)]})
    [(key, reference)] = top(bm25([COFFEE], corpus, wider), 1)
    assert ranking.hits[0][0] == key
    assert ranking.hits[0][1] == pytest.approx(reference, rel=1e-12)


async def test_ties_are_broken_by_key(store: Store, now: float) -> None:
    for key in ("b", "c", "a"):
        await store.put(OWNER, BUCKET, key, key.encode(), None, now, index=postings((TEA, 1)))
    assert keys(await found(store, [TEA], now)) == ["a", "b", "c"]
    assert keys(await store.search(OWNER, BUCKET, [TEA], now, limit=2)) == ["a", "b"]


async def test_entries_written_without_postings_are_not_searched(store: Store, now: float) -> None:
    await store.put(OWNER, BUCKET, "plain", b"1", None, now)
    await store.put(OWNER, BUCKET, "k", b"2", None, now, index=postings((TEA, 1)))
    ranking = await found(store, [TEA], now)
    assert (ranking.stats, keys(ranking)) == (Stats(1, 1, (1,)), ["k"])


async def test_replacing_a_value_replaces_its_postings(store: Store, now: float) -> None:
    await store.put(OWNER, BUCKET, "k", b"1", None, now, index=postings((COFFEE, 1)))
    await store.put(OWNER, BUCKET, "k", b"2", None, now, index=postings((TEA, 3)))
    ranking = await found(store, [COFFEE, TEA], now)
    assert (ranking.stats, keys(ranking)) == (Stats(1, 3, (0, 1)), ["k"])
    await store.put(OWNER, BUCKET, "k", b"3", None, now)  # written over without postings: no longer found
    assert await found(store, [COFFEE, TEA], now) == Ranking(Stats(0, 0, (0, 0)), [])


async def test_a_swap_writes_postings_and_a_failed_swap_leaves_them(store: Store, now: float) -> None:
    assert await store.swap(OWNER, BUCKET, "k", None, b"1", None, now, index=postings((COFFEE, 1)))
    assert not await store.swap(OWNER, BUCKET, "k", b"not this", b"2", None, now, index=postings((TEA, 1)))
    assert (await found(store, [COFFEE, TEA], now)).stats == Stats(1, 1, (1, 0))
    assert await store.swap(OWNER, BUCKET, "k", b"1", b"2", None, now, index=postings((TEA, 2)))
    assert (await found(store, [COFFEE, TEA], now)).stats == Stats(1, 2, (0, 1))


async def test_a_resent_swap_keeps_its_postings(store: Store, now: float) -> None:
    assert await store.swap(OWNER, BUCKET, "k", None, b"1", None, now, index=postings((COFFEE, 1)))
    assert await store.swap(OWNER, BUCKET, "k", None, b"1", None, now, index=postings((COFFEE, 1)))
    ranking = await found(store, [COFFEE], now)
    assert (ranking.stats, keys(ranking)) == (Stats(1, 1, (1,)), ["k"])


async def test_a_move_takes_the_postings_of_the_old_copies_with_them(store: Store, now: float) -> None:
    await store.put(OTHER, ELSEWHERE, "k", b"old", None, now, index=postings((COFFEE, 1)))
    moved = await store.swap(
        OWNER,
        BUCKET,
        "k",
        None,
        b"new",
        None,
        now,
        also=[(Address(OTHER, ELSEWHERE, "k"), b"old")],
        index=postings((TEA, 1)),
    )
    assert moved
    assert await found(store, [COFFEE], now, OTHER, ELSEWHERE) == Ranking(Stats(0, 0, (0,)), [])
    assert keys(await found(store, [TEA], now)) == ["k"]


@pytest.mark.parametrize("how", ["delete", "delete_many", "delete_bucket", "delete_owner"])
async def test_every_deletion_takes_the_postings(store: Store, now: float, how: str) -> None:
    await store.put(OWNER, BUCKET, "k", b"1", None, now, index=postings((COFFEE, 1)))
    await store.put(OWNER, BUCKET, "kept", b"2", None, now, index=postings((COFFEE, 2)))
    if how == "delete":
        await store.delete(OWNER, BUCKET, "k", now)
    elif how == "delete_many":
        await store.delete_many([Address(OWNER, BUCKET, "k")], now)
    elif how == "delete_bucket":
        await store.delete_bucket(OWNER, BUCKET, now)
    else:
        await store.delete_owner(OWNER)
    ranking = await found(store, [COFFEE], now)
    if how in ("delete_bucket", "delete_owner"):
        assert ranking == Ranking(Stats(0, 0, (0,)), [])
    else:
        assert (ranking.stats, keys(ranking)) == (Stats(1, 2, (1,)), ["kept"])


async def test_expired_entries_are_neither_counted_nor_found(store: Store, now: float) -> None:
    await store.put(OWNER, BUCKET, "short", b"1", now + 10, now, index=postings((COFFEE, 1), (TEA, 1)))
    await store.put(OWNER, BUCKET, "long", b"2", now + HOUR, now, index=postings((COFFEE, 3)))
    assert (await found(store, [COFFEE], now + 5)).stats == Stats(2, 5, (2,))
    for _ in range(2):  # before and after a purge
        ranking = await found(store, [COFFEE, TEA], now + 11)
        assert (ranking.stats, keys(ranking)) == (Stats(1, 3, (1, 0)), ["long"])
        await store.purge_expired(now + 11)


@pytest.mark.parametrize("asked", [3, 300])
async def test_many_terms_are_counted_at_once_each_in_its_own_place(store: Store, now: float, asked: int) -> None:
    """A typo's few hundred near spellings are counted by one ``limit=0`` search (on SQLite past 32 terms, by a
    pass over the fresh postings): each term's live documents in this bucket, in the order asked, 0 for a term none
    holds."""
    terms = [1000 + 7 * number for number in range(asked)]
    held: dict[int, int] = {}
    length = 0
    for number in range(12):
        mine = {terms[(number * 5 + step) % asked]: step + 1 for step in range(min(asked, 4))}
        await store.put(OWNER, BUCKET, f"k{number}", b"1", now + HOUR, now, index=postings(*mine.items()))
        length += sum(mine.values())
        for term in mine:
            held[term] = held.get(term, 0) + 1
    await store.put(OWNER, BUCKET, "gone", b"1", now + 10, now, index=postings((terms[-1], 1)))  # expired below
    await store.put(OWNER, ELSEWHERE, "k", b"1", None, now, index=postings((terms[0], 1)))
    ranking = await store.search(OWNER, BUCKET, terms, now + 11, limit=0)
    assert ranking == Ranking(Stats(12, length, tuple(held.get(term, 0) for term in terms)), [])


async def test_a_search_sees_only_its_own_bucket(store: Store, now: float) -> None:
    await store.put(OWNER, BUCKET, "k", b"1", None, now, index=postings((COFFEE, 1)))
    await store.put(OWNER, ELSEWHERE, "k", b"1", None, now, index=postings((COFFEE, 1)))
    await store.put(OTHER, BUCKET, "k", b"1", None, now, index=postings((COFFEE, 1)))
    assert (await found(store, [COFFEE], now)).stats == Stats(1, 1, (1,))
    assert await found(store, [COFFEE], now, OWNER, "d" * 32) == Ranking(Stats(0, 0, (0,)), [])


async def test_a_write_refused_by_its_quota_leaves_the_index_as_it_was(store: Store, now: float) -> None:
    quota = Quota(values=1, bytes=None)
    await store.put(OWNER, BUCKET, "k", b"1", None, now, quota, postings((COFFEE, 1)))
    with pytest.raises(QuotaExceededError):
        await store.put(OWNER, BUCKET, "other", b"2", None, now, quota, postings((TEA, 1)))
    assert (await found(store, [COFFEE, TEA], now)).stats == Stats(1, 1, (1, 0))


async def test_indexed_words_count_against_the_bytes_of_a_quota(store: Store, now: float) -> None:
    many = Postings({term: 1 for term in range(100, 150)}, 50)  # 50 words: 50 * INDEX_BYTES_PER_WORD bytes
    word_bytes = 50 * INDEX_BYTES_PER_WORD
    quota = Quota(values=None, bytes=2 * (10 + word_bytes) + 5)
    await store.put(OWNER, BUCKET, "a", b"0123456789", None, now, quota, many)
    await store.swap(OWNER, BUCKET, "b", None, b"0123456789", None, now, quota=quota, index=many)
    with pytest.raises(QuotaExceededError) as refused:  # its 10 bytes fit; its words do not
        await store.put(OWNER, BUCKET, "c", b"0123456789", None, now, quota, many)
    assert refused.value.limit == "bytes"
    await store.put(OWNER, BUCKET, "c", b"0123", None, now, quota)  # unindexed, 4 bytes: it fits
    await store.put(OWNER, BUCKET, "a", b"0123456789", None, now, quota, postings((COFFEE, 1)))  # fewer words
    await store.put(OWNER, BUCKET, "d", b"01234", None, now, quota, postings((TEA, 2)))  # in the room they left
    with pytest.raises(QuotaExceededError):
        await store.put(OWNER, BUCKET, "a", b"0123456789", None, now, quota, many)  # the words back: no room
    await store.delete(OWNER, BUCKET, "b", now)
    await store.put(OWNER, BUCKET, "a", b"0123456789", None, now, quota, many)  # b's words went with it


async def test_the_index_survives_a_reopen(make_store: MakeStore, now: float) -> None:
    first = make_store()
    await first.open()
    await first.put(OWNER, BUCKET, "k", b"1", None, now, index=postings((COFFEE, 4)))
    await first.close()
    second = make_store()
    await second.open()
    try:
        ranking = await found(second, [COFFEE], now)
        assert (ranking.stats, keys(ranking)) == (Stats(1, 4, (1,)), ["k"])
    finally:
        await second.close()


async def test_a_value_with_thousands_of_terms_is_indexed_and_removed_whole(store: Store, now: float) -> None:
    many = postings(*((term, 1) for term in range(1000, 6000)))
    await store.put(OWNER, BUCKET, "k", b"1", None, now, index=many)
    assert (await found(store, [1000, 5999], now)).stats == Stats(1, 5000, (1, 1))
    await store.put(OWNER, BUCKET, "k", b"2", None, now, index=postings((COFFEE, 1)))
    assert (await found(store, [1000, 5999, COFFEE], now)).stats == Stats(1, 1, (0, 0, 1))


async def test_scan_says_which_entries_have_postings(store: Store, now: float) -> None:
    await store.put(OWNER, BUCKET, "indexed", b"1", None, now, index=postings((COFFEE, 1)))
    await store.put(OWNER, BUCKET, "plain", b"2", None, now)
    flags = {record.key: record.indexed async for record in store.scan()}
    assert flags == {"indexed": True, "plain": False}
