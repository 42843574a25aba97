"""BM25 (Robertson and Zaragoza's Okapi weighting): the formula, the statistics it needs, and a ranking.

Stores that keep an index score inside the store (SQLite in SQL, Redis in Lua) with the same formula:
``weight(count, length, average, idf)`` summed over the query's terms, ``idf`` from ``idf(documents, n)``.
``bm25`` ranks in the process from postings, for an index held in memory.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import NamedTuple

__all__ = ["K1", "B", "Corpus", "Stats", "bm25", "idf", "top", "weight"]

#: Term-frequency saturation and length normalisation, the usual defaults (Lucene and SQLite FTS5 use them).
K1 = 1.2
B = 0.75


class Stats(NamedTuple):
    """What BM25 needs of a set of documents: how many, their total length, and per query term how many hold it."""

    documents: int
    length: int
    frequencies: tuple[int, ...]

    def __add__(self, other: object) -> Stats:
        """The statistics of two disjoint sets of documents together (the buckets of one place, say)."""
        if not isinstance(other, Stats):
            return NotImplemented
        merged = tuple(a + b for a, b in zip(self.frequencies, other.frequencies, strict=True))
        return Stats(self.documents + other.documents, self.length + other.length, merged)

    def weights(self) -> tuple[float, ...]:
        """Each query term's IDF."""
        return tuple(idf(self.documents, n) for n in self.frequencies)

    @property
    def average(self) -> float:
        """The documents' average length (never zero, so a division by it is always defined)."""
        return max(self.length / self.documents, 1e-9) if self.documents else 1.0


class Corpus(NamedTuple):
    """An index's answer for a query, in the process: the statistics and, per term, its postings.

    ``postings[term]`` lists ``(document, count of the term in it, length of the document)``.
    """

    documents: int
    length: int
    postings: Mapping[int, Sequence[tuple[Hashable, int, int]]]


def idf(documents: int, holding: int) -> float:
    """Lucene's IDF, ``ln(1 + (N - n + 0.5) / (n + 0.5))``: never negative, so a common term still counts a little."""
    return math.log(1 + (documents - holding + 0.5) / (holding + 0.5))


def weight(count: int, length: int, average: float, term_idf: float) -> float:
    """One term's contribution to a document's score."""
    return term_idf * count * (K1 + 1) / (count + K1 * (1 - B + B * length / average))


def bm25(terms: Sequence[int], corpus: Corpus, stats: Stats | None = None) -> dict[Hashable, float]:
    """Each document that holds at least one of ``terms``, with its score (higher is better).

    ``stats`` (default: the corpus's own) may be those of a larger set the corpus is part of.
    """
    terms = list(dict.fromkeys(terms))  # a repeated query word counts once
    if stats is None:
        frequencies = tuple(len(corpus.postings.get(term, ())) for term in terms)
        stats = Stats(corpus.documents, corpus.length, frequencies)
    scores: dict[Hashable, float] = {}
    if stats.documents <= 0:
        return scores
    average = stats.average
    for term, term_idf in zip(terms, stats.weights(), strict=True):
        for document, count, length in corpus.postings.get(term, ()):
            scores[document] = scores.get(document, 0.0) + weight(count, length, average, term_idf)
    return scores


def top(scores: Mapping[Hashable, float], limit: int) -> list[tuple[Hashable, float]]:
    """The ``limit`` best (document, score) pairs, best first; ties by document."""
    return heapq.nsmallest(limit, scores.items(), key=lambda item: (-item[1], str(item[0])))


def corpus_of(words: Sequence[str], counted: Iterable[tuple[Hashable, Mapping[str, int]]]) -> Corpus:
    """A corpus built in the process: ``counted`` gives each document with its terms' counts (an analyser's),
    and the postings kept are those of ``words``, numbered by their place in it (the terms ``bm25`` is given)."""
    wanted = {word: number for number, word in enumerate(words)}
    postings: dict[int, list[tuple[Hashable, int, int]]] = {}
    documents = length = 0
    for document, counts in counted:
        size = sum(counts.values())
        documents += 1
        length += size
        for word, count in counts.items():
            if word in wanted:
                postings.setdefault(wanted[word], []).append((document, count, size))
    return Corpus(documents, length, postings)
