"""``Vectors``: a vault's search by meaning — which places keep vectors, embedding values, and the vector shards.

A searchable value's vector is sealed inside it and copied into its place's shard tree (``index.Shards``) before the
value is written, so a search reads vectors without opening values; a write that fails takes its copy out again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager

from ..base import Place
from ..index import Change, Leaf, Semantic, Shards
from ..stores import Address, Quota, Store
from ._codec import Codec
from ._indexing import Indexing

__all__ = ["Vectors"]


class Vectors:
    """The embedder (None: search is BM25 alone) and the vector shards of the places it embeds values of."""

    __slots__ = ("_codec", "_searchable", "merging", "semantic", "shards")

    def __init__(self, store: Store, codec: Codec, indexing: Indexing, semantic: Semantic | None) -> None:
        self._codec = codec
        self._searchable = indexing.searchable
        #: The embedder of searchable values (None: search is BM25 alone).
        self.semantic = semantic
        #: The places' vector shards, kept with every write of a searchable value once there is an embedder.
        self.shards = Shards(store, codec.keyring)
        #: What observes a merge of changes into a place's shards (an observed vault's), None: nothing does.
        self.merging: Callable[[Place, int], AbstractContextManager[object] | None] | None = None

    def sharded(self, place: Place) -> bool:
        """Whether the place keeps vector shards (an embedder, and a searchable bucket)."""
        return self.semantic is not None and self._searchable(place.bucket)

    async def vector(self, place: Place, key: str, value_json: str, caller: str | None = None) -> bytes:
        """The vector of a value (its JSON text) written at ``place`` (empty: none), on the caller's turn."""
        if self.semantic is None or not self._searchable(place.bucket):
            return b""
        return await self.semantic.vector(key, value_json, caller=caller or place.identity)

    async def vectors(self, place: Place, texts: Mapping[str, str], caller: str | None = None) -> list[bytes]:
        """The vectors of values written together (key -> JSON text), embedded in batches (empty: none)."""
        if self.semantic is None or not self._searchable(place.bucket):
            return [b""] * len(texts)
        return await self.semantic.vectors(list(texts.items()), caller=caller or place.identity)

    async def written(self, place: Place, name: str, change: Change, now: float, quota: Quota | None) -> None:
        """A value about to be written (stored as ``name``), in its shard."""
        if self.semantic is not None:
            note = None if self.merging is None else self.merging(place, 1)
            if note is None:
                return await self.shards.written(self.semantic, place, name, change, now, quota)
            with note:
                await self.shards.written(self.semantic, place, name, change, now, quota)

    async def unwritten(self, place: Place, name: str, now: float) -> None:
        """A value whose write failed, taken out of its shard again (best effort)."""
        if self.semantic is not None:
            await self.shards.unwritten(self.semantic, place, name, now)

    async def keep(self, place: Place, changes: Mapping[str, Change | None], now: float, quota: Quota | None) -> None:
        """Record values written (by store name) or gone (None) in the place's shards, with an embedder."""
        if self.semantic is not None:
            note = None if self.merging is None else self.merging(place, len(changes))
            if note is None:
                return await self.shards.keep(self.semantic, place, changes, now, quota)
            with note:
                await self.shards.keep(self.semantic, place, changes, now, quota)

    async def batch(
        self, place: Place, vectors: Mapping[str, bytes], expires_at: float | None, now: float, quota: Quota | None
    ) -> bool:
        """Record values about to be written (key -> vector) in their shards at once; whether it did (with an
        embedder, for a searchable place, and one address per key: else each write does it)."""
        if not self.sharded(place) or not self._codec.single:
            return False
        await self.keep(place, self.shards.batch(place, vectors, expires_at, now), now, quota)
        return True

    async def forget(self, place: Place, names: Sequence[str], now: float) -> None:
        """Take values deleted (by their store names at the primary secret) out of their shards."""
        if self.sharded(place):
            await self.keep(place, dict.fromkeys(names), now, None)

    async def leaves(self, place: Place, now: float) -> list[Leaf] | None:
        """Every leaf of the place's shards; None when it has none."""
        return await self.shards.leaves(place, now)

    async def addresses(self, place: Place, now: float) -> list[Address]:
        """Where the place's shard entries are (none for a bucket that is not indexed)."""
        return await self.shards.addresses(place, now) if self._searchable(place.bucket) else []
