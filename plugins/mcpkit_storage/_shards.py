"""``Shards``: a place's vector index, so a search by meaning reads its values' vectors without opening the values.

Beside the values of a place searched by meaning, copies of their quantised vectors live in shard entries
(``_shard``): ordinary sealed entries of the same bucket, under keys no caller can use. So every store keeps
them without a line of store code, and deleting the bucket, purging a user, expiry and quotas cover them as
they cover values. Each write of a searchable value changes its value's leaf by compare-and-set, read again and
retried when another writer got there first, so two writers never lose each other's vectors; a leaf that
outgrows ``SHARD_ITEMS`` splits. Shards are a shortlist, never the truth: a search opens the values it returns,
and their own vectors decide (``_sharded``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from ._backoff import backoff
from ._errors import RememberConflictError
from ._keyring import VERSION, Keyring, UndecryptableError
from ._payload import pack, unpack
from ._scope import Place
from ._semantic import Semantic
from ._shard import (
    LEAF,
    SHARD_KEY,
    SPLIT,
    Item,
    Leaf,
    child_keys,
    deadline_of,
    depth_of,
    encode,
    halves,
    merged,
    oversized,
    rows_of,
)
from .stores import Address, Quota, Store

__all__ = ["Change", "Shards"]

#: Compare-and-set attempts on one shard before a write gives up (only racing writers of that shard fail one).
_ATTEMPTS = 64


class Change(NamedTuple):
    """A value written now: its key, its vector (its sealed ``tag | rows``, or empty), when, and its deadline."""

    key: str
    vector: bytes
    written_at: float | None
    expires_at: float | None


class _Node(NamedTuple):
    """A shard as read: its address, the bytes there (for compare-and-set), and what it holds."""

    key: str
    address: Address
    data: bytes | None
    kind: bytes | None  # LEAF, SPLIT, or None: missing (or unreadable: rewritten at the next write)
    leaf: Leaf | None
    deadline: float | None


class Shards:
    """The vector shards of every place of one store (at the primary secret's addresses)."""

    def __init__(self, store: Store, keyring: Keyring) -> None:
        self.store = store
        self.keyring = keyring

    async def keep(
        self,
        semantic: Semantic,
        place: Place,
        changes: Mapping[str, Change | None],
        now: float,
        quota: Quota | None,
    ) -> None:
        """Record each value (by its store name) as written, or gone (None), in its leaf."""
        if not changes:
            return
        dimensions = semantic.dimensions
        items: dict[str, Item | None] = {}
        for name, change in changes.items():
            if change is None:
                items[name] = None
                continue
            rows = b"" if dimensions is None else rows_of(change.vector, semantic.tag, dimensions)
            written = math.nan if change.written_at is None else change.written_at
            deadline = math.inf if change.expires_at is None else change.expires_at
            items[name] = Item(written, deadline, rows, change.key)
        await self._apply(place, SHARD_KEY, items, now, quota, semantic.tag, dimensions)

    async def leaves(self, place: Place, now: float) -> list[Leaf] | None:
        """Every leaf of the place (a round trip per level of the tree); None when it has no shards at all."""
        nodes = await self._tree(place, now)
        return None if nodes is None else [node.leaf for node in nodes if node.leaf is not None]

    async def addresses(self, place: Place, now: float) -> list[Address]:
        """Where the place's live shard entries are (to delete them with the place)."""
        return [node.address for node in await self._tree(place, now) or () if node.data is not None]

    async def _tree(self, place: Place, now: float) -> list[_Node] | None:
        level, found = [SHARD_KEY], []
        while level:
            deeper: list[str] = []
            for node in await self._read(place, level, now):
                if node.kind is None and node.key == SHARD_KEY:
                    return None
                if node.kind == SPLIT:
                    deeper += child_keys(node.key)
                found.append(node)
            level = deeper
        return found

    async def _apply(
        self,
        place: Place,
        key: str,
        items: Mapping[str, Item | None],
        now: float,
        quota: Quota | None,
        tag: bytes,
        dimensions: int | None,
    ) -> None:
        """Merge ``items`` into the shard at ``key`` (and under it, when it is split), by compare-and-set."""
        for attempt in range(_ATTEMPTS):
            [node] = await self._read(place, [key], now)
            if node.kind == SPLIT:
                latest = deadline_of((item for item in items.values() if item is not None), -math.inf)
                # The marker outlives what is under it, so the tree never loses its root while a value lives.
                later = node.deadline is not None and (latest is None or latest > node.deadline)
                if later and not await self._swap(place, node, SPLIT, b"", latest, now, quota):
                    await backoff(attempt)
                    continue
                for child, part in zip(child_keys(key), halves(key, items), strict=True):
                    if part:
                        await self._apply(place, child, part, now, quota, tag, dimensions)
                return
            leaf = node.leaf
            if dimensions is None:
                dimensions = 0 if leaf is None else leaf.dimensions
            usable = leaf is not None and leaf.tag == tag and leaf.dimensions == dimensions
            kept = leaf.items() if leaf is not None and usable else {}
            new = merged(kept, items, now)
            if (node.kind is None and not new) or (usable and new == kept):
                return
            if oversized(key, new, dimensions):
                for child, moved in zip(child_keys(key), halves(key, new), strict=True):
                    if moved:
                        await self._apply(place, child, moved, now, quota, tag, dimensions)
                done = await self._swap(place, node, SPLIT, b"", deadline_of(new.values(), now), now, quota)
            else:
                blob = encode(tag, dimensions, new)
                done = await self._swap(place, node, LEAF, blob, deadline_of(new.values(), now), now, quota)
            if done:
                return
            await backoff(attempt)
        raise RememberConflictError(f"the vector shard {depth_of(key)} levels deep", _ATTEMPTS)

    async def _swap(
        self,
        place: Place,
        node: _Node,
        kind: bytes,
        blob: bytes,
        deadline: float | None,
        now: float,
        quota: Quota | None,
    ) -> bool:
        plaintext = pack(place.identity, place.bucket, node.key, kind, deadline, now, blob)
        data = self.keyring.seal(*node.address, plaintext)
        return await self.store.swap(*node.address, node.data, data, deadline, now, quota=quota)

    async def _read(self, place: Place, keys: Sequence[str], now: float) -> list[_Node]:
        addresses = [self.keyring.locate(place.identity, place.bucket, key)[0] for key in keys]
        entries = await self.store.get_many(addresses, now)
        nodes = []
        for key, address, entry in zip(keys, addresses, entries, strict=True):
            if entry is None:
                nodes.append(_Node(key, address, None, None, None, None))
                continue
            kind, leaf, deadline = self._opened(address, entry.data, now)
            nodes.append(_Node(key, address, entry.data, kind, leaf, deadline))
        return nodes

    def _opened(self, address: Address, data: bytes, now: float) -> tuple[bytes | None, Leaf | None, float | None]:
        try:
            opened = self.keyring.open(*address, data)
            if opened.version != VERSION:
                return None, None, None
            payload = unpack(opened.plaintext)
            if not payload.live(now):
                return None, None, None
            if payload.value_json == SPLIT:
                return SPLIT, None, payload.expires_at
            if payload.value_json == LEAF:
                return LEAF, Leaf.decode(payload.vector), payload.expires_at
        except (UndecryptableError, ValueError):
            pass
        return None, None, None
