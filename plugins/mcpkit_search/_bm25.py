"""BM25 (Robertson and Zaragoza's Okapi weighting), over what an index returns for the query's terms."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import NamedTuple

__all__ = ["K1", "B", "Corpus", "bm25"]

#: Term-frequency saturation and length normalisation, the usual defaults (Lucene and SQLite FTS5 use them).
K1 = 1.2
B = 0.75


class Corpus(NamedTuple):
    """What BM25 needs of the searched documents: how many, their total length, the query terms' postings.

    ``postings[term]`` lists ``(document, count of the term in it, length of the document)``. Terms are
    integers: an index keeps keyed hashes of words, never the words (see ``mcpkit_remember``'s blind index).
    """

    documents: int
    length: int
    postings: Mapping[int, Sequence[tuple[Hashable, int, int]]]


def bm25(terms: Sequence[int], corpus: Corpus) -> dict[Hashable, float]:
    """Each document that holds at least one of ``terms``, with its score (higher is better).

    The IDF is Lucene's ``ln(1 + (N - n + 0.5) / (n + 0.5))``, never negative, so a term that most
    documents hold still counts a little rather than pushing them down.
    """
    scores: dict[Hashable, float] = {}
    if corpus.documents <= 0:
        return scores
    average = max(corpus.length / corpus.documents, 1e-9)
    for term in dict.fromkeys(terms):  # a repeated query word counts once
        postings = corpus.postings.get(term, ())
        if not postings:
            continue
        idf = math.log(1 + (corpus.documents - len(postings) + 0.5) / (len(postings) + 0.5))
        for document, count, length in postings:
            norm = count + K1 * (1 - B + B * length / average)
            scores[document] = scores.get(document, 0.0) + idf * count * (K1 + 1) / norm
    return scores
