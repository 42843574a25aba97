"""Fusion: one ranking from a lexical (BM25) and a semantic (vector) ranking of the same documents.

``fuse`` is relative score fusion: each ranking's scores are rescaled to 0..1
(the best 1, the worst 0) and summed with weights, ``alpha`` for the semantic
side. Unlike reciprocal rank fusion (``rrf``, kept for comparison), it keeps how
far apart the scores are: a document BM25 finds only by a stray common word
ranks low in BM25 terms too, instead of one place below the best, so a
paraphrased query (which BM25 mostly misses) keeps what the semantic ranking
found in its first five (though a word match takes first place more often than
with the semantic ranking alone). ``docs/benchmarks.md`` measures both on the
labelled set.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

__all__ = ["ALPHA", "RRF_K", "fuse", "rrf"]

#: The weight of the semantic ranking in ``fuse`` (Weaviate's default for its hybrid search; not tuned here).
ALPHA = 0.75

#: The rank constant of reciprocal rank fusion (the value of the paper that introduced it).
RRF_K = 60

Doc = TypeVar("Doc", bound=Hashable)


def _rescaled(scores: Mapping[Doc, float]) -> dict[Doc, float]:
    if not scores:
        return {}
    high, low = max(scores.values()), min(scores.values())
    if high == low:
        return dict.fromkeys(scores, 1.0)
    return {doc: (score - low) / (high - low) for doc, score in scores.items()}


def fuse(lexical: Mapping[Doc, float], semantic: Mapping[Doc, float], *, alpha: float = ALPHA) -> dict[Doc, float]:
    """Relative score fusion of two rankings (document -> score, higher is better): a score from 0 to 1."""
    left, right = _rescaled(lexical), _rescaled(semantic)
    return {doc: (1.0 - alpha) * left.get(doc, 0.0) + alpha * right.get(doc, 0.0) for doc in left.keys() | right.keys()}


def rrf(*rankings: Sequence[Doc], k: int = RRF_K) -> dict[Doc, float]:
    """Reciprocal rank fusion of rankings (best first): each document scores the sum of 1 / (k + its rank)."""
    scores: dict[Doc, float] = {}
    for ranking in rankings:
        for rank, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank)
    return scores
