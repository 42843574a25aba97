"""``Vault``: a store behind encryption — sealed values at hashed addresses, rotation, migration, tampering.

With one secret and no entries of mcpkit 0.1 left, a key lives at exactly one
address and every operation is one store call. During a rotation of the secret
(several secrets) or while 0.1 entries may remain (``store.legacy``), a key may
live at one address per secret, plus its 0.1 address: reads look at all of them
in one round trip, and every write is one atomic compare-and-set over all of
them that leaves the value at the primary address and deletes the others. So at
most one copy exists, whichever instance wrote it and whatever secret it leads
with; moving never resurrects a deleted value nor overwrites a newer one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pydantic_core

from ..base import Place, RememberConflictError, backoff, indexed_namespaces
from ..index import BlindIndex, Change, Semantic, Shards, is_shard_key
from ..sealing import VERSION, Keyring, Payload, SecretWatch, UndecryptableError, pack, peek, unpack, unpack_legacy
from ..stores import Address, Entry, Expectation, Quota, Store, StoreUnavailableError
from ._found import Found, Observed, found, newer
from ._rollback import RollbackGuard
from ._unreadable import scope_of, warn_unreadable

__all__ = ["Vault"]


#: Compare-and-set attempts of a write during a rotation before giving up (only racing writers fail one).
WRITE_ATTEMPTS = 64


class Vault:
    """Reads and writes values for places; everything a store holds is sealed and hashed."""

    def __init__(
        self, store: Store, keyring: Keyring, *, search_all: bool = False, semantic: Semantic | None = None
    ) -> None:
        if getattr(store, "PLACED", False) and not keyring.placed:
            raise ValueError(
                f"{store!r} keeps each placement group in one hash slot: give it a placed keyring, "
                "Keyring(secrets, placed=True) (a Backing and the mcpkit remember commands do)"
            )
        self.store = store
        self.keyring = keyring
        self.index = BlindIndex(keyring)
        #: The embedder of searchable values (None: search is BM25 alone).
        self.semantic = semantic
        #: Whether every value is indexed for search (``RememberPlugin(search=True)``); the memory tools'
        #: notes always are.
        self.search_all = search_all
        #: The places' vector shards, kept with every write of a searchable value once there is an embedder.
        self.shards = Shards(store, keyring)
        self._guard = RollbackGuard()
        self._where = repr(store)  # which store, in the causes of warnings (taken once: an in-memory one's changes)
        self.watch = SecretWatch(store, keyring, self._where)  # was the store rotated past this keyring? (watched)
        # Whether every key has one address (no rotation, no 0.1 entries): the fast path. Decided once, when
        # the store is open; a store whose 0.1 entries another process moves meanwhile keeps looking (correct,
        # one extra lookup per miss) until the next start.
        self._single = len(keyring) == 1 and not store.legacy

    async def watched(self, now: float) -> None:
        """Before a call on the store: RememberStoreUnavailableError while it was rotated past this keyring."""
        if now >= self.watch.due:
            await self.watch.look(now)

    # -- one key ------------------------------------------------------------------------

    async def read(self, place: Place, key: str, now: float) -> Found | None:
        """The live value at ``place``/``key``, or None."""
        await self.watched(now)
        if not self._single:
            return (await self.observe(place, key, now)).found
        address = self.keyring.locate(place.identity, place.bucket, key)[0]
        began = self._guard.begin()
        entry = await self.store.get(*address, now)
        return None if entry is None else self._peeked(address, entry, now, place, began)

    async def read_many(self, place: Place, keys: Sequence[str], now: float) -> list[Found | None]:
        """The live value at each of ``keys`` of ``place`` (None where there is none): one round trip with one
        address per key, else one read per key."""
        await self.watched(now)
        if not self._single:
            return [(await self.observe(place, key, now)).found for key in keys]
        addresses = [self.keyring.locate(place.identity, place.bucket, key)[0] for key in keys]
        began = self._guard.begin()
        entries = await self.store.get_many(addresses, now) if addresses else []
        values: list[Found | None] = []
        for address, entry in zip(addresses, entries, strict=True):
            payload = None if entry is None else self.opened(address, entry, now, place, began)
            values.append(None if payload is None else found(payload))
        return values

    async def observe(self, place: Place, key: str, now: float) -> Observed:
        """The value and the bytes at each of the key's addresses."""
        await self.watched(now)
        if self._single:  # the fast path of every update: one address, its entry peeked rather than unpacked
            address = self.keyring.locate(place.identity, place.bucket, key)[0]
            began = self._guard.begin()
            entry = await self.store.get(*address, now)
            if entry is None:
                return Observed(None, ((address, None),))
            return Observed(self._peeked(address, entry, now, place, began), ((address, entry.data),))
        best, _, seen = await self.look(place, key, now, self.store.legacy)
        return Observed(None if best is None else found(best), seen)

    async def look(
        self, place: Place, key: str, now: float, legacy: bool
    ) -> tuple[Payload | None, int, tuple[Expectation, ...]]:
        """The newest live copy, the index of its address, and the bytes at every address (``legacy``: 0.1's too)."""
        await self.watched(now)
        addresses = self._addresses(place, key, legacy)
        began = self._guard.begin()
        if len(addresses) == 1:
            entries = [await self.store.get(*addresses[0], now)]
        else:
            entries = await self.store.get_many(addresses, now)
        best: Payload | None = None
        where = -1
        for index, (address, entry) in enumerate(zip(addresses, entries, strict=True)):
            payload = None if entry is None else self.opened(address, entry, now, place, began)
            if payload is not None and (best is None or newer(payload, best)):
                best, where = payload, index
        seen = tuple((a, None if e is None else e.data) for a, e in zip(addresses, entries, strict=True))
        return best, where, seen

    async def vector(self, place: Place, key: str, value_json: str, caller: str | None = None) -> bytes:
        """The vector of a value (its JSON text) written at ``place`` (empty: none), on the caller's turn."""
        if self.semantic is None or not self.searchable(place.bucket):
            return b""
        return await self.semantic.vector(key, value_json, caller=caller or place.identity)

    async def write(
        self,
        place: Place,
        key: str,
        value_json: str,
        expires_at: float | None,
        now: float,
        quota: Quota | None,
        vector: bytes = b"",
        *,
        shard: bool = True,
    ) -> None:
        """Keep ``value_json`` (and its ``vector``) at ``place``/``key``, replacing what was there; ``shard=False``:
        its vector shard was changed already (``shard_batch``)."""
        await self.watched(now)
        if self._single:
            address = self.keyring.locate(place.identity, place.bucket, key)[0]
            plaintext = pack(place.identity, place.bucket, key, value_json, expires_at, now, vector)
            data = self.keyring.seal(*address, plaintext)
            postings = await self.index.postings_of(address, key, value_json) if self.searchable(place.bucket) else None
            semantic = self.semantic if shard and self.sharded(place) else None
            if semantic is not None:
                await self.shards.written(
                    semantic, place, address.key, Change(key, vector, now, expires_at), now, quota
                )
            began = self._guard.begin()
            try:
                await self.store.put(*address, data, expires_at, now, quota, postings)
            except BaseException:
                if semantic is not None:
                    await self.shards.unwritten(semantic, place, address.key, now)
                raise
            self._guard.replaced(address, None, data, began)
            return
        for attempt in range(WRITE_ATTEMPTS):
            observed = await self.observe(place, key, now)
            if await self.swap(place, key, observed, value_json, expires_at, now, quota, vector=vector, shard=shard):
                return
            await backoff(attempt)
        raise RememberConflictError(key, WRITE_ATTEMPTS)

    async def swap(
        self,
        place: Place,
        key: str,
        observed: Observed,
        value_json: str | bytes,
        expires_at: float | None,
        now: float,
        quota: Quota | None,
        *,
        written_at: float | None = None,
        indexed: bool | None = None,
        vector: bytes = b"",
        shard: bool = True,
    ) -> bool:
        """Compare-and-set against what ``observe`` saw: the value lands at the first address, the rest go.

        ``indexed`` says whether to write search postings (None: as this vault indexes the bucket), and with
        them the value's vector shard (first; a write that then fails takes it out again).
        """
        await self.watched(now)
        (address, expected), *others = observed.seen
        stamp = now if written_at is None else written_at
        data = self.keyring.seal(
            *address, pack(place.identity, place.bucket, key, value_json, expires_at, stamp, vector)
        )
        if indexed is None:
            indexed = self.searchable(place.bucket)
        postings = await self.index.postings_of(address, key, value_json) if indexed else None
        semantic = self.semantic if indexed and shard else None
        if semantic is not None:
            await self.shards.written(semantic, place, address.key, Change(key, vector, stamp, expires_at), now, quota)
        began = self._guard.begin()
        try:
            swapped = await self.store.swap(
                *address, expected, data, expires_at, now, also=others, quota=quota, index=postings
            )
        except BaseException:
            if semantic is not None:
                await self.shards.unwritten(semantic, place, address.key, now)
            raise
        if not swapped:
            return False
        self._guard.replaced(address, expected, data, began)
        for other, there in others:
            if there is not None:
                self._guard.deleted(other, began, there)
        return True

    async def delete(self, place: Place, key: str, now: float) -> bool:
        await self.watched(now)
        addresses = self._addresses(place, key, self.store.legacy)
        began = self._guard.begin()
        if len(addresses) == 1:
            gone = await self.store.delete(*addresses[0], now)
        else:
            gone = await self.store.delete_many(addresses, now) > 0
        for address in addresses:
            self._guard.deleted(address, began)
        await self._unshard(place, addresses[:1], now)
        return gone

    async def delete_many(self, place: Place, keys: Sequence[str], now: float) -> int:
        """Remove the values at ``keys`` of ``place`` in one store call; how many live ones went."""
        await self.watched(now)
        legacy = self.store.legacy
        addresses = [address for key in keys for address in self._addresses(place, key, legacy)]
        if not addresses:
            return 0
        began = self._guard.begin()
        gone = await self.store.delete_many(addresses, now)
        for address in addresses:
            self._guard.deleted(address, began)
        await self._unshard(place, addresses, now)
        return gone

    async def keep_vectors(
        self, place: Place, changes: Mapping[str, Change | None], now: float, quota: Quota | None
    ) -> None:
        """Record values written (by store name) or gone (None) in the place's vector shards, with an embedder."""
        if self.semantic is not None:
            await self.shards.keep(self.semantic, place, changes, now, quota)

    async def shard_batch(
        self, place: Place, vectors: dict[str, bytes], expires_at: float | None, now: float, quota: Quota | None
    ) -> bool:
        """Record a batch of values about to be written (key -> vector) in their shards at once; whether it did
        (with an embedder, for a searchable place, and one address per key: else each write does it)."""
        if not self.sharded(place) or not self._single:
            return False
        await self.keep_vectors(place, self.shards.batch(place, vectors, expires_at, now), now, quota)
        return True

    async def _unshard(self, place: Place, addresses: Sequence[Address], now: float) -> None:
        if self.sharded(place):
            primary = self.keyring.owner_for(place.identity)
            await self.keep_vectors(place, {a.key: None for a in addresses if a.owner == primary}, now, None)

    # -- a whole bucket -----------------------------------------------------------------

    async def payloads(self, place: Place, now: float) -> dict[str, Payload]:
        """Every live value in the bucket by key (the newest copy of each); cost in proportion to the bucket."""
        await self.watched(now)
        best: dict[str, Payload] = {}
        for owner, bucket in self.buckets(place):
            began = self._guard.begin()
            for name, entry in await self.store.entries(owner, bucket, now):
                payload = self.opened(Address(owner, bucket, name), entry, now, place, began)
                if payload is None or is_shard_key(payload.key):
                    continue
                if payload.key not in best or newer(payload, best[payload.key]):
                    best[payload.key] = payload
        return best

    async def keys(self, place: Place, now: float) -> list[str]:
        return sorted(await self.payloads(place, now))

    async def delete_bucket(self, place: Place, now: float) -> int:
        """Remove every value of the place (and its vector shards, which do not count); how many values went."""
        await self.watched(now)
        shards = await self.shards.addresses(place, now) if self.searchable(place.bucket) else []
        if shards:
            await self.store.delete_many(shards, now)
        total = 0
        for owner, bucket in self.buckets(place):
            total += await self.store.delete_bucket(owner, bucket, now)
        return total

    # -- rotation -----------------------------------------------------------------------

    def open_record(self, address: Address, entry: Entry) -> tuple[Payload, bool]:
        """A scanned entry's payload (deadline not checked) and whether a rotation must rewrite it."""
        opened = self.keyring.open(*address, entry.data)
        return self._payload(address, entry, opened.plaintext, opened.version), opened.stale

    # -- helpers ------------------------------------------------------------------------

    def _addresses(self, place: Place, key: str, legacy: bool) -> tuple[Address, ...]:
        located = self.keyring.locate(place.identity, place.bucket, key)
        if not legacy:
            return located
        return located + tuple(Address(owner, place.bucket, key) for owner in self.keyring.owners_for(place.identity))

    def sharded(self, place: Place) -> bool:
        """Whether the place keeps vector shards (an embedder, and a searchable bucket)."""
        return self.semantic is not None and self.searchable(place.bucket)

    def searchable(self, bucket: str) -> bool:
        """Whether values of this bucket are indexed (and so can be searched)."""
        return self.search_all or bucket.startswith(indexed_namespaces())

    def begin(self) -> int:
        """Mark the start of a read, for ``opened``'s replay check."""
        return self._guard.begin()

    def buckets(self, place: Place) -> tuple[tuple[str, str], ...]:
        """The (owner, bucket) addresses the place's values may live at: one per secret, then 0.1's (legacy)."""
        buckets = self.keyring.locate_bucket(place.identity, place.bucket)
        if self.store.legacy:
            return buckets + tuple((owner, place.bucket) for owner in self.keyring.owners_for(place.identity))
        return buckets

    def _peeked(self, address: Address, entry: Entry, now: float, place: Place, began: int) -> Found | None:
        """A one-address read's live value in ``entry`` (else None): its head peeked, no ``Payload`` built."""
        try:
            opened = self.keyring.open(*address, entry.data)
            if opened.version != VERSION:
                raise ValueError(f"a version-{opened.version} entry at a current address")
            deadline, written, start, end = peek(opened.plaintext)
        except (UndecryptableError, ValueError) as exc:
            warn_unreadable(self._where, address.owner, place.bucket, exc)
            return None
        if deadline <= now:
            return None
        self._check_replay(address, entry.data, place, began)
        value = pydantic_core.from_json(opened.plaintext[start:end])
        return Found(value, None if deadline == math.inf else deadline, None if written != written else written)

    def opened(self, address: Address, entry: Entry, now: float, place: Place, began: int) -> Payload | None:
        """The entry's payload when it opens, is still live by its sealed deadline and is not a replay (read since
        ``began``, from ``begin()``); None when it does not open or is past its deadline."""
        return self.accepted(address, entry, self.unsealed(address, entry), now, place, began)

    def unsealed(self, address: Address, entry: Entry) -> Payload | Exception:
        """The entry opened (or why not): no state touched, so a worker thread may do it."""
        try:
            opened = self.keyring.open(*address, entry.data)
            return self._payload(address, entry, opened.plaintext, opened.version)
        except (UndecryptableError, ValueError) as exc:
            return exc

    def accepted(
        self, address: Address, entry: Entry, payload: Payload | Exception, now: float, place: Place, began: int
    ) -> Payload | None:
        """``payload`` when it opened, is live and is not a replay (on the event loop: it reads the replay guard)."""
        if isinstance(payload, Exception):
            warn_unreadable(self._where, address.owner, place.bucket, payload)
            return None
        if not payload.live(now):
            return None
        self._check_replay(address, entry.data, place, began)
        return payload

    def _check_replay(self, address: Address, data: bytes, place: Place, began: int) -> None:
        if not self._guard.seen(address, data, began):
            # Neither the old value nor "missing" is the truth (an update would start again from its default):
            # the store is not to be trusted for this key now, as when it cannot be reached.
            raise StoreUnavailableError(
                f"a remembered value in {scope_of(place.bucket)} scope (owner {address.owner[:8]}…) is one this "
                "server saw replaced or deleted, put back in the store: someone with write access to the store "
                "replayed an older value (or a restore or failover lost newer writes); refusing to answer it"
            )

    @staticmethod
    def _payload(address: Address, entry: Entry, plaintext: bytes, version: int) -> Payload:
        if version == VERSION:
            return unpack(plaintext)
        return unpack_legacy(plaintext, address.bucket, address.key, entry.expires_at)
