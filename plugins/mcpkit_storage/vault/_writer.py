"""``Writer``: the one write path of a vault — seal, index, shard the vector, then one store call.

With one address per key a write is one ``put``; otherwise every write is a compare-and-set over all the key's
addresses that leaves the value at the primary one and deletes the others, read again and retried when another
writer came first (docs/architecture.md, "Rotation").
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import NamedTuple

from ..base import Place, RememberConflictError, backoff
from ..index import Change
from ..stores import Address, Quota, QuotaExceededError, Store, StoreUnavailableError, Write
from ._codec import Codec
from ._found import Observed
from ._indexing import Indexing
from ._reader import Reader
from ._rollback import RollbackGuard
from ._vectors import Vectors

__all__ = ["WRITE_ATTEMPTS", "Draft", "PartialWriteError", "Sealed", "Swap", "Writer"]

#: Compare-and-set attempts of a write during a rotation before giving up (only racing writers fail one).
WRITE_ATTEMPTS = 64


class PartialWriteError(Exception):
    """One of several values written in order could not be (``error``: the store's reason); those before it were
    kept, ``key`` and the ones after it were not. ``sharded``: whether the place keeps vector shards."""

    def __init__(self, key: str, error: StoreUnavailableError | QuotaExceededError, sharded: bool) -> None:
        super().__init__(f"writing {key!r} failed: {error}")
        self.key, self.error, self.sharded = key, error, sharded


class Draft(NamedTuple):
    """A value to write: its key, its JSON text, its deadline (None: none), its vector (empty: none) and its sealed
    provenance (``sealing.seal_meta``; empty: none)."""

    key: str
    value_json: str | bytes
    expires_at: float | None
    vector: bytes = b""
    meta: bytes = b""


class Swap(NamedTuple):
    """One compare-and-set of ``Vault.swap_many``: ``Vault.swap``'s arguments but the time and the quota."""

    place: Place
    key: str
    observed: Observed
    value_json: str | bytes
    expires_at: float | None
    written_at: float | None = None
    indexed: bool | None = None
    vector: bytes = b""
    meta: bytes = b""
    #: When the key was first written (``Entry.created``; None: as the store keeps it), e.g. an imported value's.
    created: float | None = None


class Sealed(NamedTuple):
    """Compare-and-sets of ``Writer.seal_many`` ready for ``write_sealed``: their places, the store's writes, and
    which put a vector in a shard."""

    places: list[Place]
    writes: list[Write]
    sharded: list[bool]


class Writer:
    """Writes sealed values of a store, keeping the index, the vector shards and the rollback guard in step."""

    __slots__ = ("_codec", "_guard", "_indexing", "_reader", "_store", "_vectors")

    def __init__(
        self, store: Store, codec: Codec, guard: RollbackGuard, indexing: Indexing, vectors: Vectors, reader: Reader
    ) -> None:
        self._store, self._codec, self._guard = store, codec, guard
        self._indexing, self._vectors, self._reader = indexing, vectors, reader

    def put(
        self, place: Place, draft: Draft, now: float, quota: Quota | None, *, shard: bool = True
    ) -> Awaitable[bool]:
        """Keep the value at ``place``, replacing what was there (``shard=False``: its shard is changed already);
        with one address per key, the ``swap`` itself (no coroutine of its own on the hot path)."""
        if self._codec.single:
            return self.swap(place, None, draft, now, quota, shard=shard)
        return self._put_retrying(place, draft, now, quota, shard)

    async def _put_retrying(self, place: Place, draft: Draft, now: float, quota: Quota | None, shard: bool) -> bool:
        for attempt in range(WRITE_ATTEMPTS):
            observed = await self._reader.observe(place, draft.key, now)
            if await self.swap(place, observed, draft, now, quota, shard=shard):
                return True
            await backoff(attempt)
        raise RememberConflictError(draft.key, WRITE_ATTEMPTS)

    async def put_many(
        self, place: Place, drafts: Sequence[Draft], now: float, quota: Quota | None, clock: Callable[[], float]
    ) -> None:
        """Keep each value in order, their shards changed first all at once (one deadline); each written at its own
        ``clock()``. A failure is a ``PartialWriteError`` naming the key (the first one's: the shards')."""
        if not drafts:
            return
        vectors = {draft.key: draft.vector for draft in drafts}
        try:
            sharded = await self._vectors.batch(place, vectors, drafts[0].expires_at, now, quota)
        except (StoreUnavailableError, QuotaExceededError) as exc:
            raise PartialWriteError(drafts[0].key, exc, True) from exc
        for draft in drafts:
            try:
                await self.put(place, draft, clock(), quota, shard=not sharded)
            except (StoreUnavailableError, QuotaExceededError) as exc:
                raise PartialWriteError(draft.key, exc, self._vectors.sharded(place)) from exc

    async def swap(
        self,
        place: Place,
        observed: Observed | None,
        draft: Draft,
        now: float,
        quota: Quota | None,
        *,
        written_at: float | None = None,
        indexed: bool | None = None,
        shard: bool = True,
    ) -> bool:
        """Put the value at its key's primary address: over whatever is there (``observed`` None, with one address
        per key), else by compare-and-set against what ``observed`` saw, the key's other addresses deleted; False
        when another writer came first. ``indexed`` (None: as the bucket is) writes search postings, and with them
        the vector's shard (first: a write that then fails takes it out again)."""
        key, value_json, expires_at, vector, meta = draft
        if observed is None:
            address, expected, others = self._codec.keyring.locate(place.identity, place.bucket, key)[0], None, []
        else:
            (address, expected), *others = observed.seen
        stamp = now if written_at is None else written_at
        data = self._codec.seal(address, place, key, value_json, expires_at, stamp, vector, meta)
        if indexed is None:
            indexed = self._indexing.searchable(place.bucket)
        postings = await self._indexing.postings(address, key, value_json, meta, stamp) if indexed else None
        sharded = indexed and shard and self._vectors.semantic is not None
        if sharded:
            await self._vectors.written(place, address.key, Change(key, vector, stamp, expires_at), now, quota)
        began = self._guard.begin()
        try:
            if observed is None:
                await self._store.put(*address, data, expires_at, now, quota, postings)
            elif not await self._store.swap(
                *address, expected, data, expires_at, now, also=others, quota=quota, index=postings
            ):
                return False
        except BaseException:
            if sharded:
                await self._vectors.unwritten(place, address.key, now)
            raise
        self._guard.replaced(address, expected, data, began)
        for other, there in others:
            if there is not None:
                self._guard.deleted(other, began, there)
        return True

    async def swap_many(
        self, swaps: Sequence[Swap], now: float, quota: Quota | None, *, whole: bool = False
    ) -> list[bool | QuotaExceededError]:
        """Several ``swap``s in one store call (``Store.swap_many``), each whole or not at all: True where it was
        written, False where another writer came first, the ``QuotaExceededError`` where the quota refused it.
        ``whole``: all of them or none."""
        return await self.write_sealed(await self.seal_many(swaps, now, quota), now, whole=whole)

    async def seal_many(self, swaps: Sequence[Swap], now: float, quota: Quota | None) -> Sealed:
        """The first half of ``swap_many``: each value sealed with its postings, its vector put in its shard."""
        writes: list[Write] = []
        sharded: list[bool] = []
        for place, key, observed, value_json, expires_at, written_at, indexed, vector, meta, created in swaps:
            (address, expected), *others = observed.seen
            stamp = now if written_at is None else written_at
            data = self._codec.seal(address, place, key, value_json, expires_at, stamp, vector, meta)
            if indexed is None:
                indexed = self._indexing.searchable(place.bucket)
            postings = await self._indexing.postings(address, key, value_json, meta, stamp) if indexed else None
            shard = indexed and self._vectors.semantic is not None
            if shard:
                await self._vectors.written(place, address.key, Change(key, vector, stamp, expires_at), now, quota)
            sharded.append(shard)
            writes.append(Write(*address, expected, data, expires_at, others, quota, postings, created))
        return Sealed([swap.place for swap in swaps], writes, sharded)

    async def write_sealed(self, sealed: Sealed, now: float, *, whole: bool = False) -> list[bool | QuotaExceededError]:
        """The second half of ``swap_many``: one store call; a value's vector not written is taken out again."""
        places, writes, sharded = sealed
        began = self._guard.begin()
        try:
            results = await self._store.swap_many(writes, now, whole=whole)
        except BaseException:
            for place, write, shard in zip(places, writes, sharded, strict=True):
                if shard:
                    await self._vectors.unwritten(place, write.key, now)
            raise
        for place, write, shard, result in zip(places, writes, sharded, results, strict=True):
            if result is True:
                self._guard.replaced(Address(*write[:3]), write.expected, write.data, began)
                for other, there in write.also:
                    if there is not None:
                        self._guard.deleted(other, began, there)
            elif shard:
                await self._vectors.unwritten(place, write.key, now)
        return results

    async def delete(self, place: Place, keys: Sequence[str], now: float) -> int:
        """Remove the values at ``keys`` of ``place`` (every address of each) in one store call; how many live ones
        went."""
        legacy = self._codec.legacy
        located = [self._codec.addresses(place, key, legacy) for key in keys]
        addresses = [address for each in located for address in each]
        if not addresses:
            return 0
        began = self._guard.begin()
        if len(addresses) == 1:
            gone = int(await self._store.delete(*addresses[0], now))
        else:
            gone = await self._store.delete_many(addresses, now)
        for address in addresses:
            self._guard.deleted(address, began)
        await self._vectors.forget(place, [each[0].key for each in located], now)
        return gone

    async def delete_bucket(self, place: Place, now: float) -> int:
        """Remove every value of the place (and its vector shards, which do not count); how many values went."""
        shards = await self._vectors.addresses(place, now)
        if shards:
            await self._store.delete_many(shards, now)
        total = 0
        for owner, bucket in self._codec.buckets(place):
            total += await self._store.delete_bucket(owner, bucket, now)
        return total
