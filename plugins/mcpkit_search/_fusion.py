"""Fusion: one ranking from a lexical (BM25) and a semantic (vector) ranking of the same documents.

``fuse`` is standard-score fusion: each side's scores become z-scores (how many standard deviations above that
side's mean), a document a side did not find takes that side's lowest, and the two are summed with weights,
``weight`` for the semantic side; the sums are then rescaled so the best is 1 and the worst 0. Unlike
rescaling each side to 0..1 by its best and worst (``rsf``, which mcpkit used before, with 0.75 on meaning),
one far-out BM25 score (a long conversation full of the query's words) or a narrow band of cosine similarities
does not decide the whole ranking; unlike reciprocal rank fusion (``rrf``), how far ahead a document is still
counts. ``WEIGHT`` was chosen on the public sets of ``bench/retrieval.py``, where fusions and weights were
measured side by side (``docs/benchmarks.md``): from 0.35 to 0.45 hybrid was at least as good as the better
side on each set, and better than both on one.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

if TYPE_CHECKING:
    import numpy.typing

__all__ = ["RRF_K", "WEIGHT", "Parts", "fuse", "fuse_dense", "parts", "rrf", "rsf"]

#: The weight of the semantic side in ``fuse`` (0: words alone, 1: meaning alone).
WEIGHT = 0.4

#: The rank constant of reciprocal rank fusion (the value of the paper that introduced it).
RRF_K = 60

#: A side's document at rank r (1 to ``CLEAR_RANKS``) whose standard score leads that side's next one by ``MARGIN``
#: or more (one spread: a clear margin) ranks r or better once fused, when the side scored ``CLEAR_SAMPLE`` documents
#: or more (the standard scores of fewer say little). Chosen before measuring, not tuned (docs/architecture.md).
CLEAR_RANKS = 3
MARGIN = 1.0
CLEAR_SAMPLE = 10

Doc = TypeVar("Doc", bound=Hashable)


def _standard(scores: Mapping[Doc, float]) -> tuple[dict[Doc, float], float]:
    """Each score as a z-score over ``scores``, and the score of a document not among them (the lowest z-score).

    A side whose scores do not spread (one document, or all equal) says only which documents it found: they
    take 1 and the others 0.
    """
    mean = math.fsum(scores.values()) / len(scores) if scores else 0.0
    spread = math.sqrt(math.fsum((score - mean) ** 2 for score in scores.values()) / len(scores)) if scores else 0.0
    if spread == 0.0:
        return dict.fromkeys(scores, 1.0), 0.0
    standard = {doc: (score - mean) / spread for doc, score in scores.items()}
    return standard, min(standard.values())


def fuse(lexical: Mapping[Doc, float], semantic: Mapping[Doc, float], *, weight: float = WEIGHT) -> dict[Doc, float]:
    """Standard-score fusion of two rankings (document -> score, higher is better): 0 (the worst) to 1 (the best)."""
    summed, _ = _summed(lexical, semantic, weight)
    return _rescaled(summed)


def _summed(
    lexical: Mapping[Doc, float], semantic: Mapping[Doc, float], weight: float
) -> tuple[dict[Doc, float], dict[Doc, tuple[float, float, float]]]:
    """``fuse``'s sums before they are rescaled, and the parts of the documents the margin rule lifted: each side's
    weighted standard score and what the rule added."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"the semantic side's weight is from 0 to 1, not {weight!r}")
    (left, left_low), (right, right_low) = _standard(lexical), _standard(semantic)
    summed = {
        doc: (1.0 - weight) * left.get(doc, left_low) + weight * right.get(doc, right_low)
        for doc in left.keys() | right.keys()
    }
    lifted: dict[Doc, tuple[float, float, float]] = {}
    clear = (_clear(left) if weight < 1.0 else []) + (_clear(right) if weight > 0.0 else [])
    for rank, _, doc in sorted(clear, key=lambda found: found[:2]):  # a larger margin last: it wins a shared rank
        above = heapq.nlargest(rank, (score for other, score in summed.items() if other != doc))
        if len(above) == rank and summed[doc] <= above[-1]:
            words, meaning = (1.0 - weight) * left.get(doc, left_low), weight * right.get(doc, right_low)
            summed[doc] = _past(above[-1])
            lifted[doc] = (words, meaning, summed[doc] - words - meaning)
    return summed, lifted


def _clear(standard: Mapping[Doc, float]) -> list[tuple[int, float, Doc]]:
    """The documents a side ranks near its top with a clear margin: (rank, margin, document) (see ``MARGIN``)."""
    if len(standard) < CLEAR_SAMPLE:
        return []
    top = heapq.nlargest(CLEAR_RANKS + 1, standard.items(), key=lambda item: item[1])
    return [
        (rank, top[rank - 1][1] - top[rank][1], top[rank - 1][0])
        for rank in range(1, CLEAR_RANKS + 1)
        if top[rank - 1][1] - top[rank][1] >= MARGIN
    ]


def _past(score: float) -> float:
    """A score just above ``score`` (so the document it is given ranks before the one that has ``score``)."""
    return score + 1e-9 * max(1.0, abs(score))


class Parts(NamedTuple):
    """A document's parts of ``fuse``'s sum before it is rescaled, which add up to it: ``1 - weight`` times its
    standard score by words, ``weight`` times its standard score by meaning (a side's lowest where that side did not
    find it), and what the margin rule added to lift it to the rank a side gave it (0: not lifted). ``low`` and
    ``high``: the query's lowest and highest sums, which the fused score is rescaled by (it is
    ``(sum - low) / (high - low)``, 1 when they are equal)."""

    lexical: float
    semantic: float
    lifted_by_margin: float
    low: float
    high: float

    @property
    def fused(self) -> float:
        """The fused score the parts make: their sum, rescaled."""
        total = self.lexical + self.semantic + self.lifted_by_margin
        return 1.0 if self.high == self.low else (total - self.low) / (self.high - self.low)


def parts(
    lexical: Mapping[Doc, float], semantic: Mapping[Doc, float], docs: Iterable[Doc], *, weight: float = WEIGHT
) -> dict[Doc, Parts]:
    """Each of ``docs``' parts of ``fuse``'s score (``Parts``): its two sides' and the margin rule's."""
    summed, lifted = _summed(lexical, semantic, weight)
    (left, left_low), (right, right_low) = _standard(lexical), _standard(semantic)
    low, high = min(summed.values(), default=0.0), max(summed.values(), default=0.0)
    out = {}
    for doc in docs:
        words, meaning, lift = lifted.get(doc) or (
            (1.0 - weight) * left.get(doc, left_low),
            weight * right.get(doc, right_low),
            0.0,
        )
        out[doc] = Parts(words, meaning, lift, low, high)
    return out


def fuse_dense(
    lexical: Mapping[int, float], semantic: numpy.typing.NDArray[Any], *, weight: float = WEIGHT
) -> numpy.typing.NDArray[Any]:
    """``fuse`` for documents numbered from 0, in numpy (no Python step per document): ``semantic`` holds each one's
    score (NaN: not found by meaning), ``lexical`` the few BM25 found. Each one's fused score, NaN where neither
    side found it; the same as ``fuse`` within float rounding (numpy sums where ``fuse`` uses ``math.fsum``)."""
    import numpy

    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"the semantic side's weight is from 0 to 1, not {weight!r}")
    found = ~numpy.isnan(semantic)
    right, right_low = _standard_dense(semantic[found])
    meaning = numpy.full(len(semantic), right_low)
    meaning[found] = right
    numbers = numpy.fromiter(lexical.keys(), dtype=numpy.int64, count=len(lexical))
    left, left_low = _standard_dense(numpy.fromiter(lexical.values(), dtype=numpy.float64, count=len(lexical)))
    words = numpy.full(len(semantic), left_low)
    words[numbers] = left
    either = found.copy()
    either[numbers] = True
    total = (1.0 - weight) * words + weight * meaning
    clear = []
    if weight < 1.0 and len(numbers) >= CLEAR_SAMPLE:
        clear += _clear_dense(numbers, left)
    if weight > 0.0 and int(found.sum()) >= CLEAR_SAMPLE:
        clear += _clear_dense(numpy.flatnonzero(found), right)
    for rank, _, doc in sorted(clear, key=lambda found: found[:2]):
        pool = total[either]
        if int(numpy.count_nonzero(pool >= total[doc])) - 1 < rank:  # fewer than rank others at or above it
            continue
        others = numpy.delete(pool, int(numpy.count_nonzero(either[:doc])))  # the others found by a side
        total[doc] = _past(-float(numpy.partition(-others, rank - 1)[rank - 1]))
    summed = total[either]
    fused = numpy.full(len(semantic), numpy.nan)
    if len(summed):
        high, low = float(summed.max()), float(summed.min())
        fused[either] = 1.0 if high == low else (summed - low) / (high - low)
    return fused


def _clear_dense(docs: numpy.typing.NDArray[Any], standard: numpy.typing.NDArray[Any]) -> list[tuple[int, float, int]]:
    """``_clear`` of documents numbered ``docs`` with standard scores ``standard`` (the same order)."""
    import numpy

    if len(standard) <= CLEAR_RANKS:
        return []
    best = numpy.argpartition(-standard, CLEAR_RANKS)[: CLEAR_RANKS + 1]
    best = best[numpy.argsort(-standard[best], kind="stable")]
    scores = standard[best].tolist()
    return [
        (rank, scores[rank - 1] - scores[rank], int(docs[best[rank - 1]]))
        for rank in range(1, CLEAR_RANKS + 1)
        if scores[rank - 1] - scores[rank] >= MARGIN
    ]


def _standard_dense(scores: numpy.typing.NDArray[Any]) -> tuple[numpy.typing.NDArray[Any], float]:
    """``_standard`` of an array of scores."""
    import numpy

    if not len(scores):
        return scores, 0.0
    spread = float(numpy.sqrt(numpy.mean((scores - scores.mean()) ** 2)))
    if spread == 0.0:
        return numpy.ones(len(scores)), 0.0
    standard = (scores - scores.mean()) / spread
    return standard, float(standard.min())


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
