"""``python -m bench.typo_cost``: what typo tolerance costs a query, on SQLite (issue 41).

One caller keeps the labelled set's 101 memories (``bench/data/quality.py``), alone and then among filler values
made of the same words (random sentences of its vocabulary, so that near spellings are held as in a real memory),
up to each size of ``--sizes``. Each of the labelled queries is asked as written and as ``misspelt`` makes it
(``lexical``, ``limit=10``), interleaved, ``--rounds`` times; the CPU time of the process (the store's thread
included) per query is reported, median and mean, with typo tolerance on and, for the typo'd ones, off.
``--save FILE`` writes every ranking (keys and scores) so that two checkouts' rankings can be compared.

``--ties``: instead, what widening the store's cut through ties costs (``mcpkit_storage.retrieval._ties``): the
scaling rows' data (``bench.search``: 10,000 values, 100 queries of 1 to 3 words, ``lexical``), each query asked
with the widening and without it in turn, in one process, ``--rounds`` times.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import mcpkit_storage.retrieval._search as search_module
import mcpkit_storage.retrieval._ties as ties_module
import mcpkit_storage.retrieval._typos as typos_module
from bench.micro import Bench
from bench.retrieval_data import labelled, misspelt

__all__ = ["main", "run"]

_WORD = re.compile(r"[A-Za-z]+")


def _filler(units: dict[str, str], count: int, seed: int = 41) -> dict[str, str]:
    """``count`` values of 8 to 16 words drawn from the units' own words."""
    words = sorted({word.lower() for text in units.values() for word in _WORD.findall(text)})
    rng = random.Random(seed)
    return {f"filler:{n}": " ".join(rng.choices(words, k=rng.randint(8, 16))) for n in range(count)}


async def _timed(remember: Any, query: str, tolerant: bool) -> tuple[float, list[tuple[str, float]]]:
    typos_module.TYPOS = tolerant
    try:
        began = time.process_time()
        matches = await remember.search(query, scope="user", limit=10, mode="lexical")
        return (time.process_time() - began) * 1000, [(match.key, match.score) for match in matches]
    finally:
        typos_module.TYPOS = True


def _summary(samples: list[float]) -> dict[str, float]:
    return {"median_ms": statistics.median(samples), "mean_ms": statistics.fmean(samples)}


async def run(sizes: list[int], rounds: int, store: str) -> dict[str, Any]:
    data = labelled()
    clean = [query.text for query in data.queries]
    typod = [query.text for query in misspelt(data.queries)]
    out: dict[str, Any] = {"store": store, "queries": {"clean": len(clean), "typo": len(typod)}, "sizes": {}}
    rankings: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="mcpkit-bench-typos-") as folder:
        async with Bench(store, Path(folder), "typo-cost:", search=True, quotas=False) as bench:
            remember = bench.remember()
            await remember.set_many(data.units, scope="user")
            kept = len(data.units)
            for size in sizes:
                if size > kept:
                    await remember.set_many(_filler(data.units, size - kept), scope="user")
                    kept = size
                times: dict[str, list[float]] = {"clean": [], "typo": [], "typo, no tolerance": []}
                found: dict[str, list[Any]] = {"clean": [], "typo": []}
                for round_ in range(rounds):
                    for exact, wrong in zip(clean, typod, strict=False):  # interleaved: the same load for each
                        spent, hits = await _timed(remember, exact, True)
                        times["clean"].append(spent)
                        if round_ == 0:
                            found["clean"].append([exact, hits])
                        spent, hits = await _timed(remember, wrong, True)
                        times["typo"].append(spent)
                        if round_ == 0:
                            found["typo"].append([wrong, hits])
                        times["typo, no tolerance"].append((await _timed(remember, wrong, False))[0])
                out["sizes"][str(kept)] = {name: _summary(samples) for name, samples in times.items()}
                rankings[str(kept)] = found
                print(f"  {store}, {kept} values: {out['sizes'][str(kept)]}", file=sys.stderr, flush=True)
    out["rankings"] = rankings
    return out


async def ties(rounds: int, store: str, size: int = 10_000) -> dict[str, Any]:
    """CPU per query with the cut widened through ties and without (the store's cut as it is), in turn."""
    from bench.search import SEED, queries, sentence

    widened = ties_module.through_ties

    async def cut(rank: Any, want: int) -> Any:  # the store's own cut: no widening
        return await rank(want)

    rng = random.Random(SEED)
    asked = queries(random.Random(SEED + 1))[:100]
    times: dict[str, list[float]] = {"widened": [], "store's cut": []}
    with tempfile.TemporaryDirectory(prefix="mcpkit-bench-ties-") as folder:
        async with Bench(store, Path(folder), "ties-cost:", search=True, quotas=False) as bench:
            remember = bench.remember()
            await remember.set_many({f"note:{n}": sentence(rng) for n in range(size)}, scope="user")
            try:
                for round_ in range(rounds):
                    for query in asked:
                        for name in ("widened", "store's cut")[:: 1 if round_ % 2 == 0 else -1]:
                            chosen = widened if name == "widened" else cut
                            ties_module.through_ties = search_module.through_ties = chosen  # type: ignore[assignment]
                            began = time.process_time()
                            await remember.search(query, scope="user", limit=10, mode="lexical")
                            times[name].append((time.process_time() - began) * 1000)
            finally:
                ties_module.through_ties = search_module.through_ties = widened
    return {"store": store, "values": size, "queries": len(asked), **{k: _summary(v) for k, v in times.items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.typo_cost", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="101,10000", help="values the caller keeps, comma-separated")
    parser.add_argument("--rounds", type=int, default=3, help="times each query is asked")
    parser.add_argument("--store", default="sqlite", help="memory, sqlite, redis or postgres")
    parser.add_argument("--save", type=Path, help="write the results, every ranking included, to this file")
    parser.add_argument("--ties", action="store_true", help="measure the widening of the cut through ties instead")
    args = parser.parse_args(argv)
    if args.ties:
        print(json.dumps(asyncio.run(ties(args.rounds, args.store)), indent=1))
        return 0
    results = asyncio.run(run([int(size) for size in args.sizes.split(",")], args.rounds, args.store))
    if args.save:
        args.save.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps({key: value for key, value in results.items() if key != "rankings"}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
