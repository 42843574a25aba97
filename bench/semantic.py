"""Search by meaning (the ``semantic`` extra): quality on the labelled set, embedding time, store size per value.

Quality rows, over the same memories and queries as BM25's: *semantic* ranks by the cosine similarity of
``MiniLM`` vectors alone, keeping the memories above its ``min_similarity`` as a search does (*semantic, every
memory ranked*: all of them, the model's whole ranking); *hybrid* is ``self.remember.search`` with
``embedder=MiniLM()`` (what users get); *hybrid, RRF* fuses the same BM25 and semantic rankings by reciprocal
rank fusion instead, for comparison.
Times are on one core (``MiniLM(threads=1)``, this process pinned by ``python -m bench``).
"""

from __future__ import annotations

import hashlib
import sqlite3
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.data.quality import MEMORIES, QUERIES
from bench.micro import Bench
from mcpkit_search import MiniLM, SemanticUnavailableError, document_text, rrf

__all__ = ["RandomVectors", "available", "metrics", "semantic"]

#: How many values the store-size rows write (texts of the labelled set, cycled).
SIZE_VALUES = 2000


class RandomVectors:
    """Vectors of MiniLM's length, random but fixed per text, made in microseconds: search cost without the model."""

    name = "bench-random-384"

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        import numpy

        vectors = []
        for text in texts:
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
            vectors.append(numpy.random.default_rng(seed).standard_normal(MiniLM.dimensions).tolist())
        return vectors


def available() -> str | None:
    """None when the semantic extra is installed, else why it is not."""
    try:
        MiniLM()
    except SemanticUnavailableError as exc:
        return str(exc)
    return None


def metrics(ranks: dict[str, list[int | None]]) -> dict[str, Any]:
    """P@1, MRR and recall@5 from the rank of each query's answer (None: not in the first 10), per kind and all."""
    out: dict[str, Any] = {}
    for kind, got in [*ranks.items(), ("all", ranks["lexical"] + ranks["paraphrased"])]:
        out[kind] = {
            "queries": len(got),
            "p_at_1": sum(rank == 1 for rank in got) / len(got),
            "mrr": sum(1 / rank for rank in got if rank is not None) / len(got),
            "recall_at_5": sum(rank is not None and rank <= 5 for rank in got) / len(got),
        }
    return out


def _rank(found: list[str], wanted: str) -> int | None:
    return found.index(wanted) + 1 if wanted in found[:10] else None


async def _quality(model: MiniLM, tmp: Path, prefix: str) -> dict[str, Any]:
    import numpy

    keys = list(MEMORIES)
    documents = numpy.array(model.embed_now([document_text(key, MEMORIES[key]) for key in keys]))
    ranks: dict[str, dict[str, list[int | None]]] = {
        mode: {"lexical": [], "paraphrased": []} for mode in ("semantic", "semantic_every", "hybrid", "hybrid_rrf")
    }
    async with (
        Bench("memory", tmp, prefix, search=True) as lexical,
        Bench("memory", tmp, prefix, search=True, embedder=model) as hybrid,
    ):
        plain, fused = lexical.remember(), hybrid.remember()
        for key, value in MEMORIES.items():
            await plain.set(key, value, scope="user")
            await fused.set(key, value, scope="user")
        for query, wanted, kind in QUERIES:
            similarity = documents @ numpy.array(model.embed_now([query])[0])
            ranked = numpy.argsort(-similarity, kind="stable")
            every = [keys[number] for number in ranked]
            by_meaning = [keys[number] for number in ranked if similarity[number] > model.min_similarity]
            by_words = [match.key for match in await plain.search(query, scope="user", limit=100)]
            combined = rrf(by_words, by_meaning)
            by_rrf = sorted(combined, key=lambda key: (-combined[key], str(key)))
            by_hybrid = [match.key for match in await fused.search(query, scope="user", limit=10)]
            found_by = {"semantic": by_meaning, "semantic_every": every, "hybrid": by_hybrid, "hybrid_rrf": by_rrf}
            for mode, found in found_by.items():
                ranks[mode][kind].append(_rank([str(key) for key in found], wanted))
    return {mode: metrics(got) for mode, got in ranks.items()}


def _embedding_ms(model: MiniLM) -> dict[str, float]:
    """Median milliseconds to embed one value, and one query, alone (as a write and a search do)."""
    values = [document_text(key, value) for key, value in MEMORIES.items()]
    queries = [query for query, _, _ in QUERIES]
    out = {}
    for name, texts in (("value", values), ("query", queries)):
        samples = []
        for text in texts:
            start = time.perf_counter()
            model.embed_now([text])
            samples.append((time.perf_counter() - start) * 1000)
        out[f"{name}_p50_ms"] = statistics.median(samples)
    start = time.perf_counter()
    model.embed_now(values)
    out["batch_per_value_ms"] = (time.perf_counter() - start) * 1000 / len(values)
    return out


async def _bytes_per_value(model: MiniLM | None, tmp: Path, prefix: str) -> float:
    """The SQLite file's bytes per value once ``SIZE_VALUES`` of the set's texts are kept (and vacuumed)."""
    texts = list(MEMORIES.items())
    async with Bench("sqlite", tmp, prefix, search=True, embedder=model, quotas=False) as bench:
        remember = bench.remember()
        for number in range(SIZE_VALUES):
            key, value = texts[number % len(texts)]
            await remember.set(f"{key}#{number}", value, scope="user")
        path = bench.plugin.store_config.path or ""
    return _vacuumed_size(path) / SIZE_VALUES


def _vacuumed_size(path: str) -> int:
    db = sqlite3.connect(path)
    try:
        db.execute("VACUUM")
    finally:
        db.close()
    return Path(path).stat().st_size


async def semantic(tmp: Path, prefix: str) -> dict[str, Any]:
    """Every figure of this module, or why it was not measured."""
    why = available()
    if why is not None:
        return {"error": why}
    model = MiniLM(threads=1)
    await model.load()
    out: dict[str, Any] = {"model": model.name, "dimensions": model.dimensions}
    out["quality"] = await _quality(model, tmp, prefix)
    out["embedding"] = _embedding_ms(model)
    out["sqlite_bytes_per_value"] = {
        "with_vectors": await _bytes_per_value(model, tmp, prefix),
        "without": await _bytes_per_value(None, tmp, prefix),
    }
    return out
