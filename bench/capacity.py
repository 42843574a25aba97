"""``python -m bench.capacity``: what one remembered value costs each store, for the capacity plan (docs/scaling.md).

For every store it writes ``OWNERS`` x ``PER_OWNER`` values of about 100 characters through the public
``self.remember`` API of a started plugin (encryption on), once without and once with search, and reads the store's
own size before and after: SQLite's pages (after a checkpoint), Redis' ``used_memory`` (a private redis-server,
and the sum over a private cluster's primaries), PostgreSQL's ``pg_total_relation_size`` of the store's tables (a
schema of its own, after ``VACUUM``). The search rows give the index's cost per posting (one posting per distinct
term of a value). Prints one JSON document.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis

from bench import micro
from bench.cluster import _cluster_class
from bench.micro import Bench
from mcpkit_search import Analyzer

__all__ = ["main"]

OWNERS, PER_OWNER = 100, 100

ROOT = Path(__file__).resolve().parents[1]
SAVED = ROOT / "bench" / "results" / "capacity.json"

_TOPICS = ("refund", "printer", "invoice", "password", "shipping", "warranty", "login", "upgrade", "billing", "VPN")


def value_of(owner: int, number: int) -> str:
    """A realistic note of about 100 characters: a preference, a fact or a ticket."""
    topic = _TOPICS[(owner + number) % len(_TOPICS)]
    return (
        f"Customer {owner} asked about the {topic} on ticket #{10_000 + owner * PER_OWNER + number}; "
        f"prefers email replies, signed Customer Care, before {9 + number % 8}pm"
    )


def postings_per_value() -> float:
    analyzer = Analyzer()
    counts = [len(set(analyzer.value_tokens(f"note-{n}", value_of(o, n)))) for o in range(5) for n in range(PER_OWNER)]
    return sum(counts) / len(counts)


async def fill(store: str, tmp: Path, url: str | None, search: bool) -> None:
    async with Bench(store, tmp, f"mcpkit-cap:{uuid.uuid4().hex[:8]}:", search=search, quotas=False, url=url) as b:
        for owner in range(OWNERS):
            remember = b.remember(f"capacity-{owner}")
            for number in range(PER_OWNER):
                await remember.set(f"note-{number}", value_of(owner, number), scope="user")


async def measured(
    store: str,
    tmp: Path,
    url: str | None,
    size: Callable[[], int],
    search: bool,
    cpu: Callable[[], float] | None = None,
) -> dict[str, float]:
    """The store's growth over one fill, per value; with ``cpu``, the server's CPU per write too."""
    before, cpu_before = size(), cpu() if cpu else 0.0
    await fill(store, tmp, url, search)
    grown = size() - before
    out = {"bytes": grown, "bytes_per_value": grown / (OWNERS * PER_OWNER)}
    if cpu is not None:
        out["server_cpu_us_per_set"] = (cpu() - cpu_before) / (OWNERS * PER_OWNER) * 1e6
    return out


def sqlite_size(path: Path) -> Callable[[], int]:
    def size() -> int:
        if not path.exists():
            return 0
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            pages = db.execute("PRAGMA page_count").fetchone()[0] - db.execute("PRAGMA freelist_count").fetchone()[0]
            return int(pages * db.execute("PRAGMA page_size").fetchone()[0])

    return size


def redis_size(urls: list[str]) -> Callable[[], int]:
    """Redis' memory for data: ``used_memory`` less client buffers and the replication backlog (which a replica's
    output buffer inflates while writes stream to it)."""

    def size() -> int:
        total = 0
        for url in urls:
            with redis.Redis.from_url(url) as client:
                memory = client.info("memory")
                buffers = sum(int(memory.get(name, 0)) for name in ("mem_clients_slaves", "mem_clients_normal"))
                total += int(memory["used_memory"]) - buffers - int(memory.get("mem_replication_backlog", 0))
        return total

    return size


def redis_cpu_seconds(urls: list[str]) -> float:
    """CPU the Redis servers at ``urls`` have used so far (user and system)."""
    total = 0.0
    for url in urls:
        with redis.Redis.from_url(url) as client:
            cpu = client.info("cpu")
            total += float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])
    return total


def postgres_size(url: str) -> Callable[[], int]:
    import psycopg

    def size() -> int:
        with psycopg.connect(url, autocommit=True) as conn:
            tables = [
                row[0] for row in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
            ]
            for table in tables:
                conn.execute(f'VACUUM "{table}"')  # names read from the catalogue
            row = conn.execute(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'"
            ).fetchone()
            return int(row[0]) if row else 0

    return size


async def run(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"values": OWNERS * PER_OWNER, "owners": OWNERS, "postings_per_value": postings_per_value()}
    with tempfile.TemporaryDirectory(prefix="mcpkit-capacity-") as folder:
        tmp = Path(folder)
        for search in (False, True):
            label = "search" if search else "plain"
            out[f"sqlite/{label}"] = await measured_sqlite(tmp, search)
            private = micro.PrivateRedis(tmp, args.redis_cpu)
            url = private.start()
            if url is not None:
                try:
                    cpu = lambda url=url: redis_cpu_seconds([url])  # noqa: E731
                    out[f"redis/{label}"] = await measured("redis", tmp, url, redis_size([url]), search, cpu)
                finally:
                    private.stop()
            with micro.postgres_schema() as postgres:
                if postgres is not None:
                    out[f"postgres/{label}"] = await measured(
                        "postgres", tmp, postgres, postgres_size(postgres), search
                    )
            cluster = _cluster_class()(tmp / f"cluster-{label}")
            cluster.start()
            try:
                primaries = [node.url for node in cluster.primaries()]
                out[f"redis-cluster/{label}"] = await measured(
                    "redis-cluster", tmp, cluster.url, redis_size(primaries), search
                )
            finally:
                cluster.stop()
    for store in ("sqlite", "redis", "postgres", "redis-cluster"):
        plain, searched = out.get(f"{store}/plain"), out.get(f"{store}/search")
        if plain and searched:
            extra = searched["bytes_per_value"] - plain["bytes_per_value"]
            out[f"{store}/bytes_per_posting"] = extra / out["postings_per_value"]
    return out


async def measured_sqlite(tmp: Path, search: bool) -> dict[str, float]:
    """SQLite through ``Bench``, whose path is its own: the file is found by its name."""
    before_files = await asyncio.to_thread(lambda: set(tmp.glob("sqlite-*.db")))
    await fill("sqlite", tmp, None, search)
    (path,) = await asyncio.to_thread(lambda: set(tmp.glob("sqlite-*.db")) - before_files)
    grown = sqlite_size(path)()
    return {"bytes": grown, "bytes_per_value": grown / (OWNERS * PER_OWNER)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.capacity")
    parser.add_argument("--redis-cpu", type=int, default=1, help="core for the private redis-server")
    parser.add_argument("--save", action="store_true", help=f"also write {SAVED.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    results = asyncio.run(run(args))
    json.dump(results, sys.stdout, indent=1)
    print()
    if args.save:
        SAVED.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
