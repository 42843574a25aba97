"""mcpkit_search: the text analysis and ranking that remembered values (and histories) are searched with.

It knows nothing of stores or encryption: ``Analyzer`` turns text into terms,
``bm25`` ranks documents from postings; ``Stats``, ``idf`` and ``weight`` are the
formula for stores that score inside themselves.
"""

from ._analyzer import Analyzer, fold
from ._bm25 import K1, B, Corpus, Stats, bm25, idf, top, weight
from ._stop_words import ENGLISH_STOP_WORDS

__all__ = [
    "ENGLISH_STOP_WORDS",
    "K1",
    "Analyzer",
    "B",
    "Corpus",
    "Stats",
    "bm25",
    "fold",
    "idf",
    "top",
    "weight",
]
