"""mcpkit_search: the text analysis and ranking that remembered values (and histories) are searched with.

It knows nothing of stores or encryption: ``Analyzer`` turns text into terms,
``bm25`` ranks documents from postings; ``Stats``, ``idf`` and ``weight`` are the
formula for stores that score inside themselves. For search by meaning, an
``Embedder`` turns texts into vectors (``MiniLM`` is the local model of the
``semantic`` extra) and ``fuse`` joins the BM25 and vector rankings.
``COMPILED`` says whether the counting of index terms runs compiled (Cython)
or in Python; both give the same results.
"""

from ._analyzer import Analyzer, fold, value_text
from ._bm25 import K1, B, Corpus, Stats, bm25, corpus_of, idf, top, weight
from ._counting import COMPILED
from ._embedder import (
    MAX_EMBED_CHARS,
    TAG_BYTES,
    Embedder,
    dimensions_of,
    document_text,
    pack_vector,
    tag_of,
    unpack_vectors,
)
from ._fusion import ALPHA, RRF_K, fuse, rrf
from ._minilm import MiniLM, SemanticUnavailableError
from ._stop_words import ENGLISH_STOP_WORDS

__all__ = [
    "ALPHA",
    "COMPILED",
    "ENGLISH_STOP_WORDS",
    "K1",
    "MAX_EMBED_CHARS",
    "RRF_K",
    "TAG_BYTES",
    "Analyzer",
    "B",
    "Corpus",
    "Embedder",
    "MiniLM",
    "SemanticUnavailableError",
    "Stats",
    "bm25",
    "corpus_of",
    "dimensions_of",
    "document_text",
    "fold",
    "fuse",
    "idf",
    "pack_vector",
    "rrf",
    "tag_of",
    "top",
    "unpack_vectors",
    "value_text",
    "weight",
]
