"""The store contract's search index: postings written with a value, gone with it, over live entries only.

Every test runs against memory, SQLite and a real Redis (``stores/conftest.py``). Terms here are small
numbers standing for blind terms; a store never sees anything else.
"""

from __future__ import annotations

import pytest

from mcpkit_remember._store import Address, Corpus, Postings, Quota, QuotaExceededError, Store
from stores.conftest import OTHER, OWNER, MakeStore

HOUR = 3600.0
BUCKET = "b" * 32
ELSEWHERE = "c" * 32

COFFEE, TEA, MILK = 11, 12, 13


def postings(*terms: tuple[int, int]) -> Postings:
    return Postings(tuple(terms), sum(count for _, count in terms))


def normal(corpus: Corpus) -> tuple[int, int, dict[int, set[tuple[str, int, int]]]]:
    """A corpus with each term's postings as a set: stores list them in any order."""
    return corpus.documents, corpus.length, {term: set(held) for term, held in corpus.postings.items()}


async def test_search_returns_the_bucket_statistics_and_the_postings_of_the_asked_terms(
    store: Store, now: float
) -> None:
    await store.put(OWNER, BUCKET, "k1", b"1", None, now, index=postings((COFFEE, 2), (MILK, 1)))
    await store.put(OWNER, BUCKET, "k2", b"2", None, now, index=postings((TEA, 1)))
    await store.put(OWNER, BUCKET, "k3", b"3", None, now, index=postings())  # searchable, but no terms
    corpus = await store.search(OWNER, BUCKET, [COFFEE, TEA, 99], now)
    assert normal(corpus) == (3, 4, {COFFEE: {("k1", 2, 3)}, TEA: {("k2", 1, 1)}})


async def test_entries_written_without_postings_are_not_searched(store: Store, now: float) -> None:
    await store.put(OWNER, BUCKET, "plain", b"1", None, now)
    await store.put(OWNER, BUCKET, "k", b"2", None, now, index=postings((TEA, 1)))
    assert normal(await store.search(OWNER, BUCKET, [TEA], now)) == (1, 1, {TEA: {("k", 1, 1)}})


async def test_replacing_a_value_replaces_its_postings(store: Store, now: float) -> None:
    await store.put(OWNER, BUCKET, "k", b"1", None, now, index=postings((COFFEE, 1)))
    await store.put(OWNER, BUCKET, "k", b"2", None, now, index=postings((TEA, 3)))
    assert normal(await store.search(OWNER, BUCKET, [COFFEE, TEA], now)) == (1, 3, {TEA: {("k", 3, 3)}})
    await store.put(OWNER, BUCKET, "k", b"3", None, now)  # written over without postings: no longer found
    assert normal(await store.search(OWNER, BUCKET, [COFFEE, TEA], now)) == (0, 0, {})


async def test_a_swap_writes_postings_and_a_failed_swap_leaves_them(store: Store, now: float) -> None:
    assert await store.swap(OWNER, BUCKET, "k", None, b"1", None, now, index=postings((COFFEE, 1)))
    assert not await store.swap(OWNER, BUCKET, "k", b"not this", b"2", None, now, index=postings((TEA, 1)))
    assert normal(await store.search(OWNER, BUCKET, [COFFEE, TEA], now)) == (1, 1, {COFFEE: {("k", 1, 1)}})
    assert await store.swap(OWNER, BUCKET, "k", b"1", b"2", None, now, index=postings((TEA, 2)))
    assert normal(await store.search(OWNER, BUCKET, [COFFEE, TEA], now)) == (1, 2, {TEA: {("k", 2, 2)}})


async def test_a_resent_swap_keeps_its_postings(store: Store, now: float) -> None:
    assert await store.swap(OWNER, BUCKET, "k", None, b"1", None, now, index=postings((COFFEE, 1)))
    assert await store.swap(OWNER, BUCKET, "k", None, b"1", None, now, index=postings((COFFEE, 1)))
    assert normal(await store.search(OWNER, BUCKET, [COFFEE], now)) == (1, 1, {COFFEE: {("k", 1, 1)}})


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
    assert normal(await store.search(OTHER, ELSEWHERE, [COFFEE], now)) == (0, 0, {})
    assert normal(await store.search(OWNER, BUCKET, [TEA], now)) == (1, 1, {TEA: {("k", 1, 1)}})


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
    expected = (0, 0, {}) if how in ("delete_bucket", "delete_owner") else (1, 2, {COFFEE: {("kept", 2, 2)}})
    assert normal(await store.search(OWNER, BUCKET, [COFFEE], now)) == expected


async def test_expired_entries_are_neither_counted_nor_found(store: Store, now: float) -> None:
    await store.put(OWNER, BUCKET, "short", b"1", now + 10, now, index=postings((COFFEE, 1), (TEA, 1)))
    await store.put(OWNER, BUCKET, "long", b"2", now + HOUR, now, index=postings((COFFEE, 3)))
    assert normal(await store.search(OWNER, BUCKET, [COFFEE], now + 5))[:2] == (2, 5)
    assert normal(await store.search(OWNER, BUCKET, [COFFEE, TEA], now + 11)) == (1, 3, {COFFEE: {("long", 3, 3)}})
    await store.purge_expired(now + 11)
    assert normal(await store.search(OWNER, BUCKET, [COFFEE, TEA], now + 11)) == (1, 3, {COFFEE: {("long", 3, 3)}})


async def test_a_search_sees_only_its_own_bucket(store: Store, now: float) -> None:
    await store.put(OWNER, BUCKET, "k", b"1", None, now, index=postings((COFFEE, 1)))
    await store.put(OWNER, ELSEWHERE, "k", b"1", None, now, index=postings((COFFEE, 1)))
    await store.put(OTHER, BUCKET, "k", b"1", None, now, index=postings((COFFEE, 1)))
    assert normal(await store.search(OWNER, BUCKET, [COFFEE], now)) == (1, 1, {COFFEE: {("k", 1, 1)}})
    assert normal(await store.search(OWNER, "d" * 32, [COFFEE], now)) == (0, 0, {})


async def test_a_write_refused_by_its_quota_leaves_the_index_as_it_was(store: Store, now: float) -> None:
    quota = Quota(values=1, bytes=None)
    await store.put(OWNER, BUCKET, "k", b"1", None, now, quota, postings((COFFEE, 1)))
    with pytest.raises(QuotaExceededError):
        await store.put(OWNER, BUCKET, "other", b"2", None, now, quota, postings((TEA, 1)))
    assert normal(await store.search(OWNER, BUCKET, [COFFEE, TEA], now)) == (1, 1, {COFFEE: {("k", 1, 1)}})


async def test_the_index_survives_a_reopen(make_store: MakeStore, now: float) -> None:
    first = make_store()
    await first.open()
    await first.put(OWNER, BUCKET, "k", b"1", None, now, index=postings((COFFEE, 4)))
    await first.close()
    second = make_store()
    await second.open()
    try:
        assert normal(await second.search(OWNER, BUCKET, [COFFEE], now)) == (1, 4, {COFFEE: {("k", 4, 4)}})
    finally:
        await second.close()


async def test_a_value_with_thousands_of_terms_is_indexed_and_removed_whole(store: Store, now: float) -> None:
    many = postings(*((term, 1) for term in range(1000, 6000)))
    await store.put(OWNER, BUCKET, "k", b"1", None, now, index=many)
    assert normal(await store.search(OWNER, BUCKET, [1000, 5999], now))[:2] == (1, 5000)
    await store.put(OWNER, BUCKET, "k", b"2", None, now, index=postings((COFFEE, 1)))
    assert normal(await store.search(OWNER, BUCKET, [1000, 5999, COFFEE], now)) == (1, 1, {COFFEE: {("k", 1, 1)}})
