"""Searching a caller's conversations: across all of them with the blind index (one ranked query of the bucket
every message lives in), or within one conversation by opening its messages and ranking them in the process."""

from __future__ import annotations

import threading
from collections.abc import Hashable

import anyio.to_thread

from mcpkit_search import Analyzer, bm25, corpus_of, top
from mcpkit_storage import MAX_SEARCH_LIMIT, Found, Kept, Leaning, Match, Place, Vault, Window, search

from ._messages import Hit, message_of, said_at, text_of
from ._pages import read_newest
from ._tree import Members, Tree

__all__ = ["Hits", "search_all", "search_one"]

#: The analyser that ranks a conversation in a worker thread (never the event loop's, whose stemmer keeps state).
_APART: list[Analyzer] = []
_APART_LOCK = threading.Lock()


async def search_all(
    vault: Vault,
    trees: Place,
    place: Place,
    query: str,
    limit: int,
    now: float,
    kept: Kept | None = None,
    preferred: Window | None = None,
) -> list[Hit]:
    """The ``limit`` best messages of every conversation, asking the index for more when some were filtered out;
    ``kept``: only messages said in its window (their event time, applied before the index's cut); ``preferred``: the
    messages said in it score ``mcpkit_storage.PREFERRED_BOOST`` times as much."""
    want = limit
    while True:
        matches = await search(vault, place, query, now, want, kept=kept, preferred=preferred)
        hits = await _kept(vault, trees, matches, now)
        if len(hits) >= limit or len(matches) < want or want >= MAX_SEARCH_LIMIT:
            return hits[:limit]
        want = min(MAX_SEARCH_LIMIT, want * 4)


async def _kept(vault: Vault, trees: Place, matches: list[Match], now: float) -> list[Hit]:
    """The matches whose conversation's tree holds them (one batched read of those trees), as hits."""
    names = sorted({match.key.partition("/")[0] for match in matches})
    found = await vault.read_many(trees, names, now)
    kept = {name: Members(value.value) for name, value in zip(names, found, strict=True) if value is not None}
    hits = []
    for match in matches:
        name, _, node = match.key.partition("/")
        members = kept.get(name)
        if members is None or node not in members:  # a message whose save never completed: not shown
            continue
        value = Found(match.value, match.expires_at, match.updated_at)
        hits.append(Hit(name, message_of(node, value, members.parent(node)), match.score))
    return hits


class Hits(list[Hit]):
    """Hits, best first; ``note`` says when a search within one conversation left its oldest messages out."""

    note: str | None = None


async def search_one(
    vault: Vault,
    analyzer: Analyzer,
    trees: Place,
    place: Place,
    conversation: str,
    query: str,
    limit: int,
    now: float,
    max_bytes: int,
    kept: Kept | None = None,
    preferred: Window | None = None,
) -> Hits:
    """BM25 over one conversation's newest ``max_bytes`` of messages, read in batches and analysed in a worker
    thread: the cost is bounded, and the event loop other callers wait on stays free meanwhile. ``kept``: only
    messages said in its window (their event time), left out before the ranking; ``preferred``: those said in it
    score ``mcpkit_storage.PREFERRED_BOOST`` times as much."""
    stored = await vault.read(trees, conversation, now)
    words = list(dict.fromkeys(analyzer.terms(query)))
    if stored is None or not words:
        return Hits()
    tree = Tree.load(stored.value)
    nodes = tree.everything()
    found, left = await read_newest(vault, place, conversation, nodes, now, max_bytes)
    if kept is not None:
        found = [(node, value) for node, value in found if kept.holds(said_at(value))]
    messages = dict(found)

    def ranked() -> list[tuple[Hashable, float]]:
        with _APART_LOCK:  # the stemmer keeps state: the threads share one analyser of their own, in turn
            if not _APART:
                _APART.append(Analyzer())
            apart = _APART[0]
            counted = ((node, apart.value_counts(node, text_of(value.value["content"]))) for node, value in found)
            scores = bm25(range(len(words)), corpus_of(words, counted))
            if preferred is not None:
                lean = Leaning(preferred=preferred)
                scores = {node: lean.scored(score, said_at(messages[str(node)]), now) for node, score in scores.items()}
            return top(scores, limit)

    parents = tree.parents()
    hits = Hits(
        Hit(conversation, message_of(str(node), messages[str(node)], parents.get(str(node))), score)
        for node, score in await anyio.to_thread.run_sync(ranked)
    )
    if left:
        hits.note = (
            f"Searched the newest {len(found):,} messages of {conversation!r} ({max_bytes:,} bytes, max_search_bytes); "
            f"{left:,} older ones were not. Search without a conversation to look through all of them."
        )
    return hits
