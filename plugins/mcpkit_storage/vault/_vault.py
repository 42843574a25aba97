"""``Vault``: a store behind encryption — sealed values at hashed addresses, rotation, migration, tampering.

A thin coordinator of pieces with one job each (docs/architecture.md, "The vault's pieces"): ``Codec`` (which
address, sealing and opening), ``Reader`` (the one read path, with the replay check), ``Writer`` (the one write
path), ``Indexing`` (search postings) and ``Vectors`` (the embedder and the vector shards).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Protocol

from ..base import Place
from ..index import BlindIndex, Semantic
from ..sealing import Keyring, Payload, SecretWatch
from ..stores import Address, Entry, Expectation, Quota, QuotaExceededError, Store
from ._codec import Codec
from ._found import Found, Inspected, Observed, found, newer
from ._indexing import Indexing
from ._reader import Reader
from ._rollback import RollbackGuard
from ._vectors import Vectors
from ._writer import Draft, Sealed, Swap, Writer

__all__ = ["SearchNote", "Vault"]


class SearchNote(AbstractContextManager[object], Protocol):
    """What observes one search (``Vault.searching``): told what it returned and the mode it used."""

    def returned(self, keys: list[str], mode: str) -> None: ...


class Vault:
    """Reads and writes values for places; everything a store holds is sealed and hashed."""

    def __init__(
        self,
        store: Store,
        keyring: Keyring,
        *,
        search_all: bool = False,
        semantic: Semantic | None = None,
        search_keys: bool = True,
    ) -> None:
        """``search_all``: index every value, not only the indexed namespaces'; ``semantic``: the embedder of
        searchable values; ``search_keys``: whether a value's key is part of its indexed text."""
        if store.placed and not keyring.placed:
            raise ValueError(
                f"{store!r} keeps each placement group in one hash slot: give it a placed keyring, "
                "Keyring(secrets, placed=True) (a Backing and the mcpkit remember commands do)"
            )
        self.store = store
        self.keyring = keyring
        where = repr(store)  # which store, in the causes of warnings (taken once: an in-memory one's changes)
        self.watch = SecretWatch(store, keyring, where)  # was the store rotated past this keyring? (watched)
        guard = RollbackGuard()
        self._codec = codec = Codec(keyring, store)
        self._indexing = Indexing(keyring, search_all=search_all, keys=search_keys)
        #: The embedder and the places' vector shards.
        self.vectors = Vectors(store, codec, self._indexing, semantic)
        self._reader = Reader(store, codec, guard, where)
        self._writer = Writer(store, codec, guard, self._indexing, self.vectors, self._reader)

    @property
    def index(self) -> BlindIndex:
        """The blind index: a query's words and blind terms."""
        return self._indexing.index

    @property
    def semantic(self) -> Semantic | None:
        """The embedder of searchable values (None: search is BM25 alone)."""
        return self.vectors.semantic

    async def watched(self, now: float) -> None:
        """Before a call on the store: RememberStoreUnavailableError while it was rotated past this keyring."""
        if now >= self.watch.due:
            await self.watch.look(now)

    def searchable(self, bucket: str) -> bool:
        """Whether values of this bucket are indexed (and so can be searched)."""
        return self._indexing.searchable(bucket)

    def sharded(self, place: Place) -> bool:
        """Whether the place keeps vector shards (an embedder, and a searchable bucket)."""
        return self.vectors.sharded(place)

    def buckets(self, place: Place) -> tuple[tuple[str, str], ...]:
        """The (owner, bucket) addresses the place's values may live at: one per secret, then 0.1's (legacy)."""
        return self._codec.buckets(place)

    # -- reads ------------------------------------------------------------------------

    async def read(self, place: Place, key: str, now: float) -> Found | None:
        """The live value at ``place``/``key``, or None."""
        if now >= self.watch.due:  # ``watched``, inline on the hot path: no coroutine per call
            await self.watch.look(now)
        return (await self._reader.observe(place, key, now)).found

    async def read_many(
        self, place: Place, keys: Sequence[str], now: float, *, in_thread: bool = False
    ) -> list[Found | None]:
        """The live value at each of ``keys`` of ``place`` (None where there is none): one round trip with one
        address per key, else one read per key. ``in_thread``: large values opened in a worker thread."""
        await self.watched(now)
        if not self._codec.single:
            return [(await self._reader.observe(place, key, now)).found for key in keys]
        addresses = [self._codec.primary(place, key) for key in keys]
        if in_thread:
            return await self._reader.at_in_thread(place, addresses, now)
        return [None if payload is None else found(payload) for payload in await self._reader.at(place, addresses, now)]

    async def observe(self, place: Place, key: str, now: float) -> Observed:
        """The value and the bytes at each of the key's addresses (what a compare-and-set expects)."""
        if now >= self.watch.due:
            await self.watch.look(now)
        return await self._reader.observe(place, key, now)

    async def observe_beside(
        self, place: Place, key: str, beside: str, now: float, *, opened: bool = False
    ) -> tuple[Observed, Observed]:
        """What a compare-and-set of ``key`` expects (its value opened only when asked: ``found`` None otherwise) and
        ``beside`` observed, in one store call with one address per key (a value and its change history)."""
        if now >= self.watch.due:
            await self.watch.look(now)
        return await self._reader.observe_beside(place, key, beside, now, opened=opened)

    async def observe_beside_many(
        self, place: Place, pairs: Sequence[tuple[str, str]], now: float
    ) -> list[tuple[Observed, Observed]] | None:
        """``observe_beside`` of each (key, beside) pair in one store call; None during a rotation (observe each)."""
        await self.watched(now)
        return await self._reader.observe_beside_many(place, pairs, now)

    async def look(
        self, place: Place, key: str, now: float, legacy: bool
    ) -> tuple[Payload | None, int, tuple[Expectation, ...]]:
        """The newest live copy, the index of its address, and the bytes at every address (``legacy``: 0.1's too)."""
        await self.watched(now)
        return await self._reader.look(place, key, now, legacy)

    async def inspect(self, place: Place, key: str, now: float) -> Inspected | None:
        """The live payload at ``place``/``key`` whole (with its provenance) and its key's first-write time, or None:
        a slower read than ``read``."""
        return (await self.inspect_seen(place, key, now))[0]

    async def inspect_seen(
        self, place: Place, key: str, now: float
    ) -> tuple[Inspected | None, tuple[Expectation, ...]]:
        """``inspect``'s answer and the bytes at every address of the key (what a compare-and-set expects)."""
        await self.watched(now)
        return await self._reader.inspect(place, key, now)

    async def open_at(self, place: Place, addresses: Sequence[Address], now: float) -> list[Payload | None]:
        """The live payload at each of ``addresses`` of ``place`` (a search's hits), in one store call."""
        return await self._reader.at(place, addresses, now)

    async def open_bucket(self, place: Place, owner: str, bucket: str, now: float) -> dict[str, Payload]:
        """Every live value at one of the place's ``buckets``, by store name."""
        return await self._reader.bucket(place, owner, bucket, now)

    async def payloads(self, place: Place, now: float) -> dict[str, Payload]:
        """Every live value in the bucket by key (the newest copy of each); cost in proportion to the bucket."""
        await self.watched(now)
        best: dict[str, Payload] = {}
        for owner, bucket in self._codec.buckets(place):
            for payload in (await self._reader.bucket(place, owner, bucket, now)).values():
                if payload.key not in best or newer(payload, best[payload.key]):
                    best[payload.key] = payload
        return best

    async def keys(self, place: Place, now: float) -> list[str]:
        """The keys of every live value of the place, sorted."""
        return sorted(await self.payloads(place, now))

    def open_record(self, address: Address, entry: Entry) -> tuple[Payload, bool]:
        """A scanned entry's payload (deadline not checked) and whether a rotation must rewrite it."""
        return self._codec.record(address, entry)

    # -- writes -----------------------------------------------------------------------

    async def vector(self, place: Place, key: str, value_json: str, caller: str | None = None) -> bytes:
        """The vector of a value (its JSON text) written at ``place`` (empty: none), on the caller's turn."""
        return await self.vectors.vector(place, key, value_json, caller)

    async def write(
        self,
        place: Place,
        key: str,
        value_json: str,
        expires_at: float | None,
        now: float,
        quota: Quota | None,
        vector: bytes = b"",
        meta: bytes = b"",
    ) -> None:
        """Keep ``value_json`` (and its ``vector`` and sealed provenance ``meta``) at ``place``/``key``, replacing what
        was there."""
        if now >= self.watch.due:
            await self.watch.look(now)
        await self._writer.put(place, Draft(key, value_json, expires_at, vector, meta), now, quota)

    async def embed_many(self, place: Place, texts: Mapping[str, str], caller: str | None = None) -> list[bytes]:
        """The vectors of values to be written together (key -> JSON text), embedded in batches on ``caller``'s turn
        (empty: none)."""
        return await self.vectors.vectors(place, texts, caller)

    async def write_many(
        self,
        place: Place,
        texts: Mapping[str, str],
        vectors: Sequence[bytes],
        expires_at: float | None,
        now: float,
        quota: Quota | None,
        clock: Callable[[], float],
        meta: bytes = b"",
    ) -> None:
        """Keep each value (key -> JSON text, with its vector from ``embed_many``) as ``write`` does, in order, each
        at its own ``clock()``, their vector shards changed at once first. A failure is a ``PartialWriteError`` naming
        the key whose write failed; the ones before it are kept. ``meta``: their sealed provenance (one for all)."""
        await self.watched(now)
        drafts = [
            Draft(key, text, expires_at, vector, meta)
            for (key, text), vector in zip(texts.items(), vectors, strict=True)
        ]
        await self._writer.put_many(place, drafts, now, quota, clock)

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
        meta: bytes = b"",
    ) -> bool:
        """Compare-and-set against what ``observe`` saw: the value lands at the first address, the rest go; False
        when another writer came first. ``indexed``: whether to write search postings (None: as the bucket is);
        ``meta``: the sealed provenance (empty: none)."""
        if now >= self.watch.due:
            await self.watch.look(now)
        draft = Draft(key, value_json, expires_at, vector, meta)
        return await self._writer.swap(place, observed, draft, now, quota, written_at=written_at, indexed=indexed)

    async def swap_many(
        self, swaps: Sequence[Swap], now: float, quota: Quota | None, *, whole: bool = False
    ) -> list[bool | QuotaExceededError]:
        """Several ``swap``s in one store call (``Store.swap_many``: one transaction on SQLite and PostgreSQL), each
        whole or not at all: True where it was written, False where another writer came first (``observe`` again),
        the ``QuotaExceededError`` where the quota refused it. ``whole``: all of them or none, on every store (a
        value and its change history)."""
        if now >= self.watch.due:  # ``watched``, inline: a change history's write takes this path
            await self.watch.look(now)
        return await self._writer.swap_many(swaps, now, quota, whole=whole)

    async def seal_many(self, swaps: Sequence[Swap], now: float, quota: Quota | None) -> Sealed:
        """``swap_many`` in two halves, so that the next values are sealed and indexed while the store writes these
        (``portability``'s import): first each value sealed with its postings."""
        await self.watched(now)
        return await self._writer.seal_many(swaps, now, quota)

    async def write_sealed(self, sealed: Sealed, now: float) -> list[bool | QuotaExceededError]:
        """Then ``seal_many``'s values in one store call, as ``swap_many`` answers."""
        return await self._writer.write_sealed(sealed, now)

    async def delete(self, place: Place, key: str, now: float) -> bool:
        """Remove the value at ``place``/``key``; whether a live one went."""
        await self.watched(now)
        return await self._writer.delete(place, [key], now) > 0

    async def delete_many(self, place: Place, keys: Sequence[str], now: float) -> int:
        """Remove the values at ``keys`` of ``place`` in one store call; how many live ones went."""
        await self.watched(now)
        return await self._writer.delete(place, keys, now)

    def searching(self, place: Place, mode: str) -> SearchNote | None:
        """What observes a search of ``place`` in ``mode`` (``ObservedVault``), or None: nothing does."""
        return None

    async def query_vector(self, place: Place, query: str, caller: str) -> bytes | None:
        """A search query's vector (``Semantic.query``: None when the embedder failed), for a search of ``place``."""
        assert self.semantic is not None
        return await self.semantic.query(query, caller=caller)

    async def delete_bucket(self, place: Place, now: float) -> int:
        """Remove every value of the place (and its vector shards, which do not count); how many values went."""
        await self.watched(now)
        return await self._writer.delete_bucket(place, now)
