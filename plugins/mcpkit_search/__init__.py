"""mcpkit_search: the text analysis and ranking that remembered values (and histories) are searched with.

It knows nothing of stores or encryption: ``Analyzer`` turns text into terms,
``bm25`` ranks documents from postings; ``Stats``, ``idf`` and ``weight`` are the
formula for stores that score inside themselves. For search by meaning, an
``Embedder`` turns texts into vectors (``MiniLM`` is the local model of the
``semantic`` extra, ``E5Small`` another) and ``fuse`` joins the BM25 and vector rankings; ``chunks`` cuts a
long text into the overlapping windows a model reads. ``when`` reads the dates and spans of an English query as a
time window; ``near`` makes the near spellings of a query term that no value holds.
``COMPILED`` says whether the counting of index terms runs compiled (Cython)
or in Python; both give the same results.
"""

from ._analyzer import Analyzer, fold, value_text
from ._bm25 import K1, B, Corpus, Stats, bm25, corpus_of, idf, top, weight
from ._chunks import CHUNK_OVERLAP, CHUNK_WORDS, chunks
from ._counting import COMPILED
from ._e5 import E5Small
from ._embedder import (
    MAX_EMBED_CHARS,
    TAG_BYTES,
    Embedder,
    dimensions_of,
    document_chunks,
    document_text,
    pack_vector,
    pack_vectors,
    tag_of,
    unpack_vectors,
    vectors_in,
)
from ._fusion import CLEAR_RANKS, CLEAR_SAMPLE, MARGIN, RRF_K, WEIGHT, Parts, fuse, fuse_dense, parts, rrf, rsf
from ._minilm import MiniLM
from ._pinned import SemanticUnavailableError
from ._stop_words import ENGLISH_STOP_WORDS
from ._typos import MAX_TYPO_CHARS, MAX_TYPO_WORDS, MIN_TYPO_CHARS, TYPO_WEIGHT, near
from ._when import When, when

__all__ = [
    "CHUNK_OVERLAP",
    "CHUNK_WORDS",
    "CLEAR_RANKS",
    "CLEAR_SAMPLE",
    "COMPILED",
    "ENGLISH_STOP_WORDS",
    "K1",
    "MARGIN",
    "MAX_EMBED_CHARS",
    "MAX_TYPO_CHARS",
    "MAX_TYPO_WORDS",
    "MIN_TYPO_CHARS",
    "RRF_K",
    "TAG_BYTES",
    "TYPO_WEIGHT",
    "WEIGHT",
    "Analyzer",
    "B",
    "Corpus",
    "E5Small",
    "Embedder",
    "MiniLM",
    "Parts",
    "SemanticUnavailableError",
    "Stats",
    "When",
    "bm25",
    "chunks",
    "corpus_of",
    "dimensions_of",
    "document_chunks",
    "document_text",
    "fold",
    "fuse",
    "fuse_dense",
    "idf",
    "near",
    "pack_vector",
    "pack_vectors",
    "parts",
    "rrf",
    "rsf",
    "tag_of",
    "top",
    "unpack_vectors",
    "value_text",
    "vectors_in",
    "weight",
    "when",
]
