"""Typo tolerance over the blind index: a query word that no value holds is asked again as its near spellings.

Only then, so a query whose words all match pays one test; two more store calls when one does not: the document
counts of every near spelling at once (``search`` with ``limit=0``, which every store answers), then a ranking by
the spelling most values hold for each such word, its scores weighted by ``TYPO_WEIGHT``.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcpkit_search import MAX_TYPO_WORDS, TYPO_WEIGHT, near

from ..stores import Ranking, narrowing
from ..vault import Vault

__all__ = ["TYPOS", "with_typos"]

#: Whether search tries near spellings of a query word that no value holds (``bench.retrieval`` turns it off to
#: show what it changes).
TYPOS = True


async def with_typos(
    vault: Vault,
    owner: str,
    bucket: str,
    words: Sequence[str],
    ranking: Ranking,
    now: float,
    limit: int,
    within: Sequence[Sequence[int]] = (),
) -> list[tuple[str, float]]:
    """``ranking``'s hits (the store's answer for ``words`` in this bucket), joined by those of the nearest
    spelling values hold of each word none holds (its first ``MAX_TYPO_WORDS``), scored ``TYPO_WEIGHT`` times; the
    ``limit`` best. ``within``: the near spellings are ranked among the same values as ``ranking`` (a filter's
    narrowing, ``NarrowingStore``), though counted over the whole bucket, as the statistics are."""
    stats = ranking.stats
    if not TYPOS or not stats.documents or 0 not in stats.frequencies:
        return ranking.hits
    asked = set(words)
    spellings: list[list[str]] = []
    unheld = [word for word, held in zip(words, stats.frequencies, strict=True) if not held]
    for word in unheld[:MAX_TYPO_WORDS]:
        spellings.append([term for term in near(word, vault.index.analyzer.terms_of) if term not in asked])
    every = list(dict.fromkeys(term for terms in spellings for term in terms))
    if not every:
        return ranking.hits
    blind = dict(zip(every, vault.index.terms(0, owner, bucket, every), strict=True))
    distinct = list(dict.fromkeys(blind.values()))
    counted = await vault.store.search(owner, bucket, distinct, now, limit=0)
    holding = dict(zip(distinct, counted.stats.frequencies, strict=True))
    chosen: dict[int, None] = {}
    for terms in spellings:
        best = max(terms, key=lambda term: holding[blind[term]], default=None)  # ties: the first made
        if best is not None and holding[blind[best]]:
            chosen[blind[best]] = None
    if not chosen:
        return ranking.hits
    narrowed = narrowing(vault.store) if within else None
    if narrowed is not None:
        near_hits = await narrowed.search(owner, bucket, list(chosen), now, limit=limit, within=within)
    else:
        near_hits = await vault.store.search(owner, bucket, list(chosen), now, limit=limit, stats=None)
    scores = dict(ranking.hits)
    for key, score in near_hits.hits:
        scores[key] = scores.get(key, 0.0) + TYPO_WEIGHT * score
    return sorted(scores.items(), key=lambda hit: (-hit[1], hit[0]))[:limit]
