"""``Semantic``: the embedder side of search — a value's sealed vector when written, similarities when searched.

A value's vector is sealed inside its entry (``_payload``), so it is written,
replaced, expired, deleted and rotated with the value in the same atomic step:
no separate index to keep exact. A search opens the place's values and compares
their vectors with the query's; values without one (kept before an embedder was
configured, or by another model) are embedded then, in process, and get their
vector at their next write. An embedder that fails never fails a write (the
value is kept without a vector) nor a search (it ranks by BM25 alone); both are
logged.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from mcpkit_search import (
    MAX_EMBED_CHARS,
    TAG_BYTES,
    Embedder,
    dimensions_of,
    document_text,
    pack_vector,
    tag_of,
    unpack_vectors,
)

from ._payload import Payload

__all__ = ["Semantic"]

logger = logging.getLogger("mcpkit.remember")


class Semantic:
    """One embedder, as the plugin uses it for every place it indexes."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    @property
    def name(self) -> str:
        return str(self.embedder.name)

    def has_vector(self, payload: Payload) -> bool:
        """Whether a kept value carries a vector of this embedder's model."""
        return payload.vector[:TAG_BYTES] == tag_of(self.name)

    async def vector(self, key: str, value: Any) -> bytes:
        """The packed vector of a value written now; empty bytes when the embedder fails."""
        vectors = await self._embed([document_text(key, value)], "a written value")
        return b"" if vectors is None else vectors[0]

    async def query(self, query: str) -> bytes | None:
        """The packed vector of a query; None when the embedder fails (the search then ranks by BM25 alone)."""
        vectors = await self._embed([query[:MAX_EMBED_CHARS]], "a search query")
        return None if vectors is None else vectors[0]

    async def similarities(self, query: bytes, kept: Sequence[Payload]) -> list[float] | None:
        """The cosine similarity of each kept value to the query's vector, in order.

        Vectors missing or of another model are made now from their values; None when that fails.
        """
        import numpy

        dimensions = dimensions_of(query)
        [query_row], _ = unpack_vectors(self.name, [query], dimensions)
        rows, present = unpack_vectors(self.name, [payload.vector for payload in kept], dimensions)
        scores = numpy.zeros(len(kept), dtype=numpy.float32)
        if present:
            scores[present] = rows @ query_row
        absent = sorted(set(range(len(kept))) - set(present))
        if absent:
            texts = [document_text(kept[number].key, kept[number].value()) for number in absent]
            made = await self._embed(texts, "values kept without a vector")
            if made is None:
                return None
            more, fitting = unpack_vectors(self.name, made, dimensions)
            if len(fitting) != len(absent):
                logger.warning("the embedder %r changed its vectors' length; semantic ranking skipped", self.name)
                return None
            scores[absent] = more @ query_row
        return [float(score) for score in scores]

    async def _embed(self, texts: list[str], what: str) -> list[bytes] | None:
        try:
            vectors = await self.embedder.embed(texts)
            if len(vectors) != len(texts):
                raise ValueError(f"{len(vectors)} vectors for {len(texts)} texts")
            return [pack_vector(self.name, vector) for vector in vectors]
        except Exception:  # the user's model: whatever it raises, writes and searches go on without it
            logger.warning("the embedder %r failed on %s; going on without its vectors", self.name, what, exc_info=True)
            return None
