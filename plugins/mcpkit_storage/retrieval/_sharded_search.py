"""Search by meaning from the place's vector shards: the vectors are read without opening a value, scored and fused
with BM25, and only the best few values are opened, their own vectors deciding.

It answers only when the shards can: one address (no rotation under way), shards of the query's model, and at
least as many live values in them as the index counts (``Stats.documents``). Otherwise it says so (None), and the
search opens every value instead (``_search._by_meaning``), then fills the shards from what it opened.

With a filter (``Kept``) it ranks as without one and returns the best of the values the filter keeps: the shards
hold no event time and no source, so the values its facets admit (``admitted``) are a mask on the shortlist, and
each value opened is checked against its exact sealed time and source.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Collection, Sequence
from typing import Any

from mcpkit_search import dimensions_of, fuse_dense, parts, unpack_vectors

from ..base import Place, RememberConflictError
from ..index import MAX_EMBEDDED_PER_SEARCH, Change, Leaf
from ..sealing import Payload
from ..stores import Address, Quota, QuotaExceededError, StoreUnavailableError
from ..vault import Vault
from ._admitted import admitted
from ._kept import Kept
from ._match import MAX_SEARCH_LIMIT, Asked, Match, explained
from ._ties import bucket_ranking

__all__ = ["by_shards", "fill"]

logger = logging.getLogger("mcpkit.remember.semantic")

#: How many more values than asked for a search opens at first (``CANDIDATES * limit + SPARE``): the best by the
#: shards' vectors, checked against their own (and the next ones taken when some no longer open).
CANDIDATES = 2
SPARE = 8

#: Rounds of opening more candidates when some of the best no longer open or their vectors changed.
_ROUNDS = 4

#: About how many keys ``admitted`` lists in the time this search opens one more value past its shortlist (with a
#: filter that lists none, it opens the best until enough pass): measured with ``bench.search_window``'s hybrid
#: rows, a third of 10,000 values listed cost more than opening three times the shortlist.
LISTED_PER_OPENED_HERE = 20


class _Columns:
    """Every live item of the place's leaves side by side, as numpy arrays (numbers: positions in them)."""

    def __init__(self, names: Any, written: Any, similarity: Any, keys: tuple[bytes, Any, Any]) -> None:
        self.names = names  # 16-byte names (numpy "V16")
        self.written = written  # when each was written, 0 when unknown (as a match without ``updated_at`` ranks)
        self.similarity = similarity  # each one's best row's similarity to the query (NaN: no vector)
        self._keys, self._key_starts, self._key_ends = keys  # every leaf's keys, and where each item's is
        #: Items without rows, in name order (as the store lists the place's values when every one is opened).
        self.vectorless: list[int] = []

    def name(self, item: int) -> str:
        return bytes(self.names[item].tobytes()).hex()

    def key(self, item: int) -> str:
        """The item's key (empty for a value the leaves do not hold)."""
        if item >= len(self._key_starts):
            return ""
        return self._keys[self._key_starts[item] : self._key_ends[item]].decode("utf-8", "surrogatepass")

    def numbers(self, names: Sequence[str]) -> list[int]:
        """The position of each store name, added (without a vector) when the leaves do not hold it."""
        import numpy

        numbers = [-1] * len(names)
        halves = self.names.view("<u8").reshape(-1, 2) if len(self.names) else numpy.zeros((0, 2), "<u8")
        for at, name in enumerate(names):  # a hundred at most: a pass over the first 8 bytes each
            first, second = numpy.frombuffer(bytes.fromhex(name), dtype="<u8")
            for item in numpy.flatnonzero(halves[:, 0] == first).tolist():
                if halves[item, 1] == second:
                    numbers[at] = item
        for at, number in enumerate(numbers):
            if number < 0:
                numbers[at] = len(self.names)
                self.names = numpy.append(self.names, numpy.array([bytes.fromhex(names[at])], dtype="V16"))
                self.written = numpy.append(self.written, 0.0)
                self.similarity = numpy.append(self.similarity, numpy.nan)
        return numbers

    def holding(self, names: Collection[str]) -> Any:
        """Which items may be among store ``names`` (a numpy mask): by their names' first 8 bytes, so perhaps a few
        more (a mask the exact check on opening narrows), never fewer."""
        import numpy

        firsts = numpy.frombuffer(b"".join(bytes.fromhex(name[:16]) for name in names), dtype="<u8")
        halves = self.names.view("<u8").reshape(-1, 2) if len(self.names) else numpy.zeros((0, 2), "<u8")
        return numpy.isin(halves[:, 0], firsts)


async def by_shards(
    vault: Vault, place: Place, asked: Asked, now: float, limit: int, kept: Kept | None = None
) -> list[Match] | None:
    """``semantic`` or ``hybrid`` from the shards, as ``_by_meaning`` ranks them; None when they cannot answer.

    With ``kept``: the ranking without it, each score as it would be there, of the values ``kept`` keeps (the best
    ``limit`` of those)."""
    import numpy

    words, query, mode = asked.words, asked.vector, asked.mode
    semantic = vault.semantic
    buckets = vault.buckets(place)
    if semantic is None or len(buckets) != 1:
        return None
    leaves = await vault.vectors.leaves(place, now)
    if leaves is None:
        return None
    dimensions = dimensions_of(query)
    if any(leaf.tag != semantic.tag or leaf.dimensions != dimensions for leaf in leaves if len(leaf)):
        return None
    owner, bucket = buckets[0]
    terms = vault.index.terms(0, owner, bucket, words) if words and mode == "hybrid" else []
    ranking = await bucket_ranking(vault, owner, bucket, terms, words, now, MAX_SEARCH_LIMIT if terms else 0)
    hits = ranking.hits
    columns = _columns(leaves, query, semantic.name, dimensions, now)
    if len(columns.names) < ranking.stats.documents:
        return None  # values the shards do not hold (kept before them, or by an older mcpkit)
    numbers = columns.numbers([name for name, _ in hits])
    lexical = {number: score for number, (_, score) in zip(numbers, hits, strict=True)}
    want = limit * CANDIDATES + SPARE
    # The values the filter may keep (every one without a filter, or when listing them costs more than opening the
    # best until enough pass); each one opened is checked, and those it leaves out stay out of the shortlist.
    allowed = numpy.ones(len(columns.names), dtype=bool)
    if kept is not None:
        listed = await admitted(vault, owner, bucket, kept, now, wanted=want, per_opened=LISTED_PER_OPENED_HERE)
        if listed is not None:
            allowed = columns.holding(listed.keys)
    opened: dict[int, Payload] = {}
    chunks: dict[int, int] = {}
    # Values kept without a vector: opened and embedded now, within the budget (as when every value is opened).
    await _open(vault, owner, bucket, columns, columns.vectorless[:MAX_EMBEDDED_PER_SEARCH], opened, now, place)
    _refuse(allowed, opened, columns.vectorless[:MAX_EMBEDDED_PER_SEARCH], kept)
    made_for = [item for item in columns.vectorless if item in opened]
    made = await semantic.similarities(query, [opened[item] for item in made_for], caller=asked.caller)
    for position, (score, chunk) in made.items():
        columns.similarity[made_for[position]], chunks[made_for[position]] = score, chunk
    changes = tried = passed = 0
    reach = want  # how many of the best are opened in a round: more once the filter has left some out
    while True:
        similarity = columns.similarity
        scores = fuse_dense(lexical, similarity, weight=asked.weight) if mode == "hybrid" else similarity
        matching = numpy.zeros(len(scores), dtype=bool)
        matching[list(lexical)] = True
        matching |= similarity > semantic.min_similarity
        matching &= ~numpy.isnan(scores) & allowed
        weak = _weak(scores, matching, limit, allowed) if mode == "semantic" else []
        matching[weak] = True
        shortlist = _best(columns, scores, numpy.flatnonzero(matching), opened, max(want, reach))
        if changes == _ROUNDS or all(item in opened for item in shortlist[:want]):
            break
        fresh = [item for item in shortlist if item not in opened]
        await _open(vault, owner, bucket, columns, fresh, opened, now, place)
        gone = [item for item in fresh if item not in opened]
        checked = [item for item in fresh if item in opened]
        refused = _refuse(allowed, opened, checked, kept)
        own = await semantic.similarities(query, [opened[item] for item in checked], caller=asked.caller)
        if gone:
            await _prune(vault, place, [columns.name(item) for item in gone], now)
        if _verify(columns, checked, own, gone, lexical, chunks):
            changes += 1
            want *= 2
        elif not refused:
            break  # the shortlist stands: every value in it opened, as the shards said, and kept
        tried += len(checked)
        passed += sum(1 for item in checked if allowed[item])
        # Enough of the next best that about ``want`` of them pass, at the share that passed so far.
        reach = min(len(columns.names), -(-want * tried // max(passed, 1)))
    top = sorted(
        (item for item in shortlist if item in opened),
        key=lambda item: (-scores[item], -(opened[item].written_at or 0.0), opened[item].key),
    )[:limit]
    found = ~numpy.isnan(similarity)
    semantic_scores = {item: float(similarity[item]) for item in top if found[item]}
    semantic_ranks = {
        item: 1 + int(numpy.count_nonzero(similarity[found] > score)) for item, score in semantic_scores.items()
    }
    fused = {item: float(scores[item]) for item in top}
    windows = semantic.windows_embedded if asked.explain else None
    shares = None
    if asked.explain and mode == "hybrid":
        meaning = {int(item): float(similarity[item]) for item in numpy.flatnonzero(found)}
        shares = parts(lexical, meaning, top, weight=asked.weight)
    return explained(
        mode,
        top,
        opened,
        fused,
        lexical,
        semantic_scores,
        chunks,
        semantic_ranks,
        windows=windows,
        weak=set(weak),
        shares=shares,
    )


def _weak(scores: Any, matching: Any, limit: int, allowed: Any) -> list[int]:
    """In ``semantic`` mode, the best of the values under ``min_similarity`` that fill ``limit`` (``Match.weak``), of
    those ``allowed``."""
    import numpy

    missing = limit - int(numpy.count_nonzero(matching))
    if missing <= 0:
        return []
    rest = numpy.flatnonzero(~matching & allowed & ~numpy.isnan(scores))
    if len(rest) > missing:
        rest = rest[numpy.argpartition(-scores[rest], missing - 1)[:missing]]
    return [int(item) for item in rest]


def _best(columns: _Columns, scores: Any, matching: Any, opened: dict[int, Payload], want: int) -> list[int]:
    """The ``want`` best of ``matching`` by score, then the newest, then by key (as ``_by_meaning`` ranks)."""
    import numpy

    if len(matching) > want:
        edge = numpy.partition(-scores[matching], want - 1)[want - 1]
        matching = matching[-scores[matching] <= edge]

    def order(item: int) -> tuple[float, float, str]:
        payload = opened.get(item)
        if payload is None:
            return (-float(scores[item]), -float(columns.written[item]), columns.key(item))
        return (-float(scores[item]), -(payload.written_at or 0.0), payload.key)

    return sorted(matching.tolist(), key=order)[:want]


def _columns(leaves: list[Leaf], query: bytes, model: str, dimensions: int, now: float) -> _Columns:
    """The live items of ``leaves`` with each one's best similarity to ``query`` (numpy: no Python step per row)."""
    import numpy

    [query_row], _ = unpack_vectors(model, [query], dimensions)
    names, written, similarities, vectorless, keys, key_starts, key_ends = [], [], [], [], [], [], []
    record = 4 + dimensions
    count = key_base = 0
    for leaf in leaves:
        meta = leaf.meta
        if not len(meta):
            continue
        rows = meta["rows"].astype(numpy.int64)
        best = numpy.full(len(meta), numpy.nan)
        has = rows > 0
        if has.any():
            starts = numpy.concatenate(([0], numpy.cumsum(rows)[:-1]))
            block = numpy.frombuffer(leaf.rows, dtype=numpy.uint8).reshape(-1, record)
            scales = block[:, :4].copy().view("<f4").ravel()
            row_scores = (block[:, 4:].view(numpy.int8) @ query_row) * scales
            # Items with rows lie end to end, so each segment from one's start to the next's is its own rows.
            best[has] = numpy.maximum.reduceat(row_scores, starts[has])
        live = numpy.flatnonzero(meta["deadline"] > now)
        names.append(numpy.frombuffer(leaf.names, dtype="V16")[live])
        written.append(numpy.nan_to_num(meta["written"][live], nan=0.0))
        similarities.append(best[live])
        ends = key_base + numpy.cumsum(meta["key"].astype(numpy.int64))
        key_ends.append(ends[live])
        key_starts.append((ends - meta["key"])[live])
        keys.append(leaf.keys)
        key_base += len(leaf.keys)
        vectorless += (count + numpy.flatnonzero(~has[live])).tolist()
        count += len(live)
    if not names:
        empty = numpy.zeros(0, dtype=numpy.int64)
        return _Columns(numpy.zeros(0, dtype="V16"), numpy.zeros(0), numpy.zeros(0), (b"", empty, empty))
    located = (b"".join(keys), numpy.concatenate(key_starts), numpy.concatenate(key_ends))
    columns = _Columns(numpy.concatenate(names), numpy.concatenate(written), numpy.concatenate(similarities), located)
    columns.vectorless = sorted(vectorless, key=columns.name)  # the store's order of the values, by name
    return columns


def _verify(
    columns: _Columns,
    checked: list[int],
    own: dict[int, tuple[float, int]],
    gone: list[int],
    lexical: dict[int, float],
    chunks: dict[int, int],
) -> bool:
    """Put each opened value's own similarity in place of its shard's, drop the values gone; whether any changed."""
    import numpy

    similarity = columns.similarity
    changed = bool(gone)
    for item in gone:
        similarity[item] = numpy.nan
        lexical.pop(item, None)
    for position, item in enumerate(checked):
        found = own.get(position)
        before = float(similarity[item])
        if found is None:
            changed = changed or before == before
            similarity[item] = numpy.nan
            continue
        score, chunks[item] = found
        if before != before or not math.isclose(before, score, abs_tol=1e-6):
            changed = True
            similarity[item] = score
        # Else the shard's score stays (the same vector, summed in another order): a score does not depend on which
        # values a search happened to open, so a filtered search scores a value as the unfiltered one does.
    return changed


def _refuse(allowed: Any, opened: dict[int, Payload], items: list[int], kept: Kept | None) -> bool:
    """Take the opened ``items`` that ``kept`` leaves out (by their sealed time and source) out of ``allowed``;
    whether there was any."""
    refused = [] if kept is None else [item for item in items if item in opened and not kept(opened[item])]
    allowed[refused] = False
    return bool(refused)


async def _open(
    vault: Vault,
    owner: str,
    bucket: str,
    columns: _Columns,
    items: list[int],
    opened: dict[int, Payload],
    now: float,
    place: Place,
) -> None:
    """Open ``items`` (one ``get_many``) into ``opened``; a value gone or unreadable stays out."""
    if not items:
        return
    addresses = [Address(owner, bucket, columns.name(item)) for item in items]
    for item, payload in zip(items, await vault.open_at(place, addresses, now), strict=True):
        if payload is not None:
            opened[item] = payload


async def fill(vault: Vault, place: Place, opened: dict[str, Payload], now: float, quota: Quota | None) -> None:
    """Put every opened value of a place (by store name) in its shards, for the searches to come (best effort)."""
    changes = {
        name: Change(payload.key, payload.vector, payload.written_at, payload.expires_at)
        for name, payload in opened.items()
    }
    try:
        await vault.vectors.keep(place, changes, now, quota)
    except (StoreUnavailableError, QuotaExceededError, RememberConflictError) as exc:
        logger.warning("could not fill the vector shards of a place (its searches open every value): %s", exc)


async def _prune(vault: Vault, place: Place, names: list[str], now: float) -> None:
    """Take values a search found gone out of their shards (best effort: the next write prunes them too)."""
    try:
        await vault.vectors.keep(place, dict.fromkeys(names), now, None)
    except (StoreUnavailableError, QuotaExceededError, RememberConflictError) as exc:
        logger.info("could not prune %d gone value(s) from their vector shard: %s", len(names), exc)
