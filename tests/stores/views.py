"""What a bucket holds, as the tests ask it: the live keys, and whether one key is there."""

from __future__ import annotations

from mcpkit_storage.stores._store import Record, Store


async def keys(store: Store, owner: str, bucket: str, now: float) -> list[str]:
    """The live keys of a bucket, sorted (``entries()`` without the entries)."""
    return [key for key, _ in await store.entries(owner, bucket, now)]


async def exists(store: Store, owner: str, bucket: str, key: str, now: float) -> bool:
    return await store.get(owner, bucket, key, now) is not None


async def records(store: Store) -> set[tuple[str, str, str, bytes, float | None]]:
    """Everything ``scan()`` yields, as comparable tuples."""
    found: list[Record] = [record async for record in store.scan()]
    return {(r.owner, r.bucket, r.key, r.entry.data, r.entry.expires_at) for r in found}
