"""``python -m bench.search_window``: what a time window costs a search, at 10,000 values of one caller.

Each value gets an event time (``set(at=...)``) spread over the year before now. The same 200 queries run without
a window, with ``since`` keeping the newest half, with a narrow window (about 1% of the values: the filter
widens the store's ranking until ``limit`` values pass it, or the store has no more), with ``dates=True`` ("...
last week") and with a ``half_life``; p50 and p99 in milliseconds, memory and SQLite, search by words. Prints
one JSON document.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench.micro import Bench
from bench.search import SEED, percentiles, queries, sentence
from mcpkit_remember import Remember

__all__ = ["main"]

_DAY = 86_400.0
_BATCH = 50


async def _timed(remember: Remember, asked: list[str], **window: Any) -> dict[str, float]:
    for query in asked[:20]:
        await remember.search(query, scope="user", **window)
    samples = []
    for query in asked:
        start = time.perf_counter()
        await remember.search(query, scope="user", **window)
        samples.append(time.perf_counter() - start)
    return {name: round(value, 3) for name, value in percentiles(samples).items()}


async def _one(store: str, tmp: Path, size: int) -> dict[str, Any]:
    rng = random.Random(SEED)
    asked = queries(rng)
    now = time.time()
    async with Bench(
        store, tmp, f"mcpkit-bench:{os.getpid()}:{uuid.uuid4().hex[:8]}:", search=True, quotas=False
    ) as bench:
        remember = bench.remember()
        for start in range(0, size, _BATCH):  # one event time per batch of 50, the batches spread evenly over the year
            at = now - 365 * _DAY * (1 - start / size)
            batch = {f"note:{number}": sentence(rng) for number in range(start, min(size, start + _BATCH))}
            await remember.set_many(batch, scope="user", at=at)
        out = {"none": await _timed(remember, asked)}
        out["since_half"] = await _timed(remember, asked, since=now - 183 * _DAY)
        out["narrow_1pct"] = await _timed(remember, asked, since=now - 200 * _DAY, until=now - 196 * _DAY)
        out["dates_last_week"] = await _timed(remember, [f"{query} last week" for query in asked], dates=True)
        out["half_life_30d"] = await _timed(remember, asked, half_life=30 * _DAY)
    base = out["none"]["p50_ms"]
    return {name: {**row, "x_none_p50": round(row["p50_ms"] / base, 2)} for name, row in out.items()}


async def run(size: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="mcpkit-bench-window-") as folder:
        return {"size": size, "ms": {store: await _one(store, Path(folder), size) for store in ("memory", "sqlite")}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.search_window", description=__doc__)
    parser.add_argument("--size", type=int, default=10_000, help="values of the one caller (default 10000)")
    args = parser.parse_args(argv)
    print(json.dumps(asyncio.run(run(args.size)), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
