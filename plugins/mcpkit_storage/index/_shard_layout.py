"""The shard layout: one sealed entry of a place's vector index — the layout of its items, and how they change.

A place searched by meaning keeps, beside its values, copies of their quantised vectors in shard entries (see
``_shard_tree``). Shards form a binary tree by the bits of the values' store names (keyed hashes, so evenly spread):
the root is ``SHARD_KEY``, a shard that outgrows ``SHARD_ITEMS`` splits into the two shards one bit deeper, and
is left as a ``split`` marker. A leaf holds, per value (its name at the primary secret, 16 bytes), when it was
written, its deadline, its key (so ties rank by key as when values are opened) and its vectors' rows: ``tag |
dimensions (u32) | count (u32) | names (16 bytes each) | (written f64, deadline f64, rows u32, key bytes u16)
each | keys (UTF-8) | rows (scale f32, int8 components) each``, numbers little-endian, so a search reads a
leaf's columns with numpy without a Python step per value. No I/O here.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from mcpkit_search import TAG_BYTES

from ..sealing import utf8

if TYPE_CHECKING:
    import numpy.typing

__all__ = ["SHARD_ITEMS", "SHARD_KEY", "Item", "Leaf", "child_keys", "is_shard_key", "leaf_key_for"]

#: The key of a place's root shard; every shard's key starts with it. No caller's key can (keys are printable).
SHARD_KEY = "\x00vectors:"

#: The values a leaf holds before it splits in two (about 200 KB of ``MiniLM`` vectors for short values).
SHARD_ITEMS = 512

#: The rows (chunk vectors) a leaf holds before it splits, for values long enough to have many.
SHARD_ROWS = 2048

#: The deepest a shard goes (2^24 leaves): past it a leaf keeps growing rather than split.
_MAX_DEPTH = 24
_NAME_BYTES = 16
_HEAD = struct.Struct("<4sII")
_META = struct.Struct("<ddIH")
#: The kind of a shard, as its entry's (JSON) value: a leaf holds vectors, a split marker none.
LEAF, SPLIT = b'"leaf"', b'"split"'
_V = TypeVar("_V")


class Item(NamedTuple):
    """One value as a leaf holds it: when it was written (NaN: unknown), its deadline (inf: none), its rows and its
    key."""

    written: float
    deadline: float
    rows: bytes
    key: str


def is_shard_key(key: str) -> bool:
    """Whether a sealed entry's key is a shard's (never a caller's value)."""
    return key.startswith(SHARD_KEY)


def _bits(name: str) -> int:
    return int(name[:8], 16) if len(name) >= 8 else 0


def leaf_key_for(name: str, depth: int) -> str:
    """The key of the shard at ``depth`` on the path of the value stored as ``name``."""
    if depth == 0:
        return SHARD_KEY
    return SHARD_KEY + format(_bits(name) >> (32 - depth), f"0{depth}b")


def child_keys(key: str) -> tuple[str, str]:
    """The two shards a split shard's items went to."""
    return key + "0", key + "1"


def depth_of(key: str) -> int:
    return len(key) - len(SHARD_KEY)


class Leaf:
    """A leaf's columns as stored (numpy views; ``numpy`` comes with an embedder)."""

    def __init__(
        self, tag: bytes, dimensions: int, names: bytes, meta: Any, keys: bytes, rows: bytes | memoryview
    ) -> None:
        self.tag = tag
        self.dimensions = dimensions
        self.names = names  # count x 16 bytes
        self.meta = meta  # numpy structured array: written, deadline, rows, key (its bytes)
        self.keys = keys  # every item's key, in order
        self.rows = rows  # every item's rows, in order

    @staticmethod
    def decode(blob: bytes) -> Leaf:
        """A leaf from its stored bytes; ValueError when they do not add up."""
        import numpy

        if len(blob) < _HEAD.size:
            raise ValueError("a vector shard is truncated")
        tag, dimensions, count = _HEAD.unpack_from(blob)
        at = _HEAD.size + count * _NAME_BYTES
        end = at + count * _META.size
        if len(blob) < end:
            raise ValueError("a vector shard is truncated")
        meta = numpy.frombuffer(blob, dtype=_meta_type(), count=count, offset=at) if count else _meta_empty()
        keys_end = end + int(meta["key"].sum(dtype=numpy.int64))
        rows = memoryview(blob)[keys_end:]  # not copied: a search reads it once
        if len(blob) < keys_end or len(rows) != int(meta["rows"].sum(dtype=numpy.int64)) * (4 + dimensions):
            raise ValueError("a vector shard's rows do not add up")
        names = blob[_HEAD.size : _HEAD.size + count * _NAME_BYTES]
        return Leaf(tag, dimensions, names, meta, blob[end:keys_end], rows)

    def __len__(self) -> int:
        return len(self.meta)

    def items(self) -> dict[str, Item]:
        """Every item by the name of its value (a Python step each: for writes, a leaf at a time)."""
        items: dict[str, Item] = {}
        row = 4 + self.dimensions
        at = key_at = 0
        for number, (written, deadline, rows, key) in enumerate(self.meta.tolist()):
            name = self.names[number * _NAME_BYTES : (number + 1) * _NAME_BYTES].hex()
            text = self.keys[key_at : key_at + key].decode("utf-8", "surrogatepass")
            items[name] = Item(written, deadline, bytes(self.rows[at : at + rows * row]), text)
            at += rows * row
            key_at += key
        return items

    def merge(self, items: Mapping[str, Item | None], now: float) -> Merged | None:
        """This leaf with ``items`` merged in as ``merged`` does, worked on its columns (no Python step per value it
        keeps: a write changes one value of hundreds); None when nothing changes."""
        import numpy

        meta = self.meta
        keep = meta["deadline"] > now
        changed = not keep.all()
        at_name = self._positions(items)
        row = 4 + self.dimensions
        row_ends = numpy.cumsum(meta["rows"].astype(numpy.int64)) * row
        added: dict[str, Item] = {}
        for name, item in items.items():
            at = at_name.get(name)
            held = at is not None and bool(keep[at])
            if item is None:
                if held:
                    keep[at], changed = False, True
                continue
            if held and at is not None:
                if item.written < meta["written"][at]:
                    continue  # written before the one kept: that one stays
                start = int(row_ends[at]) - int(meta["rows"][at]) * row
                same_rows = bytes(self.rows[start : int(row_ends[at])]) == item.rows
                if same_rows and (item.written, item.deadline) == (meta["written"][at], meta["deadline"][at]):
                    continue  # this very item again (a search filling the shards it found short)
                keep[at] = False
            if item.deadline > now:
                added[name], changed = item, True
        if not changed:
            return None
        kept = numpy.flatnonzero(keep)
        key_ends = numpy.cumsum(meta["key"].astype(numpy.int64))
        new = encode(self.tag, self.dimensions, added)
        count = len(kept) + len(added)
        parts = [
            _HEAD.pack(self.tag, self.dimensions, count),
            numpy.frombuffer(self.names, dtype="V16")[kept].tobytes(),
            new.names,
            meta[kept].tobytes(),
            new.meta,
            _runs(self.keys, key_ends[kept] - meta["key"][kept], key_ends[kept]),
            new.keys,
            _runs(self.rows, row_ends[kept] - meta["rows"][kept].astype(numpy.int64) * row, row_ends[kept]),
            new.rows,
        ]
        rows = int(meta["rows"][kept].sum()) + sum(len(item.rows) // row for item in added.values())
        deadlines = [float(meta["deadline"][kept].max())] if len(kept) else []
        latest = max(deadlines + [item.deadline for item in added.values()], default=now)
        return Merged(b"".join(parts), count, rows, None if latest == math.inf else latest)

    def _positions(self, items: Mapping[str, Item | None]) -> dict[str, int]:
        """Where each of ``items`` is in this leaf (those it holds)."""
        import numpy

        if len(items) > 16:
            return {self.names[at * 16 : at * 16 + 16].hex(): at for at in range(len(self.meta))}
        halves = numpy.frombuffer(self.names, dtype="<u8").reshape(-1, 2)
        positions = {}
        for name in items:
            first, second = numpy.frombuffer(bytes.fromhex(name), dtype="<u8")
            for at in numpy.flatnonzero(halves[:, 0] == first).tolist():
                if halves[at, 1] == second:
                    positions[name] = at
        return positions


class Merged(NamedTuple):
    """A leaf after a change: its stored bytes, how many values and rows it holds, and its deadline."""

    blob: bytes
    values: int
    rows: int
    deadline: float | None


class _Encoded(NamedTuple):
    names: bytes
    meta: bytes
    keys: bytes
    rows: bytes


def _runs(blob: bytes | memoryview, starts: Any, ends: Any) -> bytes:
    """The bytes from each start to its end, joined: one slice per run of them that lie end to end."""
    import numpy

    if not len(starts):
        return b""
    breaks = numpy.flatnonzero(starts[1:] != ends[:-1]) + 1
    firsts = numpy.concatenate(([0], breaks)).tolist()
    lasts = numpy.concatenate((breaks - 1, [len(starts) - 1])).tolist()
    return b"".join(bytes(blob[int(starts[a]) : int(ends[b])]) for a, b in zip(firsts, lasts, strict=True))


def encode(tag: bytes, dimensions: int, items: Mapping[str, Item]) -> _Encoded:
    """A leaf's columns for ``items`` (``leaf_of`` puts them together)."""
    names = b"".join(bytes.fromhex(name) for name in items)
    keys = [utf8(item.key) for item in items.values()]
    meta = b"".join(
        _META.pack(item.written, item.deadline, len(item.rows) // (4 + dimensions), len(key))
        for item, key in zip(items.values(), keys, strict=True)
    )
    return _Encoded(names, meta, b"".join(keys), b"".join(item.rows for item in items.values()))


def leaf_of(tag: bytes, dimensions: int, items: Mapping[str, Item]) -> bytes:
    """A leaf's stored bytes."""
    names, meta, keys, rows = encode(tag, dimensions, items)
    return b"".join([_HEAD.pack(tag, dimensions, len(items)), names, meta, keys, rows])


def rows_of(vector: bytes, tag: bytes, dimensions: int) -> bytes:
    """A value's sealed vector (``tag | rows``) as a leaf keeps it: its rows; none when of another model or size."""
    if vector[:TAG_BYTES] != tag or (len(vector) - TAG_BYTES) % (4 + dimensions):
        return b""
    return vector[TAG_BYTES:]


def merged(kept: Mapping[str, Item], added: Mapping[str, Item | None], now: float) -> dict[str, Item]:
    """``kept`` with ``added`` (None: remove that name), expired items left out. An item written before the one
    kept (by ``written``) does not replace it; a replaced item takes its own deadline, its value's (a shard item
    that outlived its value would hide a missing one from the count that tells a complete shard)."""
    items = {name: item for name, item in kept.items() if item.deadline > now}
    for name, item in added.items():
        if item is None:
            items.pop(name, None)
            continue
        old = items.get(name)
        if old is not None and item.written < old.written:
            continue
        if item.deadline > now:
            items[name] = item
        else:
            items.pop(name, None)  # written already past its deadline: its value is gone too
    return items


def oversized(key: str, count: int, rows: int) -> bool:
    """Whether a leaf of ``count`` values and ``rows`` rows splits (too many, and not yet at the deepest)."""
    if depth_of(key) >= _MAX_DEPTH or count < 2:
        return False
    return count > SHARD_ITEMS or rows > SHARD_ROWS


def halves(key: str, items: Mapping[str, _V]) -> tuple[dict[str, _V], dict[str, _V]]:
    """A splitting leaf's items (or changes), by the next bit of their names."""
    depth = depth_of(key)
    left: dict[str, _V] = {}
    right: dict[str, _V] = {}
    for name, item in items.items():
        (right if (_bits(name) >> (31 - depth)) & 1 else left)[name] = item
    return left, right


def deadline_of(items: Iterable[Item], now: float) -> float | None:
    """A shard's deadline: its last item's (None: one is kept until forgotten); ``now`` for an empty one, which
    then goes (a missing shard under a split one counts as empty)."""
    latest = max((item.deadline for item in items), default=now)
    return None if latest == math.inf else latest


def _meta_type() -> Any:
    import numpy

    return numpy.dtype([("written", "<f8"), ("deadline", "<f8"), ("rows", "<u4"), ("key", "<u2")])


def _meta_empty() -> numpy.typing.NDArray[Any]:
    import numpy

    return numpy.zeros(0, dtype=_meta_type())
