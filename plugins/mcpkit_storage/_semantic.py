"""``Semantic``: the embedder side of search — a value's sealed vector when written, similarities when searched.

A value's vector is sealed inside its entry (``_payload``), so it is written,
replaced, expired, deleted and rotated with the value in the same atomic step:
no separate index to keep exact. A search opens the place's values and compares
their vectors with the query's; values without one (kept before an embedder was
configured, or by another model) are embedded then, in process, at most
``MAX_EMBEDDED_PER_SEARCH`` of them (the rest rank by BM25 alone), and get their
vector at their next write or from ``mcpkit remember reindex --semantic``. An
embedder that fails or takes longer than ``EMBED_TIMEOUT_SECONDS`` never fails a
write (the value is kept without a vector) nor a search (it ranks by BM25
alone); both are logged.

A server loads the embedder's model in the background (``start``), so it answers
at once: until the model is ready, writes keep values without a vector and
searches go by words alone, and ``unavailable`` says why, for the search result.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence

import anyio
import pydantic_core

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

__all__ = [
    "DEFAULT_MIN_SIMILARITY",
    "EMBED_TIMEOUT_SECONDS",
    "MAX_EMBEDDED_PER_SEARCH",
    "EmbedderFailedError",
    "Semantic",
]

#: Search by meaning's own logger (under mcpkit.remember): its model ready or failing, an embedder failing.
logger = logging.getLogger("mcpkit.remember.semantic")

#: The longest one call to the embedder may take before the write or search goes on without it.
EMBED_TIMEOUT_SECONDS = 10.0

#: Values without a usable vector that one search embeds; the others rank by BM25 alone.
MAX_EMBEDDED_PER_SEARCH = 256

#: The similarity above which a value matches a query by meaning, for an embedder that sets no ``min_similarity``.
DEFAULT_MIN_SIMILARITY = 0.0

#: Why a search went by words alone, as its result says (``Matches.note``).
LOADING = (
    "Searched by words only: search by meaning starts once its model has loaded, in the seconds after the server "
    "started. Search again shortly to find memories in other words too."
)
LOAD_FAILED = (
    "Searched by words only: search by meaning is unavailable, its model failed to load (the server's log says why)."
)
QUERY_FAILED = "Searched by words only: search by meaning failed on this query (the server's log says why)."


class EmbedderFailedError(Exception):
    """The embedder failed where going on without it is not an option (``mcpkit remember reindex --semantic``)."""


class Semantic:
    """One embedder, as the plugin uses it for every place it indexes.

    Ready at once, unless ``start`` loads its model in the background: then ready once that is done.
    """

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.name = str(embedder.name)
        self._tag = tag_of(self.name)
        #: How many components the embedder's vectors have, once one was seen (None: not yet).
        self.dimensions: int | None = None
        #: The similarity above which a value matches a query by meaning (the embedder's ``min_similarity``).
        self.min_similarity = float(getattr(embedder, "min_similarity", DEFAULT_MIN_SIMILARITY))
        self._loading: asyncio.Task[None] | None = None
        self._ready = True
        self._load_failed = False

    async def start(self) -> None:
        """Load the embedder's model (its optional ``load``) in the background; ``stop`` ends a load under way.

        A load with nothing left to do (the model loaded already) is over when this returns.
        """
        load: Callable[[], Awaitable[None]] | None = getattr(self.embedder, "load", None)
        if load is None:
            return
        self._ready = False
        self._loading = asyncio.get_running_loop().create_task(self._load(load), name=f"load {self.name}")
        await asyncio.sleep(0)  # the task's first step: a load that returns at once ends in it

    async def stop(self) -> None:
        """End a background load still under way (the server stops: it need not wait for the model)."""
        loading, self._loading = self._loading, None
        if loading is not None and not loading.done():
            loading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await loading

    async def loaded(self) -> None:
        """Wait until a background load has ended (ready, or failed); at once without one."""
        if self._loading is not None:
            await asyncio.shield(self._loading)

    @property
    def unavailable(self) -> str | None:
        """Why search goes by words alone now (for the search result), or None when search by meaning is ready."""
        if self._load_failed:
            return LOAD_FAILED
        return None if self._ready else LOADING

    async def _load(self, load: Callable[[], Awaitable[None]]) -> None:
        began = time.monotonic()
        try:
            await load()
        except Exception:  # the user's model: whatever it raises, the server goes on searching by words
            self._load_failed = True
            logger.error(
                "the embedder %r failed to load: searches go by words alone and values are kept without vectors "
                "until the server restarts",
                self.name,
                exc_info=True,
            )
            return
        self._ready = True
        logger.info("search by meaning is ready: the embedder %r loaded in %.1f s", self.name, time.monotonic() - began)

    def has_vector(self, payload: Payload) -> bool:
        """Whether a kept value carries a vector of this embedder's model (and length, once it is known)."""
        vector = payload.vector
        if vector[:TAG_BYTES] != self._tag:
            return False
        return self.dimensions is None or dimensions_of(vector) == self.dimensions

    async def vector(self, key: str, value_json: str | bytes, *, strict: bool = False) -> bytes:
        """The packed vector of a value (its stored JSON text); empty bytes when the embedder fails, or while its
        model loads (the value is embedded when searched, until its next write gives it a vector).

        ``strict``: raise ``EmbedderFailedError`` instead of failing.
        """
        if self.unavailable is not None:
            if strict:
                raise EmbedderFailedError(f"the embedder {self.name!r} is not ready: {self.unavailable}")
            return b""
        text = document_text(key, pydantic_core.from_json(value_json))
        vectors = await self._embed([text], "a written value", strict=strict)
        return b"" if vectors is None else vectors[0]

    async def query(self, query: str) -> bytes | None:
        """The packed vector of a query; None when the embedder fails (the search then ranks by BM25 alone)."""
        vectors = await self._embed([query[:MAX_EMBED_CHARS]], "a search query")
        return None if vectors is None else vectors[0]

    async def similarities(self, query: bytes, kept: Sequence[Payload]) -> dict[int, float]:
        """The cosine similarity to the query's vector of each kept value that has (or now gets) a vector, by position.

        Values without a usable vector are embedded now, the first ``MAX_EMBEDDED_PER_SEARCH`` of them.
        """
        dimensions = dimensions_of(query)
        [query_row], _ = unpack_vectors(self.name, [query], dimensions)
        rows, present = unpack_vectors(self.name, [payload.vector for payload in kept], dimensions)
        scores = {number: float(score) for number, score in zip(present, rows @ query_row, strict=True)}
        absent = [number for number in range(len(kept)) if number not in scores][:MAX_EMBEDDED_PER_SEARCH]
        if absent:
            texts = [document_text(kept[number].key, kept[number].value()) for number in absent]
            made = await self._embed(texts, "values kept without a vector")
            if made is not None:
                more, fitting = unpack_vectors(self.name, made, dimensions)
                if len(fitting) == len(absent):
                    scores.update(zip(absent, (float(score) for score in more @ query_row), strict=True))
                else:
                    logger.warning("the embedder %r changed its vectors' length; skipped them", self.name)
        return scores

    async def _embed(self, texts: list[str], what: str, *, strict: bool = False) -> list[bytes] | None:
        try:
            with anyio.fail_after(EMBED_TIMEOUT_SECONDS):
                vectors = await self.embedder.embed(texts)
            if len(vectors) != len(texts):
                raise ValueError(f"{len(vectors)} vectors for {len(texts)} texts")
            packed = [pack_vector(self.name, vector) for vector in vectors]
        except Exception as exc:  # the user's model: whatever it raises, writes and searches go on without it
            if strict:
                raise EmbedderFailedError(f"the embedder {self.name!r} failed on {what}: {exc!r:.200}") from exc
            logger.warning("the embedder %r failed on %s; going on without its vectors", self.name, what, exc_info=True)
            return None
        if packed and self.dimensions is None:
            self.dimensions = dimensions_of(packed[0])
        return packed
