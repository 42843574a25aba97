"""The shard tree (``Shards``): a place's vector index, so a search by meaning reads vectors without opening values.

Beside the values of a place searched by meaning, copies of their quantised vectors live in shard entries
(``_shard_layout``): ordinary sealed entries of the same bucket, under keys no caller can use. So every store keeps
them without a line of store code, and deleting the bucket, purging a user, expiry and quotas cover them as
they cover values. Each write of a searchable value changes its value's leaf by compare-and-set, read again and
retried when another writer got there first, so two writers never lose each other's vectors; a leaf that
outgrows ``SHARD_ITEMS`` splits. Shards are a shortlist, never the truth: a search opens the values it returns,
and their own vectors decide (``retrieval._sharded_search``).
"""

from __future__ import annotations

import logging
import math
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from ..base import Place, RememberConflictError, backoff
from ..sealing import VERSION, Keyring, UndecryptableError, pack, unpack
from ..stores import Address, Quota, Store
from ._semantic import Semantic
from ._shard_layout import (
    LEAF,
    SHARD_KEY,
    SPLIT,
    Item,
    Leaf,
    Merged,
    child_keys,
    deadline_of,
    depth_of,
    halves,
    leaf_of,
    merged,
    oversized,
    rows_of,
)

logger = logging.getLogger("mcpkit.remember")

__all__ = ["Change", "Shards"]

#: Compare-and-set attempts on one shard before a write gives up (only racing writers of that shard fail one).
_ATTEMPTS = 64

#: Places whose tree a process remembers (its split shards), so a write reads its leaf alone and a search reads
#: the whole tree in one round trip; the least recently used are forgotten first.
PLACES_REMEMBERED = 4096


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
        # Per place, the keys of the shards seen split, with their deadlines. A split shard stays split, so this
        # only goes stale when a tree is deleted: a shard it leads to that is missing sends the write to the root.
        self._splits: OrderedDict[tuple[str, str], dict[str, float | None]] = OrderedDict()

    async def written(
        self, semantic: Semantic, place: Place, name: str, change: Change, now: float, quota: Quota | None
    ) -> None:
        """A write's change to its value's leaf, made before the value; a lost race is named by the caller's key."""
        try:
            await self.keep(semantic, place, {name: change}, now, quota)
        except RememberConflictError:
            raise RememberConflictError(change.key, _ATTEMPTS) from None

    async def unwritten(self, semantic: Semantic, place: Place, name: str, now: float) -> None:
        """Take a value whose write failed out of its leaf again (best effort): an item missing is found by the count
        that tells a complete shard, and filled; one for a value that was never written would not be."""
        try:
            await self.keep(semantic, place, {name: None}, now, None)
        except Exception:
            logger.warning("could not take a failed write out of its vector shard", exc_info=True)

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

    def batch(
        self, place: Place, vectors: Mapping[str, bytes], expires_at: float | None, now: float
    ) -> dict[str, Change]:
        """The changes of a batch of values written now (key -> vector), by store name."""
        located = self.keyring.locate
        return {
            located(*place[:2], key)[0].key: Change(key, vector, now, expires_at) for key, vector in vectors.items()
        }

    async def leaves(self, place: Place, now: float) -> list[Leaf] | None:
        """Every leaf of the place (a round trip per level of the tree); None when it has no shards at all."""
        nodes = await self._tree(place, now)
        return None if nodes is None else [node.leaf for node in nodes if node.leaf is not None]

    async def addresses(self, place: Place, now: float) -> list[Address]:
        """Where the place's live shard entries are (to delete them with the place)."""
        return [node.address for node in await self._tree(place, now) or () if node.data is not None]

    async def _tree(self, place: Place, now: float) -> list[_Node] | None:
        """Every shard reachable from the root: the remembered tree read at once, then a level at a time below
        what it did not know."""
        known = self._known(place)
        asked = {SHARD_KEY, *known, *(child for key in known for child in child_keys(key))}
        fetched = {node.key: node for node in await self._read(place, sorted(asked), now)}
        level, found = [SHARD_KEY], []
        while level:
            unread = [key for key in level if key not in fetched]
            if unread:
                fetched.update((node.key, node) for node in await self._read(place, unread, now))
            deeper: list[str] = []
            for key in level:
                node = fetched[key]
                if node.kind is None and key == SHARD_KEY:
                    self._splits.pop((place.identity, place.bucket), None)
                    return None
                if node.kind == SPLIT:
                    known[key] = node.deadline
                    deeper += child_keys(key)
                else:
                    known.pop(key, None)
                found.append(node)
            level = deeper
        return found

    def _known(self, place: Place) -> dict[str, float | None]:
        where = (place.identity, place.bucket)
        known = self._splits.get(where)
        if known is None:
            known = self._splits[where] = {}
            if len(self._splits) > PLACES_REMEMBERED:
                self._splits.popitem(last=False)
        else:
            self._splits.move_to_end(where)
        return known

    async def _apply(
        self,
        place: Place,
        key: str,
        items: Mapping[str, Item | None],
        now: float,
        quota: Quota | None,
        tag: bytes,
        dimensions: int | None,
        seen: bool = True,
    ) -> None:
        """Merge ``items`` into the shard at ``key`` (and under it, when it is split), by compare-and-set.

        ``seen``: its parent was read split just now (else only remembered so, and the tree may be gone since).
        """
        known = self._known(place)
        latest = deadline_of((item for item in items.values() if item is not None), -math.inf)
        if key in known:
            marker = known[key]
            if marker is None or (latest is not None and latest <= marker):  # split, and outlives these items
                for child, part in zip(child_keys(key), halves(key, items), strict=True):
                    if part:
                        await self._apply(place, child, part, now, quota, tag, dimensions, seen=False)
                return
        for attempt in range(_ATTEMPTS):
            [node] = await self._read(place, [key], now)
            if node.kind is None and not seen:  # the remembered tree is gone (deleted, expired): from the root
                self._splits.pop((place.identity, place.bucket), None)
                await self._apply(place, SHARD_KEY, items, now, quota, tag, dimensions)
                return
            if node.kind == SPLIT:
                # The marker outlives what is under it, so the tree never loses its root while a value lives.
                later = node.deadline is not None and (latest is None or latest > node.deadline)
                if later and not await self._swap(place, node, SPLIT, b"", latest, now, quota):
                    await backoff(attempt)
                    continue
                known[key] = latest if later else node.deadline
                for child, part in zip(child_keys(key), halves(key, items), strict=True):
                    if part:
                        await self._apply(place, child, part, now, quota, tag, dimensions)
                return
            known.pop(key, None)
            leaf = node.leaf
            if dimensions is None:
                dimensions = 0 if leaf is None else leaf.dimensions
            usable = leaf is not None and leaf.tag == tag and leaf.dimensions == dimensions
            if leaf is not None and usable:
                changed = leaf.merge(items, now)
                if changed is None:
                    return
            else:
                fresh = merged({}, items, now)
                if node.kind is None and not fresh:
                    return
                rows = sum(len(item.rows) for item in fresh.values()) // (4 + dimensions)
                changed = Merged(leaf_of(tag, dimensions, fresh), len(fresh), rows, deadline_of(fresh.values(), now))
            if oversized(key, changed.values, changed.rows):
                new = merged(leaf.items() if leaf is not None and usable else {}, items, now)
                for child, moved in zip(child_keys(key), halves(key, new), strict=True):
                    if moved:
                        await self._apply(place, child, moved, now, quota, tag, dimensions)
                marker = deadline_of(new.values(), now)
                done = await self._swap(place, node, SPLIT, b"", marker, now, quota)
                if done:
                    known[key] = marker
            else:
                done = await self._swap(place, node, LEAF, changed.blob, changed.deadline, now, quota)
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
