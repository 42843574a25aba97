"""``python -m bench.search_window``: what a time window or a source filter costs a search, at 10,000 and 100,000
values of one caller.

Each value gets an event time (``set(at=...)``) spread over the year before now, and a source (user, tool, model in
turn by batch). The same 200 queries run without a window, with ``since`` keeping the newest half, with a narrow
window (about 1% of the values), with ``dates=True`` ("... last week"), with a ``half_life`` and with
``sources=["user"]`` (a third of the values); p50 and p99 in milliseconds, memory and SQLite, search by words.
Then, at 10,000 values with an embedder (``RandomVectors``: no model time), hybrid search without a filter and
with ``sources=["user"]`` (50 queries); and in a small memory (100 values), queries whose words some value holds
against the same queries with a word no value holds (typo tolerance's cost).

``--quick``: 10,000 values only, printed. Otherwise both sizes, printed and written to
``bench/results/search_window.json`` (the 100,000 rows take some minutes per store). ``--stores redis,postgres``:
those stores instead (printed only).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench.micro import POSTGRES_SERVER, Bench, postgres_schema
from bench.search import SEED, percentiles, queries, sentence
from bench.semantic import RandomVectors
from mcpkit_remember import Remember

__all__ = ["main"]

_DAY = 86_400.0
_BATCH = 50
_SOURCES = ("user", "tool", "model")
RESULTS = Path(__file__).parent / "results" / "search_window.json"


async def _timed(remember: Remember, asked: list[str], **window: Any) -> dict[str, float]:
    for query in asked[:20]:
        await remember.search(query, scope="user", **window)
    samples, cpu = [], []
    for query in asked:
        start, start_cpu = time.perf_counter(), time.process_time()
        await remember.search(query, scope="user", **window)
        samples.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    timed = percentiles(samples)
    timed["cpu_p50_ms"] = statistics.median(cpu) * 1000
    timed["cpu_mean_ms"] = statistics.fmean(cpu) * 1000
    return {name: round(value, 3) for name, value in timed.items()}


async def _keep(remember: Remember, rng: random.Random, size: int, now: float) -> None:
    """``size`` values, one event time and one source per batch of 50, the batches spread evenly over the year."""
    for start in range(0, size, _BATCH):
        at = now - 365 * _DAY * (1 - start / size)
        batch = {f"note:{number}": sentence(rng) for number in range(start, min(size, start + _BATCH))}
        await remember.set_many(batch, scope="user", at=at, source=_SOURCES[start // _BATCH % 3])  # type: ignore[arg-type]


def _against_none(out: dict[str, dict[str, float]]) -> dict[str, Any]:
    """Each row with its p50 and its CPU time (the process's, worker threads too: the figure to compare on a busy
    machine) against the search without a filter."""
    wall, cpu = out["none"]["p50_ms"], out["none"]["cpu_mean_ms"]
    return {
        name: {
            **row,
            "x_none_p50": round(row["p50_ms"] / wall, 2),
            "x_none_cpu_mean": round(row["cpu_mean_ms"] / cpu, 2),
        }
        for name, row in out.items()
    }


def _prefix() -> str:
    return f"mcpkit-bench:{os.getpid()}:{uuid.uuid4().hex[:8]}:"


async def _one(store: str, tmp: Path, size: int) -> dict[str, Any]:
    rng = random.Random(SEED)
    asked = queries(rng)
    now = time.time()
    async with Bench(store, tmp, _prefix(), search=True, quotas=False) as bench:
        remember = bench.remember()
        await _keep(remember, rng, size, now)
        out = {"none": await _timed(remember, asked)}
        out["since_half"] = await _timed(remember, asked, since=now - 183 * _DAY)
        out["narrow_1pct"] = await _timed(remember, asked, since=now - 200 * _DAY, until=now - 196 * _DAY)
        out["dates_last_week"] = await _timed(remember, [f"{query} last week" for query in asked], dates=True)
        out["half_life_30d"] = await _timed(remember, asked, half_life=30 * _DAY)
        out["sources_user"] = await _timed(remember, asked, sources=["user"])
    return _against_none(out)


async def _hybrid(store: str, tmp: Path, size: int) -> dict[str, Any]:
    """Hybrid search with an embedder: from the vector shards without a filter; ``sources=`` and a narrow window
    open the values their facets admit."""
    rng = random.Random(SEED)
    asked = queries(rng)[:50]
    now = time.time()
    async with Bench(store, tmp, _prefix(), search=True, quotas=False, embedder=RandomVectors()) as bench:
        remember = bench.remember()
        await _keep(remember, rng, size, now)
        out = {"none": await _timed(remember, asked)}
        out["sources_user"] = await _timed(remember, asked, sources=["user"])
        out["narrow_1pct"] = await _timed(remember, asked, since=now - 200 * _DAY, until=now - 196 * _DAY)
    return _against_none(out)


async def _small(store: str, tmp: Path) -> dict[str, Any]:
    """A memory of 100 values: the queries as asked, and each with a word no value holds (so typo tolerance looks
    for its near spellings)."""
    rng = random.Random(SEED)
    asked = queries(rng)
    async with Bench(store, tmp, _prefix(), search=True, quotas=False) as bench:
        remember = bench.remember()
        await _keep(remember, rng, 100, time.time())
        out = {"none": await _timed(remember, asked)}
        out["unheld_word"] = await _timed(remember, [f"{query} zqxjkvw" for query in asked])
        out["typo"] = await _timed(remember, [f"{query} {sentence(rng).split()[0]}x" for query in asked])
    return _against_none(out)


async def run(
    sizes: list[int], saved: Path | None = None, stores: tuple[str, ...] = ("memory", "sqlite")
) -> dict[str, Any]:
    """Every row (the largest size last) on each of ``stores``; with ``saved``, the results so far written there
    after each part."""
    out: dict[str, Any] = {"sizes": sizes, "ms": {}}

    def save() -> None:
        if saved is not None:
            saved.write_text(json.dumps(out, indent=1) + "\n")

    with tempfile.TemporaryDirectory(prefix="mcpkit-bench-window-") as folder, contextlib.ExitStack() as stack:
        if "postgres" in stores and stack.enter_context(postgres_schema()) is None:
            raise SystemExit(f"no PostgreSQL at {POSTGRES_SERVER} (BENCH_POSTGRES_URL): nothing to measure there")
        tmp = Path(folder)
        out["small_100"] = {store: await _small(store, tmp) for store in stores}
        out["hybrid_10000"] = {store: await _hybrid(store, tmp, 10_000) for store in stores}
        save()
        for size in sizes:
            out["ms"][str(size)] = {store: await _one(store, tmp, size) for store in stores}
            save()
        return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.search_window", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="10,000 values only, printed, not saved")
    parser.add_argument(
        "--stores",
        default="memory,sqlite",
        help="the stores measured, comma-separated (redis and postgres need the bench's servers); printed only "
        "when not the default",
    )
    args = parser.parse_args(argv)
    stores = tuple(args.stores.split(","))
    keep = not args.quick and stores == ("memory", "sqlite")
    results = asyncio.run(run([10_000] if args.quick else [10_000, 100_000], RESULTS if keep else None, stores))
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
