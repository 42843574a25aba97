"""Ranked search over one place's values: BM25 over the blind index, values opened only for the best hits."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable, Sequence
from typing import NamedTuple, TypeVar

import pydantic_core

from mcpkit_search import WEIGHT, Corpus, Stats, bm25, corpus_of, fuse, parts, top

from ..base import Place
from ..index import BUSY, QUERY_FAILED, EmbedderBusyError
from ..sealing import Payload
from ..stores import Address, Quota
from ..vault import Vault, newer
from ._admitted import admitted, within
from ._explain import described
from ._kept import Kept, event_time
from ._leaning import Leaning, Window, preferring
from ._match import MAX_SEARCH_LIMIT, MODES, Asked, Explanation, Match, Matches, SearchMode, explained
from ._sharded_search import by_shards, fill
from ._ties import bucket_ranking, through_ties

__all__ = ["MAX_SEARCH_LIMIT", "MODES", "Explanation", "Kept", "Match", "Matches", "SearchMode", "search"]

#: How many times a search asks the store for 4 times more hits when some of the best no longer open.
_WIDENINGS = 3

#: A filter that keeps fewer than one in this many of the first round's best by words is applied by the facets
#: (``admitted``) from the second round on; one that keeps more is met again soon by opening a few more.
_FEW_PASS = 8

_T = TypeVar("_T")

#: A hit of the merged ranking: (which bucket address, the store's key there).
_Doc = tuple[int, str]


async def search(
    vault: Vault,
    place: Place,
    query: str,
    now: float,
    limit: int,
    mode: SearchMode | None = None,
    *,
    explain: bool = False,
    weight: float = WEIGHT,
    quota: Quota | None = None,
    caller: str | None = None,
    kept: Kept | None = None,
    half_life: float | None = None,
    preferred: Window | None = None,
) -> Matches:
    """The place's ``limit`` best matches for ``query``, best first (ties: newest, then by key).

    ``mode`` None: ``hybrid`` with an embedder, else ``lexical``; ``weight``: the semantic side's in ``hybrid``.
    ``quota``: the place's, which vector shards a search by meaning fills count against. ``caller``: whose share of
    the embedder the search takes (default: the place's owner's). ``kept``: only values it keeps (their event time,
    their source), filtered before the ranking is cut to ``limit``. ``half_life``: seconds after which a value's
    score counts half (by its event time); None: no preference for recent values. ``preferred``: event times (since,
    until; seconds, None where open) whose values score ``PREFERRED_BOOST`` times as much (a query's own dates).
    """
    chosen: SearchMode = mode or ("lexical" if vault.semantic is None else "hybrid")
    asked = _Query(query, now, limit, chosen, explain, weight, quota, caller, kept, Leaning.of(half_life, preferred))
    observed = vault.searching(place, chosen)
    if observed is None:
        return (await _search(vault, place, asked))[0]
    with observed:
        matches, used = await _search(vault, place, asked)
        observed.returned([match.key for match in matches], used)
        return matches


class _Query(NamedTuple):
    """A search as asked (``search``'s arguments, the mode chosen)."""

    query: str
    now: float
    limit: int
    chosen: SearchMode
    explain: bool
    weight: float
    quota: Quota | None
    caller: str | None
    kept: Kept | None
    lean: Leaning | None


async def _search(vault: Vault, place: Place, q: _Query) -> tuple[Matches, SearchMode]:
    """The matches, and the mode that found them (``lexical`` where search by meaning was not ready)."""
    query, now, limit, chosen, explain, weight = q[:6]
    quota, caller, kept, lean = q[6:]
    await vault.watched(now)
    words = vault.index.words(query)
    note = None
    if chosen != "lexical" and vault.semantic is not None and query.strip():
        caller = caller or place.identity
        note = vault.semantic.unavailable
        query_vector = None
        if note is None:
            try:
                query_vector = await vault.query_vector(place, query, caller)
            except EmbedderBusyError:
                note = BUSY
        if query_vector is not None:
            asked = Asked(words, query_vector, chosen, weight, caller, explain)
            found = await _by_meaning(vault, place, asked, now, limit, quota, kept, lean)
            if not explain:
                return Matches([match._replace(why=None) for match in found]), chosen
            return Matches(await described(vault, place, query, words, found, now, weight)), chosen
        note = note or QUERY_FAILED
    if lean is not None and lean.half_life is None:  # a preferred window alone: two searches by words, merged
        again = q._replace(chosen="lexical", kept=None, lean=None)
        found, _ = await preferring(lambda k: _search(vault, place, again._replace(kept=k)), kept, lean, limit, now)
        return Matches(found, note), "lexical"
    matches = await _lexical(vault, place, words, now, limit, kept, lean)
    if explain:
        matches = [
            match._replace(why=Explanation("lexical", match.score, rank, None, None, None))
            for rank, match in enumerate(matches, start=1)
        ]
        matches = await described(vault, place, query, words, matches, now, weight)
    return Matches(matches, note), "lexical"


async def _lexical(
    vault: Vault,
    place: Place,
    words: Sequence[str],
    now: float,
    limit: int,
    kept: Kept | None = None,
    lean: Leaning | None = None,
) -> list[Match]:
    """BM25 over the store's index (and the 0.1 values' words, analysed here).

    With ``kept``, the store is asked for 4 times more hits until ``limit`` of them pass it or it has no more, so
    a filter never loses a match to the cut; past the first round, when the filter kept few of it, those whose
    facets it leaves out (``admitted``) are not opened. With ``lean``, the best ``MAX_SEARCH_LIMIT`` by words
    (those ``kept``) are ranked again with it.
    """
    if not words:
        return []
    buckets = vault.buckets(place)
    opened: dict[_Doc, Payload] = {}  # unindexed (0.1) documents, opened while analysing them
    enough = limit if lean is None else MAX_SEARCH_LIMIT
    want = enough
    admits: frozenset[str] | None = None
    # Where the store can, the ranking holds only the values whose facets the filter may keep: no second ranking.
    narrowed = None if kept is None or len(buckets) != 1 else await within(vault, *buckets[0], kept, now)
    by_facets = kept is not None and len(buckets) == 1 and narrowed is None  # else the facets are not asked again
    widenings, ties = 0, kept is None or narrowed is not None  # widened where each tied value may pass the filter
    while True:
        ranked = await _ranked(vault, place, buckets, words, now, want, opened, narrowed or (), ties=ties)
        exhausted = len(ranked) < want
        if admits is not None:  # left out by their facets, unopened
            ranked = [hit for hit in ranked if hit[0][1] in admits]
        matches = await _fetch(vault, place, buckets, ranked, opened, now, enough, kept)
        # Fewer than asked when some of the best hits no longer open (written over meanwhile, or a key kept twice
        # during a rotation), or the filter left them out: ask the store for more, unless it had no more.
        widenings += 1
        if len(matches) >= enough or exhausted or (kept is None and widenings == _WIDENINGS):
            break
        want *= 4
        if widenings == 1 and by_facets and kept is not None and len(matches) * _FEW_PASS < len(ranked):
            # The filter left out most of the best: from now on only the hits its facets admit are opened.
            found = await admitted(vault, *buckets[0], kept, now, wanted=enough)
            if found is not None:
                if not found.keys:
                    return []
                admits = found.keys
                # Its share of the hits by words is about its share of the values: ask for enough of those at once.
                want = max(want, min(found.documents, -(-2 * enough * found.documents // len(admits))))
    return (matches if lean is None else lean.ranked(matches, now))[:limit]


async def _opened_all(
    vault: Vault, place: Place, buckets: Sequence[tuple[str, str]], now: float
) -> dict[_Doc, Payload]:
    """Every live value of the place, opened: one document per key (a key kept twice during a rotation counts as
    its newest copy)."""
    opened: dict[_Doc, Payload] = {}
    for where, (owner, bucket) in enumerate(buckets):
        opened.update(
            ((where, name), payload) for name, payload in (await vault.open_bucket(place, owner, bucket, now)).items()
        )
    if len(buckets) == 1:  # one address per key: every document is its own key
        return opened
    newest: dict[str, _Doc] = {}
    for doc, payload in opened.items():
        kept = newest.get(payload.key)
        if kept is None or newer(payload, opened[kept]):
            newest[payload.key] = doc
    return {doc: opened[doc] for doc in newest.values()}


async def _by_meaning(
    vault: Vault,
    place: Place,
    asked: Asked,
    now: float,
    limit: int,
    quota: Quota | None,
    kept: Kept | None = None,
    lean: Leaning | None = None,
) -> list[Match]:
    """``semantic`` or ``hybrid`` over every live value of the place (each match with its ``Explanation``).

    From the place's vector shards when they can answer (``by_shards``: only the best values are opened; with
    ``kept``, the ranking without it, of the values it keeps; a preferred window, as ``preferring`` says), else every
    value is opened (their vectors are sealed inside them, a cost in proportion to the place), and the shards are
    filled for the next search. In ``hybrid``, BM25 comes from the store's index for its best ``MAX_SEARCH_LIMIT``.
    Only the values that match are returned: by their words (``hybrid``), or by a similarity above the embedder's
    ``min_similarity``. Where the values are opened (a half-life, or no shards): with ``kept``, those its facets may
    keep (``admitted``), the rest dropped; BM25 ranks every value its words match; each score moved by ``lean``.
    """
    assert vault.semantic is not None
    if lean is None or lean.half_life is None:
        sharded = await by_shards(vault, place, asked, now, limit, kept)
        if sharded is not None and lean is not None:  # a preferred window: the window's best too, merged
            inside = lean.within(kept)
            more = [] if inside is None else await by_shards(vault, place, asked, now, limit, inside)
            sharded = None if more is None else lean.merged(sharded, more, limit, now)
        if sharded is not None:
            return sharded
    buckets = vault.buckets(place)
    found = None if kept is None or len(buckets) != 1 else await admitted(vault, *buckets[0], kept, now)
    if found is not None:  # only the values the filter may keep, by their facets
        names = sorted(found.keys)
        payloads = await vault.open_at(place, [Address(*buckets[0], name) for name in names], now)
        opened = {(0, name): payload for name, payload in zip(names, payloads, strict=True) if payload is not None}
        everything = found.documents
    else:
        opened = await _opened_all(vault, place, buckets, now)
        if len(buckets) == 1:
            await fill(vault, place, {name: payload for (_, name), payload in opened.items()}, now, quota)
        everything = len(opened)
    if kept is not None:
        opened = {doc: payload for doc, payload in opened.items() if kept(payload)}
    docs = list(opened)
    if not docs:
        return []
    lexical: dict[_Doc, float] = {}
    if asked.words and asked.mode == "hybrid":
        want = MAX_SEARCH_LIMIT if kept is None else max(everything, 1)
        ranked = await _ranked(vault, place, buckets, asked.words, now, want, dict(opened))
        lexical = {doc: score for doc, score in ranked if doc in opened}
    values = [opened[doc] for doc in docs]
    similarities = await vault.semantic.similarities(asked.vector, values, caller=asked.caller)
    best_chunk = {docs[number]: chunk for number, (_, chunk) in similarities.items()}
    semantic = {docs[number]: score for number, (score, _) in similarities.items()}
    threshold = vault.semantic.min_similarity
    matching = lexical.keys() | {doc for doc, similarity in semantic.items() if similarity > threshold}
    scores = fuse(lexical, semantic, weight=asked.weight) if asked.mode == "hybrid" else semantic
    if lean is not None:
        times = {doc: event_time(opened[doc].provenance, opened[doc].written_at) for doc in scores}
        newest = min(now, max(times.values(), default=now))
        scores = {doc: lean.scored(score, times[doc], newest) for doc, score in scores.items()}

    def order(doc: _Doc) -> tuple[float, float, str]:
        payload = opened[doc]
        return (-scores[doc], -(payload.written_at or 0.0), payload.key)

    best = sorted((doc for doc in matching if doc in scores), key=order)[:limit]
    weak: list[_Doc] = []
    if asked.mode == "semantic" and len(best) < limit:  # the best of the rest, marked weak
        weak = sorted((doc for doc in semantic if doc not in matching), key=order)[: limit - len(best)]
    windows = vault.semantic.windows_embedded if asked.explain else None
    shares = parts(lexical, semantic, best, weight=asked.weight) if asked.explain and asked.mode == "hybrid" else None
    return explained(
        asked.mode,
        best + weak,
        opened,
        scores,
        lexical,
        semantic,
        best_chunk,
        windows=windows,
        weak=weak,
        shares=shares,
    )


async def _ranked(
    vault: Vault,
    place: Place,
    buckets: Sequence[tuple[str, str]],
    words: Sequence[str],
    now: float,
    want: int,
    opened: dict[_Doc, Payload],
    within: Sequence[Sequence[int]] = (),
    *,
    ties: bool = True,
) -> list[tuple[_Doc, float]]:
    """The best ``want`` documents over every bucket address of the place, scored with their joint statistics;
    ``ties``: with every one tied with the last (``through_ties``), else cut in the store's order (with ``within``,
    one address only: of the values holding its terms, ``Store.search``'s)."""
    secrets = len(vault.keyring)
    terms = [vault.index.terms(where, owner, bucket, words) for where, (owner, bucket) in enumerate(buckets[:secrets])]
    if len(buckets) == 1:  # one secret, no 0.1 entries: one call to the store (two when a tie straddles the cut)
        ranking = await bucket_ranking(vault, *buckets[0], terms[0], words, now, want, ties=ties, within=within)
        return [((0, key), score) for key, score in ranking.hits]
    # Several addresses: their statistics first, summed, then each ranked with the sum, so scores compare. The
    # indexed ones are asked at once (on Redis, two round trips in flight together: a rotation's search waits
    # for three, not five).
    indexed = list(enumerate(buckets[:secrets]))
    corpora: dict[int, Corpus] = {}
    total = Stats(0, 0, (0,) * len(words))
    for counted in await _all(
        vault.store.search(owner, bucket, terms[where], now, limit=0) for where, (owner, bucket) in indexed
    ):
        total += counted.stats
    for where, (owner, bucket) in enumerate(buckets[secrets:], start=secrets):
        corpus, payloads = await _analysed(vault, place, Address(owner, bucket, ""), words, now)
        corpora[where] = corpus
        opened.update(((where, key), payload) for key, payload in payloads.items())
        frequencies = tuple(len(corpus.postings.get(number, ())) for number in range(len(words)))
        total += Stats(corpus.documents, corpus.length, frequencies)

    async def best(asked: int) -> list[tuple[_Doc, float]]:
        rankings = await _all(
            vault.store.search(owner, bucket, terms[where], now, limit=asked, stats=total)
            for where, (owner, bucket) in indexed
        )
        ranked: list[tuple[_Doc, float]] = []
        for (where, _), ranking in zip(indexed, rankings, strict=True):
            ranked += [((where, key), score) for key, score in ranking.hits]
        for where, corpus in corpora.items():
            ranked += [((where, str(key)), score) for key, score in top(bm25(range(len(words)), corpus, total), asked)]
        ranked.sort(key=lambda hit: (-hit[1], hit[0]))
        return ranked[:asked]

    return await through_ties(best, want) if ties else await best(want)


async def _all(calls: Iterable[Awaitable[_T]]) -> list[_T]:
    """Every call's result, the calls run at once; the first failure is raised once all have ended (so none is
    left running, nor its failure unread)."""
    done: list[_T] = []
    for result in await asyncio.gather(*calls, return_exceptions=True):
        if isinstance(result, BaseException):
            raise result
        done.append(result)
    return done


async def _analysed(
    vault: Vault, place: Place, bucket: Address, words: Sequence[str], now: float
) -> tuple[Corpus, dict[str, Payload]]:
    """An unindexed bucket's corpus for ``words`` (word numbers as terms), from its values opened here."""
    payloads = await vault.open_bucket(place, bucket.owner, bucket.bucket, now)
    analyzer = vault.index.analyzer
    counted = (
        (name, analyzer.value_counts(payload.key, pydantic_core.from_json(payload.value_json)))
        for name, payload in payloads.items()
    )
    return corpus_of(words, counted), payloads


async def _fetch(
    vault: Vault,
    place: Place,
    buckets: Sequence[tuple[str, str]],
    ranked: list[tuple[_Doc, float]],
    opened: dict[_Doc, Payload],
    now: float,
    limit: int,
    kept: Kept | None = None,
) -> list[Match]:
    """Open the ranked documents (one ``get_many``) and keep the ``limit`` best that still open (and that ``kept``
    keeps).

    A document whose entry no longer opens (written over meanwhile, or tampered with) is passed over; a key
    found at two addresses (a writer that knew only one secret) counts once, as its newest copy.
    """
    wanted = [doc for doc, _ in ranked if doc not in opened]
    addresses = [Address(*buckets[where], key) for where, key in wanted]
    for doc, payload in zip(wanted, await vault.open_at(place, addresses, now), strict=True):
        if payload is not None:
            opened[doc] = payload
    best: dict[str, tuple[float, Payload]] = {}
    for doc, score in ranked:
        payload = opened.get(doc)
        if payload is None or (kept is not None and not kept(payload)):
            continue
        had = best.get(payload.key)
        if had is None:
            best[payload.key] = (score, payload)
        elif newer(payload, had[1]):
            best[payload.key] = (max(had[0], score), payload)
    matches = [
        Match(key, payload.value(), score, payload.written_at, payload.expires_at, None, False, payload.provenance)
        for key, (score, payload) in best.items()
    ]
    matches.sort(key=lambda match: (-match.score, -(match.updated_at or 0.0), match.key))
    return matches[:limit]
