"""``python -m bench.history``: conversation history on each store, beside the same work through ``self.remember``.

Prints one JSON document. Per store (memory, SQLite, a private Redis, and PostgreSQL — ``BENCH_POSTGRES_URL``,
by default the local server — in a schema of the run's own):

- append: a 1,000-message conversation saved one message per call, as an agent saves its turns (µs per save), and
  the same 1,000 texts kept with ``self.remember.set`` (µs per set);
- load: the whole 1,000-message path with ``self.history.get`` (p50/p99 over 50 loads), and the same 1,000
  values read back through ``self.remember.get`` one by one;
- search: 200 queries over one caller's 10,000 messages (10 conversations of 1,000) with ``self.history.search``
  (p50/p99), and over the same 10,000 texts kept as searchable values with ``self.remember.search``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import bench.micro as micro
from bench.micro import Bench, PrivateRedis, caller, clean_redis
from bench.search import QUERY_COUNT, SEED, percentiles, queries, sentence
from bench.tokens import REMEMBER_SECRET
from mcpkit import PluginSetup, SystemClock
from mcpkit_history import History, HistoryPlugin

__all__ = ["main"]

CONVERSATION = 1000
SEARCHED = 10_000


class HistoryBench:
    """One started HistoryPlugin on one store."""

    def __init__(self, store: str, tmp: Path, prefix: str) -> None:
        self.plugin = HistoryPlugin.init(
            type=store,
            path=str(tmp / f"history-{uuid.uuid4().hex[:8]}.db") if store == "sqlite" else None,
            url=micro.REDIS_URL if store == "redis" else micro.POSTGRES_URL if store == "postgres" else None,
            secret=REMEMBER_SECRET,
            redis_prefix=prefix,
            max_total_messages=None,
            max_total_bytes=None,
        )
        self.plugin.setup(PluginSetup("bench", "bench", "bench", ("bench",), SystemClock))

    async def __aenter__(self) -> HistoryBench:
        await self.plugin.startup()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.plugin.shutdown()

    def history(self, user: str = "alice") -> History:
        return self.plugin.history_for(SimpleNamespace(caller=caller(user), kind="tool", name="bench"))  # type: ignore[arg-type]


async def timed(body: Callable[[], Awaitable[object]], times: int) -> dict[str, float]:
    samples = []
    for _ in range(times):
        start = time.perf_counter()
        await body()
        samples.append(time.perf_counter() - start)
    return percentiles(samples)


async def one_store(store: str, tmp: Path, prefix: str) -> dict[str, Any]:
    rng = random.Random(SEED)
    texts = [sentence(rng) for _ in range(SEARCHED)]
    asked = queries(rng)
    out: dict[str, Any] = {}
    async with (
        HistoryBench(store, tmp, prefix) as history_bench,
        Bench(store, tmp, prefix, search=True, quotas=False) as remember_bench,
    ):
        history, remember = history_bench.history(), remember_bench.remember()
        started = time.perf_counter()
        for number in range(CONVERSATION):
            await history.append("c0", [{"role": "user", "content": texts[number]}])
        appended = time.perf_counter() - started
        started = time.perf_counter()
        for number in range(CONVERSATION):
            await remember.set(f"c0:{number}", texts[number], scope="user")
        kept = time.perf_counter() - started
        out["append"] = {
            "history_us": appended / CONVERSATION * 1e6,
            "remember_us": kept / CONVERSATION * 1e6,
        }
        loaded = await history.get("c0")
        assert len(loaded) == CONVERSATION

        async def read_back() -> None:
            for number in range(CONVERSATION):
                await remember.get(f"c0:{number}", scope="user")

        out["load"] = {
            "history": await timed(lambda: history.get("c0"), 50),
            "remember_one_by_one": await timed(read_back, 10),
        }
        for conversation in range(1, SEARCHED // CONVERSATION):
            base = conversation * CONVERSATION
            for number in range(base, base + CONVERSATION, 100):  # saves of 100, to fill quickly
                batch = [{"role": "user", "content": text} for text in texts[number : number + 100]]
                await history.append(f"c{conversation}", batch)
            for number in range(base, base + CONVERSATION):
                await remember.set(f"c{conversation}:{number}", texts[number], scope="user")
        for query in asked[:20]:  # warm both
            await history.search(query)
            await remember.search(query, scope="user")
        history_samples, remember_samples = [], []
        for query in asked:
            start = time.perf_counter()
            await history.search(query)
            history_samples.append(time.perf_counter() - start)
            start = time.perf_counter()
            await remember.search(query, scope="user")
            remember_samples.append(time.perf_counter() - start)
        out["search"] = {
            "messages": SEARCHED,
            "queries": len(asked),
            "history": percentiles(history_samples),
            "remember": percentiles(remember_samples),
        }
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    prefix = f"mcpkit-bench-history:{os.getpid()}:{uuid.uuid4().hex[:8]}:"
    out: dict[str, Any] = {"conversation": CONVERSATION, "searched": SEARCHED, "queries": QUERY_COUNT}
    with tempfile.TemporaryDirectory(prefix="mcpkit-bench-history-") as folder:
        tmp = Path(folder)
        for store in ("memory", "sqlite"):
            out[store] = await one_store(store, tmp, prefix)
        with micro.postgres_schema() as postgres:
            if postgres is not None:
                out["postgres"] = await one_store("postgres", tmp, prefix)
        private = PrivateRedis(tmp, args.redis_cpu)
        url = private.start()
        try:
            micro.REDIS_URL = url or micro.REDIS_URL
            out["redis"] = await one_store("redis", tmp, prefix)
        finally:
            clean_redis(prefix)
            private.stop()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.history", description=__doc__)
    parser.add_argument("--cpu", type=int, default=None)
    parser.add_argument("--redis-cpu", type=int, default=1, help="core for the private redis-server")
    args = parser.parse_args(argv)
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    json.dump(asyncio.run(run(args)), sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
