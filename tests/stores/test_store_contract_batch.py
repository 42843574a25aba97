"""The store contract's batched compare-and-set: ``swap_many`` makes each write as ``swap`` would, in order, and
answers for each one (written, another writer first, or refused by its quota), each whole or not at all.

Every test runs against every store (``stores/conftest.py``).
"""

from __future__ import annotations

from unittest.mock import ANY

from mcpkit_storage.stores._store import Address, Entry, Postings, Quota, QuotaExceededError, Store, Write
from stores.conftest import OTHER, OWNER
from stores.views import keys, records

HOUR = 3600.0
BUCKET = "b" * 32
COFFEE, TEA = 11, 12


def postings(*terms: tuple[int, int]) -> Postings:
    return Postings(dict(terms), sum(count for _, count in terms))


async def test_swap_many_writes_free_keys_and_answers_for_each(store: Store, now: float) -> None:
    await store.put(OWNER, "user", "taken", b"there first", None, now)
    writes = [
        Write(OWNER, "user", "a", None, b"1", None),
        Write(OWNER, "user", "taken", None, b"mine", None),  # expected free: another writer came first
        Write(OTHER, "session", "b", None, b"2", now + HOUR),
    ]
    assert await store.swap_many(writes, now) == [True, False, True]
    assert await records(store) == {
        (OWNER, "user", "a", b"1", None),
        (OWNER, "user", "taken", b"there first", None),
        (OTHER, "session", "b", b"2", now + HOUR),
    }
    assert await store.swap_many([], now) == []


async def test_swap_many_sees_its_own_earlier_writes(store: Store, now: float) -> None:
    writes = [
        Write(OWNER, "user", "k", None, b"first", None),
        Write(OWNER, "user", "k", None, b"second", None),  # the key is no longer free
        Write(OWNER, "user", "k", b"first", b"third", None),
    ]
    assert await store.swap_many(writes, now) == [True, False, True]
    assert await store.get(OWNER, "user", "k", now) == Entry(b"third", None, ANY)


async def test_swap_many_replaces_what_it_expects_and_moves_old_copies(store: Store, now: float) -> None:
    await store.put(OWNER, "user", "k", b"old", None, now)
    await store.put(OTHER, "user", "m", b"old copy", None, now)
    moved = Write(OWNER, "user", "m", None, b"moved", None, also=[(Address(OTHER, "user", "m"), b"old copy")])
    writes = [Write(OWNER, "user", "k", b"old", b"new", None), moved]
    assert await store.swap_many(writes, now) == [True, True]
    assert await records(store) == {(OWNER, "user", "k", b"new", None), (OWNER, "user", "m", b"moved", None)}


async def test_swap_many_reports_each_write_its_quota_refused_and_makes_the_rest(store: Store, now: float) -> None:
    quota = Quota(values=2, bytes=None)
    writes = [Write(OWNER, "user", key, None, b"1", None, quota=quota) for key in "abcd"]
    writes.append(Write(OTHER, "user", "e", None, b"1", None, quota=quota))  # another owner: a quota of its own
    results = await store.swap_many(writes, now)
    assert results[:2] == [True, True]
    assert results[4] is True
    for refused in results[2:4]:
        assert isinstance(refused, QuotaExceededError)
        assert (refused.limit, refused.allowed) == ("values", 2)
    assert await keys(store, OWNER, "user", now) == ["a", "b"]
    assert await keys(store, OTHER, "user", now) == ["e"]


async def test_swap_many_counts_a_refused_writes_postings_nowhere(store: Store, now: float) -> None:
    tight = Quota(values=None, bytes=100)
    big = postings(*((term, 1) for term in range(1, 5)))  # 4 words: 128 bytes charged beyond the value's own
    writes = [
        Write(OWNER, BUCKET, "small", None, b"1", None, quota=tight, postings=postings((COFFEE, 1))),
        Write(OWNER, BUCKET, "big", None, b"2", None, quota=tight, postings=big),
        Write(OWNER, BUCKET, "tea", None, b"3", None, quota=tight, postings=postings((TEA, 2))),
    ]
    results = await store.swap_many(writes, now)
    assert results[0] is True
    assert isinstance(results[1], QuotaExceededError)
    assert results[2] is True
    ranking = await store.search(OWNER, BUCKET, [COFFEE, TEA, 1], now, limit=10)
    assert ranking.stats.documents == 2
    assert ranking.stats.frequencies == (1, 1, 0)
    assert sorted(key for key, _ in ranking.hits) == ["small", "tea"]


async def test_swap_many_resent_reports_success_and_changes_nothing(store: Store, now: float) -> None:
    writes = [Write(OWNER, BUCKET, "k", None, b"1", None, postings=postings((COFFEE, 1)))]
    assert await store.swap_many(writes, now) == [True]
    assert await store.swap_many(writes, now) == [True]  # a client's resend: already applied
    ranking = await store.search(OWNER, BUCKET, [COFFEE], now, limit=10)
    assert ranking.stats.documents == 1
    assert [key for key, _ in ranking.hits] == ["k"]


async def test_swap_many_whole_writes_all_of_them(store: Store, now: float) -> None:
    await store.put(OWNER, BUCKET, "k", b"old", None, now)
    writes = [
        Write(OWNER, BUCKET, "k", b"old", b"new", None, postings=postings((TEA, 1))),
        Write(OWNER, BUCKET, "k history", None, b"versions", now + HOUR),
    ]
    assert await store.swap_many(writes, now, whole=True) == [True, True]
    assert await records(store) == {
        (OWNER, BUCKET, "k", b"new", None),
        (OWNER, BUCKET, "k history", b"versions", now + HOUR),
    }
    assert await store.swap_many(writes, now, whole=True) == [True, True]  # a client's resend: already applied
    ranking = await store.search(OWNER, BUCKET, [TEA], now, limit=10)
    assert (ranking.stats.documents, [key for key, _ in ranking.hits]) == (1, ["k"])


async def test_swap_many_whole_writes_nothing_when_a_later_expectation_fails(store: Store, now: float) -> None:
    await store.put(OWNER, BUCKET, "k history", b"moved on", None, now)
    writes = [
        Write(OWNER, BUCKET, "k", None, b"value", None, postings=postings((TEA, 1))),
        Write(OWNER, BUCKET, "k history", b"what I read", b"versions", None),  # another writer came first
    ]
    assert await store.swap_many(writes, now, whole=True) == [False, False]
    assert await records(store) == {(OWNER, BUCKET, "k history", b"moved on", None)}
    assert (await store.search(OWNER, BUCKET, [TEA], now, limit=10)).hits == []


async def test_swap_many_whole_quota_counts_every_write_before_writing_any(store: Store, now: float) -> None:
    quota = Quota(values=2, bytes=None)
    await store.put(OWNER, "user", "a", b"1", None, now, quota)
    writes = [
        Write(OWNER, "user", "b", None, b"2", None, quota=quota),  # fits alone
        Write(OWNER, "user", "b history", None, b"3", None, quota=quota),  # not with b
    ]
    results = await store.swap_many(writes, now, whole=True)
    assert results[0] is False
    assert isinstance(results[1], QuotaExceededError)
    assert (results[1].limit, results[1].allowed) == ("values", 2)
    assert await keys(store, OWNER, "user", now) == ["a"]


async def test_swap_many_whole_refused_by_bytes_puts_back_the_first_writes_postings(store: Store, now: float) -> None:
    tight = Quota(values=None, bytes=200)
    await store.put(OWNER, BUCKET, "k", b"old", None, now, tight, postings((COFFEE, 1)))
    writes = [
        Write(OWNER, BUCKET, "k", b"old", b"new", None, quota=tight, postings=postings((TEA, 1))),
        Write(OWNER, BUCKET, "k history", None, b"v" * 180, None, quota=tight),  # 3 + 32 + 180 > 200
    ]
    results = await store.swap_many(writes, now, whole=True)
    assert results[0] is False
    assert isinstance(results[1], QuotaExceededError)
    assert results[1].limit == "bytes"
    assert await records(store) == {(OWNER, BUCKET, "k", b"old", None)}
    ranking = await store.search(OWNER, BUCKET, [COFFEE, TEA], now, limit=10)
    assert ranking.stats.frequencies == (1, 0)
    assert [key for key, _ in ranking.hits] == ["k"]
