"""The rest of the store contract: reading many addresses, moving a value between addresses, quotas, bucket entries.

Every test runs against memory, SQLite and a real Redis (``stores/conftest.py``).
"""

from __future__ import annotations

import asyncio
from unittest.mock import ANY

import pytest

from mcpkit_storage.stores._store import Address, Entry, Quota, QuotaExceededError, Store
from stores.conftest import OTHER, OWNER
from stores.views import keys, records

HOUR, DAY = 3600.0, 24 * 3600.0
HERE = Address(OWNER, "user", "k")
THERE = Address(OTHER, "user", "k")  # the same key under another owner, as during a rotation of the secret
LEGACY = Address(OWNER, "plain-bucket", "plain-key")


async def test_get_many_returns_each_live_entry_in_order(store: Store, now: float) -> None:
    await store.put(*HERE, b"1", None, now)
    await store.put(*LEGACY, b"3", now + HOUR, now)
    assert await store.get_many([THERE, HERE, LEGACY, HERE], now) == [
        None,
        Entry(b"1", None, ANY),
        Entry(b"3", now + HOUR, ANY),
        Entry(b"1", None, ANY),
    ]
    assert await store.get_many([HERE, LEGACY], now + DAY) == [Entry(b"1", None, ANY), None]
    assert await store.get_many([], now) == []


async def test_delete_many_removes_each_address_and_counts_the_live_ones(store: Store, now: float) -> None:
    await store.put(*HERE, b"1", None, now)
    await store.put(*THERE, b"2", now + HOUR, now)
    await store.put(OWNER, "user", "kept", b"3", None, now)
    assert await store.delete_many([HERE, THERE, LEGACY], now + DAY) == 1
    assert await records(store) == {(OWNER, "user", "kept", b"3", None)}
    assert await store.delete_many([HERE], now) == 0


async def test_a_swap_moves_a_value_and_deletes_the_old_copies_in_one_step(store: Store, now: float) -> None:
    await store.put(*THERE, b"old copy", now + DAY, now)
    await store.put(*LEGACY, b"older copy", None, now)
    also = [(THERE, b"old copy"), (LEGACY, b"older copy")]
    assert await store.swap(*HERE, None, b"moved", now + DAY, now, also=also)
    assert await records(store) == {(*HERE, b"moved", now + DAY)}


async def test_a_move_changes_nothing_when_an_old_copy_changed_or_went_meanwhile(store: Store, now: float) -> None:
    await store.put(*THERE, b"newer, written meanwhile", None, now)
    assert not await store.swap(*HERE, None, b"moved", None, now, also=[(THERE, b"what the mover read")])
    assert not await store.swap(*HERE, None, b"moved", None, now, also=[(LEGACY, b"deleted meanwhile")])
    assert not await store.swap(*HERE, None, b"moved", None, now, also=[(THERE, None)])  # expected none there
    assert await records(store) == {(*THERE, b"newer, written meanwhile", None)}


async def test_a_move_never_overwrites_a_value_written_at_its_target(store: Store, now: float) -> None:
    await store.put(*THERE, b"old copy", None, now)
    await store.put(*HERE, b"written since", None, now)
    assert not await store.swap(*HERE, None, b"moved", None, now, also=[(THERE, b"old copy")])
    assert await store.get(*HERE, now) == Entry(b"written since", None, ANY)


async def test_racing_moves_and_deletes_leave_at_most_one_copy_and_never_resurrect(store: Store, now: float) -> None:
    # A rotation moving a value while its owner forgets it: the value is gone afterwards, whoever won.
    for round_ in range(30):
        key = f"k{round_}"
        old, new = Address(OTHER, "user", key), Address(OWNER, "user", key)
        await store.put(*old, b"v", None, now)

        async def move(old: Address = old, new: Address = new) -> bool:
            return await store.swap(*new, None, b"moved", None, now, also=[(old, b"v")])

        async def forget(old: Address = old, new: Address = new) -> int:
            await asyncio.sleep(0)
            return await store.delete_many([new, old], now)

        await asyncio.gather(move(), forget())
        assert await store.get_many([old, new], now) == [None, None]


async def test_a_replayed_move_reports_success(store: Store, now: float) -> None:
    await store.put(*THERE, b"old copy", None, now)
    assert await store.swap(*HERE, None, b"moved", None, now, also=[(THERE, b"old copy")])
    assert await store.swap(*HERE, None, b"moved", None, now, also=[(THERE, b"old copy")])
    assert await records(store) == {(*HERE, b"moved", None)}


async def test_entries_lists_a_buckets_live_entries_sorted_by_key(store: Store, now: float) -> None:
    await store.put(OWNER, "b1", "z", b"1", None, now)
    await store.put(OWNER, "b1", "a", b"2", now + DAY, now)
    await store.put(OWNER, "b1", "m", b"3", now + HOUR, now)
    await store.put(OWNER, "b2", "x", b"4", None, now)
    await store.put(OTHER, "b1", "y", b"5", None, now)
    assert await store.entries(OWNER, "b1", now + 2 * HOUR) == [
        ("a", Entry(b"2", now + DAY, ANY)),
        ("z", Entry(b"1", None, ANY)),
    ]
    assert await store.entries(OWNER, "nothing", now) == []


QUOTA = Quota(values=3, bytes=10)


async def test_a_quota_refuses_a_value_beyond_the_count_and_changes_nothing(store: Store, now: float) -> None:
    for key in "abc":
        await store.put(OWNER, "user", key, b"1", None, now, QUOTA)
    with pytest.raises(QuotaExceededError) as refused:
        await store.put(OWNER, "user", "d", b"1", None, now, QUOTA)
    assert (refused.value.limit, refused.value.allowed) == ("values", 3)
    with pytest.raises(QuotaExceededError):
        await store.swap(OWNER, "user", "d", None, b"1", None, now, quota=QUOTA)
    assert await keys(store, OWNER, "user", now) == ["a", "b", "c"]
    await store.put(OWNER, "user", "a", b"22", None, now, QUOTA)  # replacing a value adds none
    await store.put(OTHER, "user", "d", b"1", None, now, QUOTA)  # another owner has a quota of its own
    await store.put(OWNER, "session", "d", b"1", None, now, QUOTA)  # and so has another bucket


async def test_a_quota_refuses_bytes_beyond_the_limit_but_lets_a_value_shrink(store: Store, now: float) -> None:
    await store.put(OWNER, "user", "a", b"123456", None, now, QUOTA)
    with pytest.raises(QuotaExceededError) as refused:
        await store.put(OWNER, "user", "b", b"12345", None, now, QUOTA)
    assert (refused.value.limit, refused.value.allowed) == ("bytes", 10)
    with pytest.raises(QuotaExceededError):
        await store.swap(OWNER, "user", "a", b"123456", b"12345678901", None, now, quota=QUOTA)
    await store.put(OWNER, "user", "b", b"1234", None, now, QUOTA)  # exactly 10 bytes
    await store.put(OWNER, "user", "a", b"1", None, now, QUOTA)  # smaller
    await store.put(OWNER, "user", "c", b"12345", None, now, QUOTA)
    tight = Quota(values=None, bytes=5)
    await store.put(OWNER, "user", "c", b"1234", None, now, tight)  # over a lowered limit, but shrinking


async def test_expired_and_deleted_values_do_not_count_against_a_quota(store: Store, now: float) -> None:
    for key in "abc":
        await store.put(OWNER, "user", key, b"1", now + HOUR, now, QUOTA)
    later = now + 2 * HOUR
    for key in "def":
        await store.put(OWNER, "user", key, b"12", None, later, QUOTA)
    assert await store.delete(OWNER, "user", "d", later)
    await store.delete_many([Address(OWNER, "user", "e")], later)
    await store.put(OWNER, "user", "g", b"123", None, later, QUOTA)
    await store.put(OWNER, "user", "h", b"123", None, later, QUOTA)
    assert await keys(store, OWNER, "user", later) == ["f", "g", "h"]
    assert await store.delete_bucket(OWNER, "user", later) == 3
    for key in "xyz":
        await store.put(OWNER, "user", key, b"123", None, later, QUOTA)


async def test_a_move_counts_against_the_target_buckets_quota(store: Store, now: float) -> None:
    for key in "abc":
        await store.put(OWNER, "user", key, b"1", None, now)
    await store.put(*THERE, b"1", None, now)
    with pytest.raises(QuotaExceededError):
        await store.swap(OWNER, "user", "d", None, b"1", None, now, also=[(THERE, b"1")], quota=QUOTA)
    assert await store.get(*THERE, now) == Entry(b"1", None, ANY)
