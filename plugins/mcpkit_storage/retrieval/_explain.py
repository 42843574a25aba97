"""What ``explain=True`` adds to each match's ``Explanation`` once it is found: which of the query's words the
value holds and what each weighs, the window that matched, and a relevance comparable across queries.

Worked out from the opened values the search returns (so only from what the caller is given anyway), with one
more ask of the store for the query's statistics; a search without ``explain`` does none of it.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcpkit_search import Stats, document_chunks, fold

from ..base import Place
from ..vault import Vault
from ._match import Match

__all__ = ["described"]


async def described(
    vault: Vault, place: Place, query: str, words: Sequence[str], matches: Sequence[Match], now: float, weight: float
) -> list[Match]:
    """``matches`` with their ``why`` completed: ``terms``, ``weight``, ``window`` and ``relevance``."""
    weights = dict(zip(words, (await _stats(vault, place, words, now)).weights(), strict=True))
    total = sum(weights.values())
    analyzer, keys = vault.index.analyzer, vault.index.keys
    asked = [
        (fold(token), [term for term in analyzer.terms_of(token) if term in weights])
        for token in analyzer.tokens(query)
    ]
    out = []
    for match in matches:
        why = match.why
        if why is None:
            out.append(match)
            continue
        held = analyzer.value_counts(match.key if keys else "", match.value)
        terms: dict[str, float] = {}
        for word, its_terms in asked:
            found = [weights[term] for term in its_terms if term in held]
            if found and word not in terms:
                terms[word] = sum(found)
        coverage = sum(weights[term] for term in weights if term in held) / total if total else 0.0
        windows = document_chunks(match.key, match.value, keys=keys)
        if why.chunk is not None and why.chunk < len(windows):
            window = windows[why.chunk]
        else:
            window = max(windows, key=lambda text: sum(weights.get(term, 0.0) for term in set(analyzer.terms(text))))
        similarity = max(why.semantic or 0.0, 0.0)
        relevance = {"lexical": coverage, "semantic": similarity}.get(
            why.mode, (1 - weight) * coverage + weight * similarity
        )
        completed = why._replace(
            terms=tuple(terms.items()),
            weight=weight if why.mode == "hybrid" else None,
            window=window,
            relevance=relevance,
        )
        out.append(match._replace(why=completed))
    return out


async def _stats(vault: Vault, place: Place, words: Sequence[str], now: float) -> Stats:
    """The query's statistics over the place's indexed addresses (each word's number of values, for its IDF)."""
    total = Stats(0, 0, (0,) * len(words))
    if not words:
        return total
    for where, (owner, bucket) in enumerate(vault.buckets(place)[: len(vault.keyring)]):
        terms = vault.index.terms(where, owner, bucket, words)
        total += (await vault.store.search(owner, bucket, terms, now, limit=0)).stats
    return total
