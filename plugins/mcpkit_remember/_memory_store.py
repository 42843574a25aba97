"""The in-process store: nested dicts, for tests and single-process servers.

Layout is ``owner -> bucket -> key -> Entry`` so ``keys()`` and
``delete_bucket()`` touch one bucket and ``delete_owner()`` one owner. Every
method body runs without an ``await``, so on one event loop each call,
``swap`` included, is atomic without locks.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from mcpkit_remember._store import Entry, Record

__all__ = ["MemoryStore"]

_Bucket = dict[str, Entry]


class MemoryStore:
    """Keeps entries in memory; expired ones read as missing and are dropped when met or purged."""

    def __init__(self) -> None:
        self._owners: dict[str, dict[str, _Bucket]] = {}

    def __repr__(self) -> str:
        return f"MemoryStore(owners={len(self._owners)})"

    async def open(self) -> None:
        """Nothing to connect to."""

    async def close(self) -> None:
        """Nothing to release; the entries stay for a later ``open()``."""

    async def get(self, owner: str, bucket: str, key: str, now: float) -> Entry | None:
        return self._live(owner, bucket, key, now)

    async def put(self, owner: str, bucket: str, key: str, data: bytes, expires_at: float | None, now: float) -> None:
        self._owners.setdefault(owner, {}).setdefault(bucket, {})[key] = Entry(data, expires_at)

    async def delete(self, owner: str, bucket: str, key: str, now: float) -> bool:
        entries = self._bucket(owner, bucket)
        if entries is None:
            return False
        entry = entries.pop(key, None)
        self._drop_if_empty(owner, bucket)
        return entry is not None and entry.live(now)

    async def exists(self, owner: str, bucket: str, key: str, now: float) -> bool:
        return self._live(owner, bucket, key, now) is not None

    async def keys(self, owner: str, bucket: str, now: float) -> list[str]:
        entries = self._bucket(owner, bucket)
        if entries is None:
            return []
        expired = [key for key, entry in entries.items() if not entry.live(now)]
        for key in expired:
            del entries[key]
        self._drop_if_empty(owner, bucket)
        return sorted(entries)

    async def delete_bucket(self, owner: str, bucket: str, now: float) -> int:
        buckets = self._owners.get(owner)
        if buckets is None:
            return 0
        entries = buckets.pop(bucket, {})
        if not buckets:
            del self._owners[owner]
        return sum(1 for entry in entries.values() if entry.live(now))

    async def delete_owner(self, owner: str) -> int:
        buckets = self._owners.pop(owner, {})
        return sum(len(entries) for entries in buckets.values())

    async def swap(
        self,
        owner: str,
        bucket: str,
        key: str,
        expected: bytes | None,
        data: bytes,
        expires_at: float | None,
        now: float,
    ) -> bool:
        current = self._live(owner, bucket, key, now)
        if current is not None and current.data == data:
            return True
        if (None if current is None else current.data) != expected:
            return False
        self._owners.setdefault(owner, {}).setdefault(bucket, {})[key] = Entry(data, expires_at)
        return True

    async def scan(self) -> AsyncIterator[Record]:
        for owner, buckets in list(self._owners.items()):
            for bucket, entries in list(buckets.items()):
                for key, entry in list(entries.items()):
                    yield Record(owner, bucket, key, entry)

    async def purge_expired(self, now: float) -> int:
        purged = 0
        for owner, buckets in list(self._owners.items()):
            for bucket, entries in list(buckets.items()):
                expired = [key for key, entry in entries.items() if not entry.live(now)]
                for key in expired:
                    del entries[key]
                purged += len(expired)
                self._drop_if_empty(owner, bucket)
        return purged

    def _bucket(self, owner: str, bucket: str) -> _Bucket | None:
        buckets = self._owners.get(owner)
        return None if buckets is None else buckets.get(bucket)

    def _live(self, owner: str, bucket: str, key: str, now: float) -> Entry | None:
        """The live entry at this address; an expired one found here is removed."""
        entries = self._bucket(owner, bucket)
        if entries is None:
            return None
        entry = entries.get(key)
        if entry is None or entry.live(now):
            return entry
        del entries[key]
        self._drop_if_empty(owner, bucket)
        return None

    def _drop_if_empty(self, owner: str, bucket: str) -> None:
        """Forget an emptied bucket (and owner) so departed owners cost nothing."""
        buckets = self._owners.get(owner)
        if buckets is None or buckets.get(bucket) != {}:
            return
        del buckets[bucket]
        if not buckets:
            del self._owners[owner]
