"""``Codec``: sealed values and their addresses, so a vault knows where a key lives and what its bytes say.

A key lives at one address per secret, primary first, plus its 0.1 address while 0.1 entries may remain
(docs/architecture.md, "Rotation"). No I/O here and no state an opening changes: a worker thread may open.
"""

from __future__ import annotations

import math

import pydantic_core

from ..base import Place, is_internal_key
from ..sealing import VERSION, Keyring, Payload, UndecryptableError, pack, peek, unpack, unpack_legacy
from ..stores import Address, Entry, Store
from ._found import Found

__all__ = ["Codec"]


class Codec:
    """Seals and opens a place's values at their addresses, under one keyring."""

    __slots__ = ("_store", "keyring", "single")

    def __init__(self, keyring: Keyring, store: Store) -> None:
        self.keyring = keyring
        self._store = store
        #: Whether every key has one address (no rotation, no 0.1 entries): the fast path. Decided once, when the
        #: store is open; a store whose 0.1 entries another process moves meanwhile keeps looking (correct, one
        #: extra lookup per miss) until the next start.
        self.single = len(keyring) == 1 and not store.legacy

    @property
    def legacy(self) -> bool:
        """Whether 0.1 entries may remain (``Store.legacy``: a rotation that leaves none settles it)."""
        return self._store.legacy

    def primary(self, place: Place, key: str) -> Address:
        """Where a write puts the key's value (the primary secret's address)."""
        return self.keyring.locate(place.identity, place.bucket, key)[0]

    def addresses(self, place: Place, key: str, legacy: bool) -> tuple[Address, ...]:
        """Every address the key may live at, primary first (``legacy``: 0.1's too)."""
        located = self.keyring.locate(place.identity, place.bucket, key)
        if not legacy or is_internal_key(key):  # 0.1 kept no internal entries (nor could its stores name them)
            return located
        return located + tuple(Address(owner, place.bucket, key) for owner in self.keyring.owners_for(place.identity))

    def buckets(self, place: Place) -> tuple[tuple[str, str], ...]:
        """The (owner, bucket) addresses the place's values may live at: one per secret, then 0.1's (legacy)."""
        buckets = self.keyring.locate_bucket(place.identity, place.bucket)
        if self.legacy:
            return buckets + tuple((owner, place.bucket) for owner in self.keyring.owners_for(place.identity))
        return buckets

    def seal(
        self,
        address: Address,
        place: Place,
        key: str,
        value_json: str | bytes,
        expires_at: float | None,
        written_at: float,
        vector: bytes,
        meta: bytes = b"",
    ) -> bytes:
        """The bytes a store keeps at ``address`` for this value and its provenance (under the primary secret)."""
        plaintext = pack(place.identity, place.bucket, key, value_json, expires_at, written_at, vector, meta)
        return self.keyring.seal(*address, plaintext)

    def peeked(self, address: Address, entry: Entry, now: float) -> Found | Exception | None:
        """A current-version entry's live value (None: past its deadline), its head peeked, no ``Payload`` built;
        or why it does not open."""
        try:
            opened = self.keyring.open(*address, entry.data)
            if opened.version != VERSION:
                raise ValueError(f"a version-{opened.version} entry at a current address")
            deadline, written, start, end = peek(opened.plaintext)
        except (UndecryptableError, ValueError) as exc:
            return exc
        if deadline <= now:
            return None
        return Found(
            pydantic_core.from_json(opened.plaintext[start:end]),
            None if deadline == math.inf else deadline,
            None if written != written else written,
        )

    def unsealed(self, address: Address, entry: Entry) -> Payload | Exception:
        """The entry opened (deadline not checked), or why not."""
        try:
            opened = self.keyring.open(*address, entry.data)
            return self._payload(address, entry, opened.plaintext, opened.version)
        except (UndecryptableError, ValueError) as exc:
            return exc

    def record(self, address: Address, entry: Entry) -> tuple[Payload, bool]:
        """A scanned entry's payload (deadline not checked) and whether a rotation must rewrite it; raises when it
        does not open."""
        opened = self.keyring.open(*address, entry.data)
        return self._payload(address, entry, opened.plaintext, opened.version), opened.stale

    @staticmethod
    def _payload(address: Address, entry: Entry, plaintext: bytes, version: int) -> Payload:
        if version == VERSION:
            return unpack(plaintext)
        return unpack_legacy(plaintext, address.bucket, address.key, entry.expires_at)
