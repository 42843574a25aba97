"""The store contract's first-write time (``Entry.created``, issue 39): every write keeps the one of the live entry it
replaces and sets ``now`` for a new key (absent, deleted or expired), a value moving between addresses keeps its
own, and a write that gives one (an import) leaves exactly that.

Every test runs against every store (``stores/conftest.py``); ``created`` is read as ``scan()`` yields it, which is
what export reads on every store.
"""

from __future__ import annotations

from mcpkit_storage import Keyring, Place, Vault
from mcpkit_storage.stores._store import Address, Entry, Store, Write
from mcpkit_storage.stores.memory import MemoryStore
from stores.conftest import OTHER, OWNER

HOUR = 3600.0


async def created(store: Store, owner: str, bucket: str, key: str) -> float | None:
    """The first-write time ``scan()`` gives the entry at this address (it must be there)."""
    found = [r.entry.created async for r in store.scan() if (r.owner, r.bucket, r.key) == (owner, bucket, key)]
    assert len(found) == 1, (owner, bucket, key, found)
    return found[0]


async def test_a_first_write_is_created_now_and_every_overwrite_keeps_it(store: Store, now: float) -> None:
    await store.put(OWNER, "user", "k", b"1", None, now)
    assert await created(store, OWNER, "user", "k") == now
    await store.put(OWNER, "user", "k", b"2", now + HOUR, now + 1)
    assert await store.swap(OWNER, "user", "k", b"2", b"3", None, now + 2)
    (written,) = await store.swap_many([Write(OWNER, "user", "k", b"3", b"4", None)], now + 3)
    assert written is True
    assert await store.swap_many([Write(OWNER, "user", "k", b"4", b"5", None)], now + 4, whole=True) == [True]
    assert await created(store, OWNER, "user", "k") == now


async def test_a_key_written_again_after_a_delete_or_its_deadline_is_new(store: Store, now: float) -> None:
    await store.put(OWNER, "user", "gone", b"1", None, now)
    await store.delete(OWNER, "user", "gone", now)
    assert await store.swap(OWNER, "user", "gone", None, b"2", None, now + 10)
    assert await created(store, OWNER, "user", "gone") == now + 10
    await store.put(OWNER, "user", "brief", b"1", now + HOUR, now)
    await store.put(OWNER, "user", "brief", b"2", None, now + 2 * HOUR)  # the first one had expired
    assert await created(store, OWNER, "user", "brief") == now + 2 * HOUR
    await store.put(OWNER, "user", "lapsed", b"1", now + HOUR, now)
    assert await store.swap(OWNER, "user", "lapsed", None, b"2", None, now + 2 * HOUR)
    assert await created(store, OWNER, "user", "lapsed") == now + 2 * HOUR


async def test_a_bucket_deleted_takes_its_first_write_times_with_it(store: Store, now: float) -> None:
    await store.put(OWNER, "user", "k", b"1", None, now)
    await store.delete_bucket(OWNER, "user", now)
    await store.put(OWNER, "user", "k", b"2", None, now + 5)
    assert await created(store, OWNER, "user", "k") == now + 5
    await store.delete_owner(OWNER)
    await store.put(OWNER, "user", "k", b"3", None, now + 6)
    assert await created(store, OWNER, "user", "k") == now + 6


async def test_a_value_moving_between_addresses_keeps_its_first_write_time(store: Store, now: float) -> None:
    await store.put(OTHER, "user", "m", b"old copy", None, now)
    moved = [(Address(OTHER, "user", "m"), b"old copy")]
    assert await store.swap(OWNER, "user", "m", None, b"moved", None, now + 50, also=moved)
    assert await created(store, OWNER, "user", "m") == now
    await store.put(OTHER, "user", "n", b"old copy", None, now + 1)
    batch = [Write(OWNER, "user", "n", None, b"moved", None, also=[(Address(OTHER, "user", "n"), b"old copy")])]
    assert await store.swap_many(batch, now + 50, whole=True) == [True]
    assert await created(store, OWNER, "user", "n") == now + 1
    await store.put(OTHER, "user", "n", b"another", None, now + 60)  # its old copy went with the move: a new key
    assert await created(store, OTHER, "user", "n") == now + 60


async def test_a_write_that_gives_a_first_write_time_leaves_it(store: Store, now: float) -> None:
    await store.put(OWNER, "user", "p", b"1", None, now, created=now - 100)
    assert await created(store, OWNER, "user", "p") == now - 100
    assert await store.swap(OWNER, "user", "p", b"1", b"2", None, now, created=now - 200)
    assert await created(store, OWNER, "user", "p") == now - 200
    writes = [Write(OWNER, "user", "q", None, b"1", None, created=now - 300)]
    assert await store.swap_many(writes, now) == [True]
    assert await created(store, OWNER, "user", "q") == now - 300


async def test_get_many_created_reads_each_live_entry_with_its_first_write_time(store: Store, now: float) -> None:
    await store.put(OWNER, "user", "a", b"1", None, now)
    await store.put(OWNER, "user", "a", b"2", now + HOUR, now + 7)
    await store.put(OTHER, "user", "b", b"3", None, now + 1, created=now - HOUR)  # an import's
    await store.put(OWNER, "user", "brief", b"4", now + 10, now)
    wanted = [Address(OWNER, "user", "a"), Address(OTHER, "user", "b"), Address(OWNER, "user", "none")]
    read = await store.get_many_created([*wanted, Address(OWNER, "user", "brief")], now + 20)
    assert read == [Entry(b"2", now + HOUR, now), Entry(b"3", None, now - HOUR), None, None]  # "brief" expired
    plain = await store.get_many(wanted, now + 20)
    assert [(e.data, e.expires_at) for e in read[:2]] == [(e.data, e.expires_at) for e in plain if e is not None]
    assert await store.get_many_created([], now) == []


class _Older(MemoryStore):
    """A store of your own written before ``Store.get_many_created`` existed."""

    get_many_created = None  # type: ignore[assignment]


async def test_a_store_without_get_many_created_still_answers_inspect_without_the_time() -> None:
    store = _Older()
    await store.open()
    vault, place = Vault(store, Keyring(["store-contract-secret-0123456789abcdef"])), Place('["u", "nour"]', "user")
    await vault.write(place, "k", '"v"', None, 1.7e9, None)
    inspected = await vault.inspect(place, "k", 1.7e9)
    assert inspected is not None
    assert inspected.payload.value() == "v"
