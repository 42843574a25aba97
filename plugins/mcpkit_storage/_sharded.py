"""Search by meaning from the place's vector shards: the vectors are read without opening a value, scored and fused
with BM25, and only the best few values are opened, their own vectors deciding.

It answers only when the shards can: one address (no rotation under way), shards of the query's model, and at
least as many live values in them as the index counts (``Stats.documents``). Otherwise it says so (None), and the
search opens every value instead (``_search._by_meaning``), then fills the shards from what it opened.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import NamedTuple

from mcpkit_search import dimensions_of, fuse, unpack_vectors

from ._errors import RememberConflictError
from ._match import MAX_SEARCH_LIMIT, Match, SearchMode, explained
from ._payload import Payload
from ._scope import Place
from ._semantic import MAX_EMBEDDED_PER_SEARCH
from ._shard import Leaf
from ._shards import Change
from ._vault import Vault
from .stores import Address, Quota, QuotaExceededError, StoreUnavailableError

__all__ = ["by_shards", "fill"]

logger = logging.getLogger("mcpkit.remember.semantic")

#: How many more values than asked for a search opens at first: the best by the shards' vectors, checked against
#: their own (and the next ones taken when some no longer open).
CANDIDATES = 2

#: Rounds of opening more candidates when some of the best no longer open or their vectors changed.
_ROUNDS = 4


class _Columns(NamedTuple):
    """Every live item of the place's leaves, side by side."""

    names: list[bytes]  # 16 bytes each
    written: list[float]  # 0 when unknown, as a match without ``updated_at`` ranks
    best: dict[int, tuple[float, int]]  # item -> its best row's similarity (its row: found when opened)
    vectorless: list[int]  # items without rows, in name order


async def by_shards(
    vault: Vault,
    place: Place,
    words: Sequence[str],
    query: bytes,
    now: float,
    limit: int,
    mode: SearchMode,
    weight: float,
) -> list[Match] | None:
    """``semantic`` or ``hybrid`` from the shards, as ``_by_meaning`` ranks them; None when they cannot answer."""
    semantic = vault.semantic
    buckets = vault.buckets(place)
    if semantic is None or len(buckets) != 1:
        return None
    leaves = await vault.shards.leaves(place, now)
    if leaves is None:
        return None
    dimensions = dimensions_of(query)
    if any(leaf.tag != semantic.tag or leaf.dimensions != dimensions for leaf in leaves if len(leaf)):
        return None
    owner, bucket = buckets[0]
    terms = vault.index.terms(0, owner, bucket, words) if words and mode == "hybrid" else []
    ranking = await vault.store.search(owner, bucket, terms, now, limit=MAX_SEARCH_LIMIT if terms else 0)
    columns = _columns(leaves, query, semantic.name, dimensions, now)
    if len(columns.names) < ranking.stats.documents:
        return None  # values the shards do not hold (kept before them, or by an older mcpkit)
    number = {name: item for item, name in enumerate(columns.names)}
    lexical: dict[int, float] = {}
    for name, score in ranking.hits:
        raw = bytes.fromhex(name)
        if raw not in number:
            number[raw] = len(columns.names)
            columns.names.append(raw)
        lexical[number[raw]] = score
    best = dict(columns.best)
    opened: dict[int, Payload] = {}
    # Values kept without a vector: opened and embedded now, within the budget (as when every value is opened).
    await _open(vault, owner, bucket, columns.names, columns.vectorless[:MAX_EMBEDDED_PER_SEARCH], opened, now, place)
    kept = [item for item in columns.vectorless if item in opened]
    made = await semantic.similarities(query, [opened[item] for item in kept])
    best.update((kept[position], found) for position, found in made.items())
    want = limit * CANDIDATES + 8
    for round_ in range(_ROUNDS + 1):
        similarity = {item: score for item, (score, _) in best.items()}
        scores = fuse(lexical, similarity, weight=weight) if mode == "hybrid" else similarity
        matching = lexical.keys() | {item for item, score in similarity.items() if score > semantic.min_similarity}

        ordered = ((-scores[item], -_written(columns, opened, item), columns.names[item], item) for item in matching)
        shortlist = [item for *_, item in sorted(ordered)[:want]]
        fresh = [item for item in shortlist if item not in opened]
        if not fresh or round_ == _ROUNDS:
            break
        await _open(vault, owner, bucket, columns.names, fresh, opened, now, place)
        gone = [item for item in fresh if item not in opened]
        checked = [item for item in fresh if item in opened]
        own = await semantic.similarities(query, [opened[item] for item in checked])
        if gone:
            await _prune(vault, place, [columns.names[item].hex() for item in gone], now)
        if not _verify(best, checked, own, gone, lexical):
            break
        want *= 2
    top = sorted(
        (item for item in shortlist if item in opened),
        key=lambda item: (-scores[item], -(opened[item].written_at or 0.0), opened[item].key),
    )[:limit]
    return explained(
        mode, top, opened, scores, lexical, similarity, {item: best[item][1] for item in top if item in best}
    )


def _columns(leaves: list[Leaf], query: bytes, model: str, dimensions: int, now: float) -> _Columns:
    """The live items of ``leaves`` with each one's best similarity to ``query`` (numpy: no Python step per row)."""
    import numpy

    [query_row], _ = unpack_vectors(model, [query], dimensions)
    names: list[bytes] = []
    written: list[float] = []
    similarities: list[float] = []
    vectorless: list[tuple[bytes, int]] = []
    record = 4 + dimensions
    for leaf in leaves:
        meta = leaf.meta
        if not len(meta):
            continue
        rows = meta["rows"].astype(numpy.int64)
        starts = numpy.concatenate(([0], numpy.cumsum(rows)[:-1]))
        best = numpy.full(len(meta), numpy.nan)
        has = rows > 0
        if has.any():
            block = numpy.frombuffer(leaf.rows, dtype=numpy.uint8).reshape(-1, record)
            scales = block[:, :4].copy().view("<f4")
            row_scores = (block[:, 4:].view(numpy.int8).astype(numpy.float32) * scales) @ query_row
            # Items with rows lie end to end, so each segment from one's start to the next's is its own rows.
            best[has] = numpy.maximum.reduceat(row_scores, starts[has])
        live = numpy.flatnonzero(meta["deadline"] > now)
        base = len(names)
        names += numpy.frombuffer(leaf.names, dtype="V16")[live].tolist()
        written += numpy.nan_to_num(meta["written"][live], nan=0.0).tolist()
        similarities += best[live].tolist()
        vectorless += [(names[base + at], base + at) for at in numpy.flatnonzero(~has[live]).tolist()]
    found = {item: (score, 0) for item, score in enumerate(similarities) if score == score}
    vectorless.sort()
    return _Columns(names, written, found, [item for _, item in vectorless])


def _written(columns: _Columns, opened: dict[int, Payload], item: int) -> float:
    payload = opened.get(item)
    if payload is not None:
        return payload.written_at or 0.0
    return columns.written[item] if item < len(columns.written) else 0.0


def _verify(
    best: dict[int, tuple[float, int]],
    fresh: list[int],
    own: dict[int, tuple[float, int]],
    gone: list[int],
    lexical: dict[int, float],
) -> bool:
    """Put each opened value's own similarity in place of its shard's, drop the values gone; whether any changed."""
    changed = bool(gone)
    for item in gone:
        best.pop(item, None)
        lexical.pop(item, None)
    for position, item in enumerate(fresh):
        found = own.get(position)
        if found is None:
            changed = changed or item in best
            best.pop(item, None)
        elif best.get(item) is None or not math.isclose(best[item][0], found[0], abs_tol=1e-6):
            changed = True
            best[item] = found
        else:
            best[item] = found
    return changed


async def _open(
    vault: Vault,
    owner: str,
    bucket: str,
    names: list[bytes],
    items: list[int],
    opened: dict[int, Payload],
    now: float,
    place: Place,
) -> None:
    """Open ``items`` (one ``get_many``) into ``opened``; a value gone or unreadable stays out."""
    if not items:
        return
    addresses = [Address(owner, bucket, names[item].hex()) for item in items]
    began = vault.begin()
    for item, address, entry in zip(items, addresses, await vault.store.get_many(addresses, now), strict=True):
        payload = None if entry is None else vault.opened(address, entry, now, place, began)
        if payload is not None:
            opened[item] = payload


async def fill(vault: Vault, place: Place, opened: dict[str, Payload], now: float, quota: Quota | None) -> None:
    """Put every opened value of a place (by store name) in its shards, for the searches to come (best effort)."""
    changes = {name: Change(payload.vector, payload.written_at, payload.expires_at) for name, payload in opened.items()}
    try:
        await vault.keep_vectors(place, dict(changes), now, quota)
    except (StoreUnavailableError, QuotaExceededError, RememberConflictError) as exc:
        logger.warning("could not fill the vector shards of a place (its searches open every value): %s", exc)


async def _prune(vault: Vault, place: Place, names: list[str], now: float) -> None:
    """Take values a search found gone out of their shards (best effort: the next write prunes them too)."""
    try:
        await vault.keep_vectors(place, dict.fromkeys(names), now, None)
    except (StoreUnavailableError, QuotaExceededError, RememberConflictError) as exc:
        logger.info("could not prune %d gone value(s) from their vector shard: %s", len(names), exc)
