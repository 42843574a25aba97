"""``python -m bench.hardening``: what one caller who attacks does to the others, and what it can make a store keep.

Prints one JSON document (and merges the parts it ran into ``bench/results/hardening.json``). Issue 29's attacks at
a size given by ``--megabytes``, and issue 35's: ``embedding`` (``bench/hardening_embedding.py``: another caller's
search by meaning while one writes 60,000-character values) and ``admission`` (below):

- ``history`` (per store, a real server process, ``bench.serve hardening``): the attacker saves one conversation
  of ``--megabytes`` MB (saves of three 60 KB messages), then sends four ``search_history`` limited to it at a time
  and ``load_history`` of it in a loop, while another caller calls ``get_banner`` (a tool that touches no store)
  one call after another: that caller's p50/p99/worst latency before and during the attack.
- ``quota`` (per store, in process, the memory tools' notes at the default quota of 16 MiB): the attacker keeps
  values of 60,000 characters of distinct short words until the quota refuses one; how many were kept, what the
  store grew by (memory: this process's RSS; SQLite: the file and its WAL; Redis: ``used_memory`` of a private
  server; PostgreSQL: the schema's tables), the attacker's write p50/worst, and another caller's ``get`` p50/p99/
  worst on the same store meanwhile (on Redis, through a second plugin instance: another server).
- ``admission`` (per store, the help desk as a real process with mcpkit's connection guard, ``hardening_admission``):
  one agent holds 1,000 unanswered questions, or keeps 64 heavy reads queued, while another calls ``get_banner``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import string
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx2
import redis
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import bench.micro as micro
from bench.hardening_admission import admission
from bench.hardening_embedding import embedding
from bench.micro import Bench, PrivateRedis
from bench.procs import ServerProcess
from bench.search import WORDS
from bench.tokens import TOKENS
from mcpkit_remember import RememberQuotaError

__all__ = ["main"]

ATTACKER, OTHER = "u00", "u01"
MESSAGE_CHARS = 60_000
RESULTS = Path(__file__).resolve().parent / "results" / "hardening.json"


def latencies(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "calls": len(ordered),
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 2),
        "worst_ms": round(ordered[-1] * 1000, 2),
    }


def prose(rng: random.Random, chars: int) -> str:
    words: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(WORDS)
        words.append(word)
        size += len(word) + 1
    return " ".join(words)[:chars]


def dense(number: int, chars: int = MESSAGE_CHARS) -> str:
    """Distinct short words, none shared with another value: the index's worst case."""
    letters = string.ascii_lowercase
    words, size, at = [], 0, number * 20_000
    while size < chars:
        value, word = at, ""
        for _ in range(5):
            value, digit = divmod(value, 26)
            word += letters[digit]
        words.append(word)
        size += 6
        at += 1
    return " ".join(words)[:chars]


# -- history: a real server process ----------------------------------------------------------------------------


def client(http: httpx2.AsyncClient, port: int) -> Client:
    return Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http), mode="2026-07-28")


async def history_attack(port: int, megabytes: float, seconds: float) -> dict[str, Any]:
    rng = random.Random(29)
    headers = {label: {"Authorization": f"Bearer {TOKENS[label]}"} for label in (ATTACKER, OTHER)}
    async with (
        httpx2.AsyncClient(headers=headers[ATTACKER], timeout=600) as attacker_http,
        httpx2.AsyncClient(headers=headers[OTHER], timeout=600) as other_http,
        client(attacker_http, port) as attacker,
        client(other_http, port) as other,
    ):
        started, saved, refused = time.monotonic(), 0, None
        while saved < megabytes * 1_000_000:
            messages = [{"role": "user", "content": prose(rng, MESSAGE_CHARS)} for _ in range(3)]
            result = await attacker.call_tool("save_messages", {"conversation": "big", "messages": messages})
            if result.is_error:  # the quota (max_total_bytes, indexed words counted) ends the conversation here
                refused = (result.meta or {}).get("mcpkit/error", {}).get("code", "refused")
                break
            saved += 3 * MESSAGE_CHARS
        fill_seconds = time.monotonic() - started

        async def banners(count: int | None, until: asyncio.Event | None) -> list[float]:
            samples: list[float] = []
            while (count is not None and len(samples) < count) or (until is not None and not until.is_set()):
                began = time.monotonic()
                await other.call_tool("get_banner", {})
                samples.append(time.monotonic() - began)
            return samples

        quiet = await banners(200, None)
        done = asyncio.Event()
        own: dict[str, list[float]] = {"search_history": [], "load_history": []}
        loaded_bytes: list[int] = []

        async def searching() -> None:
            while not done.is_set():
                began = time.monotonic()
                query = {"query": rng.choice(WORDS), "conversation": "big"}
                await attacker.call_tool("search_history", query)
                own["search_history"].append(time.monotonic() - began)

        async def loading() -> None:
            while not done.is_set():
                began = time.monotonic()
                result = await attacker.call_tool("load_history", {"conversation": "big"})
                own["load_history"].append(time.monotonic() - began)
                loaded_bytes.append(len(json.dumps(result.structured_content)))

        attackers = [asyncio.create_task(searching()) for _ in range(4)] + [asyncio.create_task(loading())]
        watching = asyncio.create_task(banners(None, done))
        await asyncio.sleep(seconds)
        done.set()
        attacked = await watching
        await asyncio.gather(*attackers)
    return {
        "conversation_mb": round(saved / 1_000_000, 1),
        "fill_refused": refused,
        "fill_seconds": round(fill_seconds, 1),
        "other_get_banner_quiet": latencies(quiet),
        "other_get_banner_attacked": latencies(attacked),
        "attacker_search_history": latencies(own["search_history"]) if own["search_history"] else None,
        "attacker_load_history": latencies(own["load_history"]) if own["load_history"] else None,
        "load_history_response_bytes": max(loaded_bytes, default=0),
    }


async def history(stores: list[str], tmp: Path, megabytes: float, seconds: float) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for store in stores:
        options: dict[str, Any] = {"type": store}
        if store == "sqlite":
            options["path"] = str(tmp / f"history-{uuid.uuid4().hex[:8]}.db")
        elif store == "redis":
            options["url"] = micro.REDIS_URL
        server = ServerProcess("hardening", options, cpu=0, log=tmp / "server.log")
        server.start()
        try:
            out[store] = await history_attack(server.port, megabytes, seconds)
        finally:
            server.stop()
    return out


# -- quota: in process -------------------------------------------------------------------------------------------


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def store_bytes(store: str, tmp: Path, bench: Bench) -> int:
    if store == "memory":
        return rss_bytes()
    if store == "sqlite":
        return sum(path.stat().st_size for path in tmp.glob("sqlite-*.db*"))
    if store == "redis":
        return int(redis.Redis.from_url(micro.REDIS_URL).info("memory")["used_memory"])
    import psycopg

    assert micro.POSTGRES_URL is not None
    with psycopg.connect(micro.POSTGRES_URL, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
        row = conn.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'"
        ).fetchone()
    return int(row[0]) if row else 0


async def quota_attack(store: str, tmp: Path, prefix: str, limit: int) -> dict[str, Any]:
    async with Bench(store, tmp, prefix) as attacker_side, Bench(store, tmp, prefix) as other_side:
        attacker = attacker_side.plugin.notes_for(micro_context(ATTACKER))  # the memory tools' notes: indexed
        other = other_side.remember(OTHER)
        await other.set("fact", "kept by the other caller", scope="user")
        before = store_bytes(store, tmp, attacker_side)
        kept, writes, reads = 0, [], []
        done = asyncio.Event()

        async def reading() -> None:
            while not done.is_set():
                began = time.monotonic()
                await other.get("fact", scope="user")
                reads.append(time.monotonic() - began)
                await asyncio.sleep(0.001)

        slow = redis.Redis.from_url(micro.REDIS_URL) if store == "redis" else None
        if slow is not None:  # every command over 1 ms, to find the longest script
            slow.config_set("slowlog-log-slower-than", 1000)
            slow.config_set("slowlog-max-len", 10_000)
            slow.slowlog_reset()
        watching = asyncio.create_task(reading())
        rewrites: list[float] = []
        try:
            for number in range(limit):
                began = time.monotonic()
                try:
                    await attacker.set(f"dense-{number}", dense(number), scope="user")
                except RememberQuotaError:
                    break
                writes.append(time.monotonic() - began)
                kept += 1
            for number in range(min(kept, 20)):  # rewrites: the old postings out, the new in
                began = time.monotonic()
                await attacker.set(f"dense-{number}", dense(number + 1000), scope="user")
                rewrites.append(time.monotonic() - began)
        finally:
            done.set()
            await watching
        grown = store_bytes(store, tmp, attacker_side) - before
        longest = None
        if slow is not None:
            entries = slow.slowlog_get(10_000)
            longest = round(max((entry["duration"] for entry in entries), default=0) / 1000, 2)
    return {
        "values_kept": kept,
        "value_bytes_kept": kept * MESSAGE_CHARS,
        "store_grew_mb": round(grown / 1_000_000, 1),
        "attacker_write": latencies(writes) if writes else None,
        "attacker_rewrite": latencies(rewrites) if rewrites else None,
        "redis_longest_command_ms": longest,
        "other_get": latencies(reads) if reads else None,
    }


def micro_context(label: str) -> Any:
    from types import SimpleNamespace

    return SimpleNamespace(caller=micro.caller(label), kind="tool", name="bench", app_id="bench", request_context=None)


async def quota(stores: list[str], tmp: Path, limit: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for store in stores:
        prefix = f"mcpkit-bench-hardening:{uuid.uuid4().hex[:8]}:"
        out[store] = await quota_attack(store, tmp, prefix, limit)
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"megabytes": args.megabytes, "attack_seconds": args.seconds}
    with tempfile.TemporaryDirectory(prefix="mcpkit-bench-hardening-") as folder:
        tmp = Path(folder)
        private = PrivateRedis(tmp, cpu=1)
        url = private.start()
        try:
            if url is not None:
                micro.REDIS_URL = url
            stores = [store for store in args.stores if store != "redis" or url is not None]
            with micro.postgres_schema() as postgres:
                if postgres is None:
                    stores = [store for store in stores if store != "postgres"]
                if "quota" in args.parts:
                    out["quota"] = await quota(stores, tmp, args.limit)
                if "history" in args.parts:
                    out["history"] = await history(
                        [s for s in stores if s != "postgres"], tmp, args.megabytes, args.seconds
                    )
                if "admission" in args.parts:
                    desks = {"memory": "memory", "sqlite": f"sqlite:///{tmp / 'desk.db'}", "redis": micro.REDIS_URL}
                    chosen = {store: desks[store] for store in stores if store in desks}
                    out["admission"] = await admission(chosen, tmp, args.admission_seconds)
                if "embedding" in args.parts:
                    out["embedding"] = await embedding(args.writers, args.values)
        finally:
            private.stop()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.hardening")
    parts = ["quota", "history", "embedding", "admission"]
    parser.add_argument("--parts", nargs="+", default=parts, choices=parts)
    parser.add_argument("--stores", nargs="+", default=["memory", "sqlite", "redis", "postgres"])
    parser.add_argument("--megabytes", type=float, default=60.0, help="the attacker's conversation, in MB")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long the history attack lasts")
    parser.add_argument("--limit", type=int, default=400, help="dense values tried at most (the quota stops them)")
    parser.add_argument(
        "--admission-seconds", type=float, default=10.0, help="how long the other caller calls, quiet and attacked"
    )
    parser.add_argument("--writers", type=int, default=3, help="embedding: the writer's write_memory calls at a time")
    parser.add_argument("--values", type=int, default=4, help="embedding: 60,000-character values per writer")
    args = parser.parse_args(argv)
    out = asyncio.run(run(args))
    RESULTS.parent.mkdir(exist_ok=True)
    kept = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}  # the parts not run this time stay
    out = {**kept, **out}
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
