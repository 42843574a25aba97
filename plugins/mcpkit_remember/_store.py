"""The small async interface every remember store implements.

Stores see only opaque bytes: ``owner`` is a keyed hash of the identity that
owns a value, ``bucket`` names the scope (``user``, ``session``, ``global`` or
``tool.<name>``), ``key`` is the caller's key and ``data`` is ciphertext.
Time is always passed in (``now``, seconds since the epoch, from the framework
clock), so every store expires values identically and tests can move time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import NamedTuple, Protocol

__all__ = ["Entry", "Record", "Store", "StoreUnavailableError"]


class Entry(NamedTuple):
    """A stored value: its opaque bytes and its deadline (None: kept until forgotten)."""

    data: bytes
    expires_at: float | None

    def live(self, now: float) -> bool:
        """Whether the entry is still readable at ``now``."""
        return self.expires_at is None or self.expires_at > now


class Record(NamedTuple):
    """One entry with its full address, as ``scan()`` yields it."""

    owner: str
    bucket: str
    key: str
    entry: Entry


class StoreUnavailableError(Exception):
    """The store could not be reached (e.g. Redis is down); the call may be retried later.

    ``maybe_applied``: a write was sent but no answer came in time, so the store may still apply it.
    """

    def __init__(self, message: str, *, maybe_applied: bool = False) -> None:
        super().__init__(message)
        self.maybe_applied = maybe_applied


class Store(Protocol):
    """Where remembered values live. Every method that reads skips entries past their deadline."""

    async def open(self) -> None:
        """Connect or create what the store needs; called once at server start."""

    async def close(self) -> None:
        """Release connections and files; called once at server stop."""

    async def get(self, owner: str, bucket: str, key: str, now: float) -> Entry | None:
        """The live entry at this address, or None."""

    async def put(self, owner: str, bucket: str, key: str, data: bytes, expires_at: float | None, now: float) -> None:
        """Store ``data`` at this address, replacing whatever was there."""

    async def delete(self, owner: str, bucket: str, key: str, now: float) -> bool:
        """Remove the entry; True when a live entry was there."""

    async def exists(self, owner: str, bucket: str, key: str, now: float) -> bool:
        """Whether a live entry is at this address."""

    async def keys(self, owner: str, bucket: str, now: float) -> list[str]:
        """Every live key in this owner's bucket, sorted; cost proportional to that bucket."""

    async def delete_bucket(self, owner: str, bucket: str, now: float) -> int:
        """Remove every entry in this owner's bucket; returns how many live ones went."""

    async def delete_owner(self, owner: str) -> int:
        """Remove every entry of this owner in every bucket; returns how many went."""

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
        """Atomically store ``data`` if the live entry's bytes equal ``expected``.

        ``expected=None`` means "no live entry". Returns False, changing nothing,
        when another writer got there first. Every write's ``data`` is new bytes (the
        vault seals each value with a fresh nonce), so a swap whose ``data`` is already
        there, or was applied moments ago, is this same swap resent (a client retrying
        after a dropped connection): it returns True and changes nothing.
        """

    def scan(self) -> AsyncIterator[Record]:
        """Every entry, live or not (operator commands: rotation, audits)."""

    async def purge_expired(self, now: float) -> int:
        """Delete entries past their deadline; returns how many went."""
