"""What is particular to the memory store: its footprint, and expired entries leaving when met."""

from __future__ import annotations

import time
import tracemalloc

from mcpkit_storage.stores._store import Record
from mcpkit_storage.stores.memory._memory_store import MemoryStore
from stores.views import keys

OWNER = "0f3c9a1b2d4e5f60718293a4b5c6d7e8"
HOUR = 3600.0


async def addresses(store: MemoryStore) -> list[tuple[str, str, str]]:
    found: list[Record] = [record async for record in store.scan()]
    return [(r.owner, r.bucket, r.key) for r in found]


async def test_a_kept_100_byte_value_costs_under_one_kibibyte() -> None:
    values, owners, now = 20_000, 2_000, time.time()
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        store = MemoryStore()
        for number in range(values):
            owner = f"{number % owners:032x}"
            data = number.to_bytes(4, "big") * 25
            await store.put(owner, "session", f"key-{number}", data, now + HOUR, now)
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    per_value = (after - before) / values
    assert per_value < 1024, f"{per_value:.0f} bytes per kept 100-byte value"
    assert len(await keys(store, owner, "session", now)) == values // owners


async def test_an_expired_entry_is_dropped_when_read() -> None:
    store, now = MemoryStore(), time.time()
    await store.put(OWNER, "user", "stale", b"v", now + HOUR, now)
    await store.put(OWNER, "user", "live", b"v", None, now)
    assert await store.get(OWNER, "user", "stale", now + 2 * HOUR) is None
    assert await addresses(store) == [(OWNER, "user", "live")]


async def test_listing_a_bucket_drops_its_expired_entries() -> None:
    store, now = MemoryStore(), time.time()
    await store.put(OWNER, "user", "stale", b"v", now + HOUR, now)
    await store.put(OWNER, "session", "stale", b"v", now + HOUR, now)
    assert await keys(store, OWNER, "user", now + 2 * HOUR) == []
    assert await addresses(store) == [(OWNER, "session", "stale")]


async def test_emptied_owners_leave_nothing_behind() -> None:
    store, now = MemoryStore(), time.time()
    await store.put(OWNER, "user", "a", b"v", None, now)
    await store.put(OWNER, "session", "b", b"v", now + HOUR, now)
    await store.put("other", "user", "c", b"v", now + HOUR, now)
    assert await store.delete(OWNER, "user", "a", now)
    assert await store.delete_bucket(OWNER, "session", now) == 1
    assert await store.purge_expired(now + 2 * HOUR) == 1
    assert repr(store) == "MemoryStore(owners=0)"
