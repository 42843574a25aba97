"""What every remember store promises, run against memory, SQLite and a real Redis."""

from __future__ import annotations

import asyncio
from unittest.mock import ANY

import pytest

from mcpkit_storage.stores._store import Entry, Store
from mcpkit_storage.stores.memory._memory_store import MemoryStore
from stores._counter import increment, read
from stores.conftest import OTHER, OWNER, MakeStore
from stores.views import exists, keys, records

HOUR, DAY = 3600.0, 24 * 3600.0


async def test_get_returns_the_bytes_and_deadline_put_stored(store: Store, now: float) -> None:
    every_byte = bytes(range(256))
    await store.put(OWNER, "user", "blob", every_byte, now + DAY, now)
    await store.put(OWNER, "user", "empty", b"", None, now)
    assert await store.get(OWNER, "user", "blob", now) == Entry(every_byte, now + DAY, ANY)
    assert await store.get(OWNER, "user", "empty", now) == Entry(b"", None, ANY)


async def test_get_of_a_missing_address_is_none(store: Store, now: float) -> None:
    await store.put(OWNER, "user", "here", b"1", None, now)
    assert await store.get(OWNER, "user", "there", now) is None
    assert await store.get(OWNER, "session", "here", now) is None
    assert await store.get(OTHER, "user", "here", now) is None


async def test_put_replaces_the_bytes_and_the_deadline(store: Store, now: float) -> None:
    await store.put(OWNER, "user", "k", b"old", now + HOUR, now)
    await store.put(OWNER, "user", "k", b"new", None, now)
    assert await store.get(OWNER, "user", "k", now + DAY) == Entry(b"new", None, ANY)
    await store.put(OWNER, "user", "k", b"newer", now + HOUR, now)
    assert await store.get(OWNER, "user", "k", now + 2 * HOUR) is None


async def test_a_day_long_value_is_there_after_23_hours_and_gone_after_25(store: Store, now: float) -> None:
    await store.put(OWNER, "session", "k", b"v", now + DAY, now)
    later, too_late = now + 23 * HOUR, now + 25 * HOUR
    assert await store.get(OWNER, "session", "k", later) == Entry(b"v", now + DAY, ANY)
    assert await exists(store, OWNER, "session", "k", later)
    assert await keys(store, OWNER, "session", later) == ["k"]
    assert await store.get(OWNER, "session", "k", too_late) is None
    assert not await exists(store, OWNER, "session", "k", too_late)
    assert await keys(store, OWNER, "session", too_late) == []


async def test_the_deadline_itself_is_already_expired(store: Store, now: float) -> None:
    await store.put(OWNER, "session", "k", b"v", now + HOUR, now)
    assert await store.get(OWNER, "session", "k", now + HOUR) is None


async def test_exists_sees_only_live_entries(store: Store, now: float) -> None:
    await store.put(OWNER, "user", "k", b"v", now + HOUR, now)
    assert await exists(store, OWNER, "user", "k", now)
    assert not await exists(store, OWNER, "user", "other", now)
    assert not await exists(store, OWNER, "user", "k", now + DAY)


async def test_keys_are_sorted_and_leave_out_expired_keys_and_other_buckets(store: Store, now: float) -> None:
    for key in ["b", "a", "é", "B", "c:d", "10", "9"]:
        await store.put(OWNER, "user", key, b"v", None, now)
    await store.put(OWNER, "user", "expiring", b"v", now + HOUR, now)
    await store.put(OWNER, "session", "elsewhere", b"v", None, now)
    await store.put(OTHER, "user", "someone-else", b"v", None, now)
    assert await keys(store, OWNER, "user", now) == sorted(["b", "a", "é", "B", "c:d", "10", "9", "expiring"])
    assert await keys(store, OWNER, "user", now + DAY) == sorted(["b", "a", "é", "B", "c:d", "10", "9"])
    assert await keys(store, OWNER, "tool.none", now) == []


async def test_keys_match_exactly_case_and_wildcards_included(store: Store, now: float) -> None:
    await store.put(OWNER, "user", "Key", b"upper", None, now)
    await store.put(OWNER, "user", "a%", b"percent", None, now)
    await store.put(OWNER, "user", "a_", b"underscore", None, now)
    assert await store.get(OWNER, "user", "key", now) is None
    assert await store.get(OWNER, "user", "a%", now) == Entry(b"percent", None, ANY)
    assert await store.get(OWNER, "user", "ab", now) is None
    assert not await store.delete(OWNER, "user", "a*", now)
    assert await keys(store, OWNER, "user", now) == ["Key", "a%", "a_"]


async def test_delete_reports_whether_a_live_entry_was_there(store: Store, now: float) -> None:
    await store.put(OWNER, "user", "live", b"v", None, now)
    await store.put(OWNER, "user", "stale", b"v", now + HOUR, now)
    assert await store.delete(OWNER, "user", "live", now)
    assert not await store.delete(OWNER, "user", "live", now)
    assert not await store.delete(OWNER, "user", "never", now)
    assert not await store.delete(OWNER, "user", "stale", now + DAY)
    assert await records(store) == set()


async def test_swap_from_none_creates_an_absent_entry(store: Store, now: float) -> None:
    assert await store.swap(OWNER, "user", "k", None, b"first", now + DAY, now)
    assert await store.get(OWNER, "user", "k", now) == Entry(b"first", now + DAY, ANY)


async def test_swap_from_none_replaces_an_expired_entry(store: Store, now: float) -> None:
    await store.put(OWNER, "user", "k", b"old", now + HOUR, now)
    assert await store.swap(OWNER, "user", "k", None, b"fresh", None, now + DAY)
    assert await store.get(OWNER, "user", "k", now + DAY) == Entry(b"fresh", None, ANY)


async def test_swap_from_none_fails_when_a_live_entry_is_there(store: Store, now: float) -> None:
    await store.put(OWNER, "user", "k", b"theirs", None, now)
    assert not await store.swap(OWNER, "user", "k", None, b"mine", None, now)
    assert await store.get(OWNER, "user", "k", now) == Entry(b"theirs", None, ANY)


async def test_swap_from_matching_bytes_replaces_bytes_and_deadline(store: Store, now: float) -> None:
    await store.put(OWNER, "user", "k", b"1", None, now)
    assert await store.swap(OWNER, "user", "k", b"1", b"2", now + HOUR, now)
    assert await store.get(OWNER, "user", "k", now) == Entry(b"2", now + HOUR, ANY)
    assert await keys(store, OWNER, "user", now + DAY) == []


async def test_swap_from_wrong_bytes_changes_nothing(store: Store, now: float) -> None:
    await store.put(OWNER, "user", "k", b"12", now + DAY, now)
    assert not await store.swap(OWNER, "user", "k", b"1", b"3", None, now)
    assert not await store.swap(OWNER, "user", "k", b"12 ", b"3", None, now)
    assert await store.get(OWNER, "user", "k", now) == Entry(b"12", now + DAY, ANY)


async def test_swap_from_bytes_fails_on_absent_and_expired_entries(store: Store, now: float) -> None:
    assert not await store.swap(OWNER, "user", "absent", b"", b"x", None, now)
    await store.put(OWNER, "user", "stale", b"v", now + HOUR, now)
    assert not await store.swap(OWNER, "user", "stale", b"v", b"x", None, now + DAY)
    assert await store.get(OWNER, "user", "absent", now) is None
    assert await store.get(OWNER, "user", "stale", now + DAY) is None


async def test_a_replayed_swap_finds_its_own_bytes_and_reports_success(store: Store, now: float) -> None:
    # A client that lost the reply (a dropped connection) sends the same swap again: it must not
    # report a conflict, or an update would run its function twice (an increment counting two).
    assert await store.swap(OWNER, "user", "k", None, b"one", None, now)
    assert await store.swap(OWNER, "user", "k", None, b"one", None, now)
    assert await store.swap(OWNER, "user", "k", b"one", b"two", now + HOUR, now)
    assert await store.swap(OWNER, "user", "k", b"one", b"two", now + HOUR, now)
    assert await store.get(OWNER, "user", "k", now) == Entry(b"two", now + HOUR, ANY)
    assert not await store.swap(OWNER, "user", "k", b"one", b"three", None, now)
    assert await store.get(OWNER, "user", "k", now) == Entry(b"two", now + HOUR, ANY)


async def test_racing_increments_through_swap_lose_nothing(store: Store, now: float) -> None:
    lost = await asyncio.gather(*(increment(store, OWNER, "counter", 25, now) for _ in range(16)))
    assert await read(store, OWNER, "counter", now) == 16 * 25
    assert sum(lost) > 0, "the writers never collided, so this proved nothing"


async def test_delete_bucket_empties_only_that_bucket_and_counts_live_entries(store: Store, now: float) -> None:
    await store.put(OWNER, "tool.notes", "a", b"v", None, now)
    await store.put(OWNER, "tool.notes", "b", b"v", now + DAY, now)
    await store.put(OWNER, "tool.notes", "stale", b"v", now + HOUR, now)
    await store.put(OWNER, "tool.notes2", "a", b"kept", None, now)
    await store.put(OWNER, "user", "a", b"kept", None, now)
    await store.put(OTHER, "tool.notes", "a", b"kept", None, now)
    assert await store.delete_bucket(OWNER, "tool.notes", now + 2 * HOUR) == 2
    assert await keys(store, OWNER, "tool.notes", now) == []
    assert await records(store) == {
        (OWNER, "tool.notes2", "a", b"kept", None),
        (OWNER, "user", "a", b"kept", None),
        (OTHER, "tool.notes", "a", b"kept", None),
    }
    assert await store.delete_bucket(OWNER, "tool.notes", now) == 0


async def test_delete_owner_removes_every_bucket_of_that_owner_only(store: Store, now: float) -> None:
    prefix_owner = OWNER[:8]
    for bucket in ["user", "session", "global", "tool.x"]:
        await store.put(OWNER, bucket, "k", b"v", None, now)
        await store.put(prefix_owner, bucket, "k", b"kept", None, now)
    await store.put(OWNER, "tool.x", "stale", b"v", now + HOUR, now)
    assert await store.delete_owner(OWNER) == 5
    assert await store.delete_owner(OWNER) == 0
    assert {r[0] for r in await records(store)} == {prefix_owner}
    assert len(await records(store)) == 4


async def test_colons_unicode_and_prefix_owners_do_not_collide(store: Store, now: float) -> None:
    addresses = [
        (OWNER, "user", "a:b"),
        (OWNER, "user", "a"),
        (OWNER, "user", "a:"),
        (OWNER, "user", ":"),
        (OWNER, "user", "user:a:b"),
        (OWNER, "user", "i:user"),
        (OWNER, "user", "{tag}"),
        (OWNER, "user", "ключ 🙂"),
        (OWNER, "tool.a", "b"),
        (OWNER, "tool.a.b", ""),
        (OWNER[:8], "user", "a:b"),
        (OWNER + "0", "user", "a:b"),
    ]
    for number, (owner, bucket, key) in enumerate(addresses):
        await store.put(owner, bucket, key, b"%d" % number, None, now)
    for number, (owner, bucket, key) in enumerate(addresses):
        assert await store.get(owner, bucket, key, now) == Entry(b"%d" % number, None, ANY), (owner, bucket, key)
    user_keys = sorted(key for owner, bucket, key in addresses if (owner, bucket) == (OWNER, "user"))
    assert await keys(store, OWNER, "user", now) == user_keys
    assert await keys(store, OWNER, "tool.a", now) == ["b"]
    assert await records(store) == {
        (owner, bucket, key, b"%d" % number, None) for number, (owner, bucket, key) in enumerate(addresses)
    }


async def test_scan_yields_every_entry_live_or_expired(store: Store, now: float) -> None:
    assert await records(store) == set()
    await store.put(OWNER, "user", "live", b"1", None, now)
    await store.put(OWNER, "session", "stale", b"2", now + 1, now)
    await store.put(OTHER, "tool.t", "k", b"3", now + DAY, now)
    assert await records(store) == {
        (OWNER, "user", "live", b"1", None),
        (OWNER, "session", "stale", b"2", now + 1),
        (OTHER, "tool.t", "k", b"3", now + DAY),
    }


async def test_scan_pages_through_many_entries(store: Store, now: float) -> None:
    for number in range(1234):
        await store.put(OWNER if number % 2 else OTHER, "user", f"k{number}", b"v", None, now)
    assert len(await records(store)) == 1234


async def test_purge_expired_deletes_only_entries_past_their_deadline(store: Store, now: float) -> None:
    await store.put(OWNER, "user", "forever", b"1", None, now)
    await store.put(OWNER, "user", "hour", b"2", now + HOUR, now)
    await store.put(OWNER, "session", "hour", b"3", now + HOUR, now)
    await store.put(OTHER, "user", "day", b"4", now + DAY, now)
    assert await store.purge_expired(now) == 0
    assert await store.purge_expired(now + 2 * HOUR) == 2
    assert await store.purge_expired(now + 2 * HOUR) == 0
    assert await records(store) == {(OWNER, "user", "forever", b"1", None), (OTHER, "user", "day", b"4", now + DAY)}


async def test_reopening_keeps_the_data(make_store: MakeStore, now: float) -> None:
    first = make_store()
    if isinstance(first, MemoryStore):
        pytest.skip("a memory store keeps nothing beyond its process")
    await first.open()
    await first.put(OWNER, "user", "k", b"kept", now + DAY, now)
    await first.close()
    second = make_store()
    await second.open()
    try:
        assert await second.get(OWNER, "user", "k", now) == Entry(b"kept", now + DAY, ANY)
    finally:
        await second.close()


async def test_notes_are_kept_replaced_removed_and_seen_by_every_handle_on_the_store(
    make_store: MakeStore, now: float
) -> None:
    first = make_store()
    await first.open()
    try:
        assert await first.notes() == {}
        await first.note("rotated-to", "0a1b2c3d")
        await first.note("held:p1:0a1b2c3d,4e5f6a7b", "1700000000.0")
        await first.note("held:p2:0a1b2c3d", "1690000000.0")
        await first.note("rotated-to", "4e5f6a7b")
        await first.note("held:p2:0a1b2c3d", None)
        await first.note("held:never-kept", None)
        await first.put(OWNER, "user", "k", b"v", None, now)
        assert await records(first) == {(OWNER, "user", "k", b"v", None)}  # a note is no entry
        assert await first.purge_expired(now + DAY) == 0
        if not isinstance(first, MemoryStore):  # another handle: another server, or `mcpkit remember rotate`
            second = make_store()
            await second.open()
            try:
                seen = await second.notes()
            finally:
                await second.close()
        else:
            seen = await first.notes()
    finally:
        await first.close()
    assert seen == {"rotated-to": "4e5f6a7b", "held:p1:0a1b2c3d,4e5f6a7b": "1700000000.0"}
