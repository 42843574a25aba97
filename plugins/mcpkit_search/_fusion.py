"""Fusion: one ranking from a lexical (BM25) and a semantic (vector) ranking of the same documents.

``fuse`` is weighted reciprocal rank fusion: a document scores ``(1 - weight) / (k + its BM25 rank) + weight /
(k + its semantic rank)`` (a side that did not find it adds nothing), rescaled so that first on both sides is
1. Ranks, not scores: BM25 scores have no fixed scale (a long conversation's run into the hundreds) and
cosine similarities of one model crowd into a narrow band, so a sum of rescaled scores (``rsf``, relative score
fusion, which mcpkit used before) lets whichever side spreads its scores wider decide, and it was worse than
BM25 alone on long values. ``WEIGHT`` and ``RRF_K`` were chosen on the public sets of ``bench/retrieval.py``
(``docs/benchmarks.md`` shows each choice measured).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

__all__ = ["RRF_K", "WEIGHT", "fuse", "rrf", "rsf"]

#: The weight of the semantic ranking in ``fuse`` (0: words alone, 1: meaning alone).
WEIGHT = 0.5

#: The rank constant of reciprocal rank fusion: how fast a place further down counts for less.
RRF_K = 60

Doc = TypeVar("Doc", bound=Hashable)


def _ranks(scores: Mapping[Doc, float]) -> dict[Doc, int]:
    ordered = sorted(scores, key=lambda doc: -scores[doc])
    return {doc: rank for rank, doc in enumerate(ordered, start=1)}


def fuse(
    lexical: Mapping[Doc, float], semantic: Mapping[Doc, float], *, weight: float = WEIGHT, k: int = RRF_K
) -> dict[Doc, float]:
    """Weighted reciprocal rank fusion of two rankings (document -> score, higher is better): 0 to 1."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"the semantic side's weight is from 0 to 1, not {weight!r}")
    left, right = _ranks(lexical), _ranks(semantic)
    fused: dict[Doc, float] = {}
    for doc in left.keys() | right.keys():
        score = (1.0 - weight) / (k + left[doc]) if doc in left else 0.0
        fused[doc] = (score + (weight / (k + right[doc]) if doc in right else 0.0)) * (k + 1)
    return fused


def _rescaled(scores: Mapping[Doc, float]) -> dict[Doc, float]:
    if not scores:
        return {}
    high, low = max(scores.values()), min(scores.values())
    if high == low:
        return dict.fromkeys(scores, 1.0)
    return {doc: (score - low) / (high - low) for doc, score in scores.items()}


def rsf(lexical: Mapping[Doc, float], semantic: Mapping[Doc, float], *, weight: float) -> dict[Doc, float]:
    """Relative score fusion (kept for comparison): both rankings' scores rescaled to 0..1, summed with weights."""
    left, right = _rescaled(lexical), _rescaled(semantic)
    return {
        doc: (1.0 - weight) * left.get(doc, 0.0) + weight * right.get(doc, 0.0) for doc in left.keys() | right.keys()
    }


def rrf(*rankings: Sequence[Doc], k: int = RRF_K) -> dict[Doc, float]:
    """Reciprocal rank fusion of rankings (best first): each document scores the sum of 1 / (k + its rank)."""
    scores: dict[Doc, float] = {}
    for ranking in rankings:
        for rank, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank)
    return scores
