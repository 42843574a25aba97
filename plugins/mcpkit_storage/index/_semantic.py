"""``Semantic``: the embedder side of search — a value's sealed vectors when written, similarities when searched."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio
import pydantic_core

from mcpkit_search import (
    MAX_EMBED_CHARS,
    TAG_BYTES,
    Embedder,
    dimensions_of,
    document_chunks,
    pack_vector,
    pack_vectors,
    tag_of,
    unpack_vectors,
    vectors_in,
)

from ..sealing import Payload
from ._scheduler import EmbedderBusyError, EmbedScheduler

__all__ = [
    "DEFAULT_MIN_SIMILARITY",
    "EMBED_BATCH",
    "EMBED_BATCH_WORDS",
    "EMBED_TIMEOUT_SECONDS",
    "EMBED_WAIT_SECONDS",
    "MAX_EMBEDDED_PER_SEARCH",
    "MAX_WINDOWS_PER_VALUE",
    "EmbedderFailedError",
    "Semantic",
]

#: Search by meaning's own logger (under mcpkit.remember): its model ready or failing, an embedder failing.
logger = logging.getLogger("mcpkit.remember.semantic")

#: The longest one call to the embedder may take before the write or search goes on without it.
EMBED_TIMEOUT_SECONDS = 10.0

#: The longest a call to the embedder waits for its turn (``EmbedScheduler``) before the write or search goes on
#: without it.
EMBED_WAIT_SECONDS = 5.0

#: Texts (chunks) given to the embedder in one call, at most: a batch write's short values go in calls of this many.
EMBED_BATCH = 16

#: Words given to the embedder in one call, at most (a longer text alone): two full windows of a long value. A call
#: is one turn at the embedder, which the next caller waits for (two windows take MiniLM about 60 ms on two cores).
EMBED_BATCH_WORDS = 240

#: The windows of one value that are embedded, at most: its first (about 17,000 characters of English); the rest of a
#: longer value is found by its words alone.
MAX_WINDOWS_PER_VALUE = 32

#: Chunks of values without a usable vector that one search embeds (whole values only, in the place's order);
#: the others rank by BM25 alone.
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
BUSY = (
    "Searched by words only: search by meaning was busy with other callers' searches. Search again shortly to find "
    "memories in other words too."
)


class EmbedderFailedError(Exception):
    """The embedder failed where going on without it is not an option (``mcpkit remember reindex --semantic``)."""


class Semantic:
    """One embedder, as the plugin uses it for every place it indexes.

    Ready at once, unless ``start`` loads its model in the background: then ready once that is done.
    """

    def __init__(self, embedder: Embedder, *, keys: bool = True) -> None:
        self.embedder = embedder
        #: Whether a value's key is embedded with it (its words before the value's).
        self.keys = keys
        self.name = str(embedder.name)
        #: The 4 bytes that name its model at the head of its vectors.
        self.tag = tag_of(self.name)
        #: How many components the embedder's vectors have, once one was seen (None: not yet).
        self.dimensions: int | None = None
        #: The similarity above which a value matches a query by meaning (the embedder's ``min_similarity``).
        self.min_similarity = float(getattr(embedder, "min_similarity", DEFAULT_MIN_SIMILARITY))
        self._loading: asyncio.Task[None] | None = None
        self._ready = True
        self._load_failed = False
        #: The turns at the embedder: ``concurrency`` calls at once (the embedder's, default 1).
        self.scheduler = EmbedScheduler(int(getattr(embedder, "concurrency", 1)))

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
        if vector[:TAG_BYTES] != self.tag:
            return False
        return self.dimensions is None or vectors_in(vector, self.dimensions) > 0

    async def vector(self, key: str, value_json: str | bytes, *, caller: str, strict: bool = False) -> bytes:
        """The packed vectors of a value (its stored JSON text, one vector per chunk); empty bytes when the
        embedder fails, or has no turn for ``caller`` in time, or while its model loads (the value is embedded when
        searched, until its next write gives it vectors).

        ``strict``: raise ``EmbedderFailedError`` instead of failing.
        """
        [packed] = await self.vectors([(key, value_json)], caller=caller, strict=strict)
        return packed

    async def vectors(
        self, values: Sequence[tuple[str, str | bytes]], *, caller: str, strict: bool = False
    ) -> list[bytes]:
        """``vector`` of each (key, JSON text), their chunks embedded together, in batches (``EMBED_BATCH``)."""
        if self.unavailable is not None:
            if strict:
                raise EmbedderFailedError(f"the embedder {self.name!r} is not ready: {self.unavailable}")
            return [b""] * len(values)
        texts = [self.chunks(key, pydantic_core.from_json(value_json)) for key, value_json in values]
        return await self._packed(texts, "a written value", caller, strict=strict)

    def chunks(self, key: str, value: object) -> list[str]:
        """The texts a value is embedded as: its first ``MAX_WINDOWS_PER_VALUE`` windows."""
        return document_chunks(key, value, keys=self.keys)[:MAX_WINDOWS_PER_VALUE]

    def windows_embedded(self, payload: Payload) -> int | None:
        """How many windows of a value searched by meaning were embedded, when fewer than all of them (a value
        longer than ``MAX_WINDOWS_PER_VALUE`` windows: a match past them was found by its words); else None."""
        windows = len(document_chunks(payload.key, payload.value(), keys=self.keys))
        embedded = min(windows, MAX_WINDOWS_PER_VALUE)  # as a value without vectors is embedded when searched
        if self.has_vector(payload) and self.dimensions is not None:
            embedded = vectors_in(payload.vector, self.dimensions)
        return embedded if embedded < windows else None

    async def query(self, query: str, *, caller: str) -> bytes | None:
        """The packed vector of a query; None when the embedder fails (the search then ranks by BM25 alone).

        ``EmbedderBusyError`` when no turn came for ``caller`` in time (the search goes by words, and says so).
        """
        embed_query = getattr(self.embedder, "embed_query", None)
        try:
            vectors = await self._embed([query[:MAX_EMBED_CHARS]], "a search query", caller, embed_query, query=True)
        except EmbedderBusyError:
            logger.warning("the embedder %r had no turn for a search query in time; it goes by words", self.name)
            raise
        if vectors is None:
            return None
        if self.dimensions is None:  # the vector shards a search fills need it
            self.dimensions = len(vectors[0])
        return pack_vector(self.name, vectors[0])

    async def similarities(self, query: bytes, kept: Sequence[Payload], *, caller: str) -> dict[int, tuple[float, int]]:
        """Each kept value's similarity to the query (its best chunk's cosine) and that chunk's number, by position,
        for the values that have (or now get) vectors.

        Values without usable vectors are embedded now, as many as fit in ``MAX_EMBEDDED_PER_SEARCH`` chunks.
        """
        dimensions = dimensions_of(query)
        [query_row], _ = unpack_vectors(self.name, [query], dimensions)
        scores = _best(*unpack_vectors(self.name, [payload.vector for payload in kept], dimensions), query_row)
        absent: list[int] = []
        texts: list[list[str]] = []
        budget = MAX_EMBEDDED_PER_SEARCH
        for number in range(len(kept)):
            if number not in scores:
                chunks = self.chunks(kept[number].key, kept[number].value())
                if len(chunks) > budget:
                    break
                budget -= len(chunks)
                absent.append(number)
                texts.append(chunks)
        if absent:
            made = await self._packed(texts, "values kept without a vector", caller)
            rows, owners = unpack_vectors(self.name, made, dimensions)
            if len(set(owners)) == sum(1 for packed in made if packed):
                scores.update({absent[owner]: best for owner, best in _best(rows, owners, query_row).items()})
            else:
                logger.warning("the embedder %r changed its vectors' length; skipped them", self.name)
        return scores

    async def _packed(self, texts: list[list[str]], what: str, caller: str, *, strict: bool = False) -> list[bytes]:
        """Each value's chunks (``texts``) embedded and packed; empty bytes for a value the embedder failed on, or
        had no turn for (once a turn does not come, the batches after it are not asked for either)."""
        made: list[dict[int, Sequence[float]]] = [{} for _ in texts]
        failed: set[int] = set()
        batches = _batches(texts)
        for at, batch in enumerate(batches):
            try:
                vectors = await self._embed([text for _, _, text in batch], what, caller, strict=strict)
            except EmbedderBusyError as exc:
                if strict:
                    raise EmbedderFailedError(f"the embedder {self.name!r} had no turn for {what}: {exc}") from exc
                logger.warning(
                    "the embedder %r had no turn for %s in time; going on without its vectors", self.name, what
                )
                failed.update(number for later in batches[at:] for number, _, _ in later)
                break
            for offset, (number, place, _) in enumerate(batch):
                if vectors is None:
                    failed.add(number)
                else:
                    made[number][place] = vectors[offset]
        packed = []
        for number, chunks in enumerate(made):
            vectors = [chunks[place] for place in sorted(chunks)]
            try:
                packed.append(b"" if number in failed or not vectors else pack_vectors(self.name, vectors))
            except ValueError as exc:
                if strict:
                    raise EmbedderFailedError(f"the embedder {self.name!r} failed on {what}: {exc}") from exc
                logger.warning("the embedder %r failed on %s: %s", self.name, what, exc)
                packed.append(b"")
        if self.dimensions is None:
            self.dimensions = next((len(next(iter(chunks.values()))) for chunks in made if chunks), None)
        return packed

    async def _embed(
        self,
        texts: list[str],
        what: str,
        caller: str,
        embed: Callable[..., Awaitable[Any]] | None = None,
        *,
        query: bool = False,
        strict: bool = False,
    ) -> list[Sequence[float]] | None:
        """The embedder's vectors of ``texts`` in a turn of ``caller``'s; None when it fails (``EmbedderBusyError``
        when the turn did not come in time)."""
        try:
            async with self.scheduler.turn(caller, query=query, wait=EMBED_WAIT_SECONDS):
                with anyio.fail_after(EMBED_TIMEOUT_SECONDS):
                    vectors = list(await (embed or self.embedder.embed)(texts))
            if len(vectors) != len(texts):
                raise ValueError(f"{len(vectors)} vectors for {len(texts)} texts")
            for vector in vectors:
                pack_vector(self.name, vector)  # checks: one finite, non-zero vector per text
        except EmbedderBusyError:
            raise
        except Exception as exc:  # the user's model: whatever it raises, writes and searches go on without it
            if strict:
                raise EmbedderFailedError(f"the embedder {self.name!r} failed on {what}: {exc!r:.200}") from exc
            logger.warning("the embedder %r failed on %s; going on without its vectors", self.name, what, exc_info=True)
            return None
        return vectors


def _batches(texts: list[list[str]]) -> list[list[tuple[int, int, str]]]:
    """Every value's chunks as (value, chunk, text), in batches of at most ``EMBED_BATCH`` texts and
    ``EMBED_BATCH_WORDS`` words (a longer text alone)."""
    # By length, so a batch pads its texts to about their own length (a model pads to the longest); each value's
    # chunks keep their order.
    flat = sorted(
        ((number, place, text) for number, chunks in enumerate(texts) for place, text in enumerate(chunks)),
        key=lambda chunk: len(chunk[2]),
    )
    batches: list[list[tuple[int, int, str]]] = []
    batch: list[tuple[int, int, str]] = []
    words = 0
    for chunk in flat:
        size = chunk[2].count(" ") + 1
        if batch and (len(batch) == EMBED_BATCH or words + size > EMBED_BATCH_WORDS):
            batches.append(batch)
            batch, words = [], 0
        batch.append(chunk)
        words += size
    if batch:
        batches.append(batch)
    return batches


def _best(rows: Any, owners: list[int], query_row: Any) -> dict[int, tuple[float, int]]:
    """Per value (``owners``: the value of each row), its best row's similarity to the query and that row's number
    among the value's rows."""
    best: dict[int, tuple[float, int]] = {}
    chunk, previous = 0, None
    for owner, score in zip(owners, (rows @ query_row).tolist(), strict=True):
        chunk = chunk + 1 if owner == previous else 0
        previous = owner
        kept = best.get(owner)
        if kept is None or score > kept[0]:
            best[owner] = (float(score), chunk)
    return best
