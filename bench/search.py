"""``python -m bench.search``: search latency, Redis round trips, the FTS5 baseline, indexing cost, quality.

With the ``semantic`` extra, also the semantic and hybrid quality rows, embedding time and size (``bench.semantic``).

Prints one JSON document. Latency: one caller's N values (written through ``self.remember``) among
``--others`` values of other owners in the same store (written straight into the store, with postings, as
they would be), 200 queries per size, p50 and p99. The baseline: the same texts in a plain-text SQLite FTS5
table (``porter unicode61``), queried the same way from a worker thread, as the SQLite store does.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import redis

import bench.micro as micro
from bench import semantic
from bench.data.quality import MEMORIES, QUERIES
from bench.micro import Bench, PrivateRedis, clean_redis, per_call_us
from bench.round_trips import SendCounter
from bench.search_report import FTS5_REFERENCE
from bench.semantic import metrics
from mcpkit_remember import Remember
from mcpkit_storage.stores._store import Postings
from mcpkit_storage.stores.sqlite._sqlite_index import MERGE_EVERY

__all__ = ["main"]

QUERY_COUNT = 200
VOCABULARY = 5000
SEED = 20261201


def _vocabulary() -> list[str]:
    """Pseudo-words (no stems in common), Zipf-weighted when drawn: a few common, a long tail of rare ones."""
    letters = "bcdfghjklmnprstvz"
    vowels = "aeiou"
    rng = random.Random(SEED)
    words: set[str] = set()
    while len(words) < VOCABULARY:
        words.add("".join(rng.choice(letters) + rng.choice(vowels) for _ in range(rng.randint(2, 4))))
    return sorted(words)


WORDS = _vocabulary()
WEIGHTS = [1 / (rank + 1) for rank in range(VOCABULARY)]


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, WEIGHTS, k=rng.randint(8, 16)))


def queries(rng: random.Random) -> list[str]:
    return [" ".join(rng.choices(WORDS, WEIGHTS, k=rng.randint(1, 3))) for _ in range(QUERY_COUNT)]


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": statistics.median(ordered) * 1000,
        "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000,
        "mean_ms": statistics.fmean(ordered) * 1000,
    }


# -- other owners, written straight into each store ---------------------------------------------------------


def _other_postings(rng: random.Random) -> Postings:
    terms = {rng.getrandbits(63): rng.randint(1, 2) for _ in range(rng.randint(6, 12))}
    return Postings(terms, sum(terms.values()))


async def fill_others_memory(bench: Bench, count: int, now: float) -> None:
    store, rng = bench.plugin._backing.store, random.Random(SEED + 1)
    assert store is not None
    for number in range(count):
        owner = f"{number // 100:032x}"
        await store.put(owner, "b" * 32, f"{number:032x}", os.urandom(120), None, now, None, _other_postings(rng))


def _other_rows(count: int) -> Iterator[dict[str, list[tuple[Any, ...]]]]:
    """Other owners' values as the SQL stores keep them, 50,000 at a time: rows per table, in insert order."""
    rng = random.Random(SEED + 1)
    for start in range(0, count, 50_000):
        entries, docs, terms = [], [], []
        for number in range(start, min(count, start + 50_000)):
            owner, key, doc = f"{number // 100:032x}", f"{number:032x}", 10**9 + number
            postings = _other_postings(rng)
            entries.append((owner, "b" * 32, key, os.urandom(120), None, None))  # no deadline, first-write time unknown
            docs.append((doc, owner, "b" * 32, key, postings.length, None))
            terms += [(term, doc, n) for term, n in postings.terms.items()]
        yield {"remember_entries": entries, "remember_docs": docs, "remember_terms": terms}


def fill_others_sqlite(path: Path, count: int) -> None:
    """As the store keeps them once merged: postings in ``remember_terms``, documents no longer ``fresh`` (a
    document is always added fresh: the schema refuses others, as an older mcpkit's)."""
    with sqlite3.connect(path) as db:
        for tables in _other_rows(count):
            tables["remember_docs"] = [(*doc, 1) for doc in tables["remember_docs"]]
            for table, rows in tables.items():
                db.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(rows[0]))})", rows)
            db.execute("UPDATE remember_docs SET fresh = NULL WHERE fresh IS NOT NULL")


def fill_others_postgres(url: str, count: int) -> None:
    """As ``fill_others_sqlite``, by COPY (the store's triggers keep usage as for its own writes)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as db, db.cursor() as cursor:
        for tables in _other_rows(count):
            for table, rows in tables.items():
                with cursor.copy(f"COPY {table} FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)


def fill_others_redis(url: str, prefix: str, count: int) -> None:
    rng = random.Random(SEED + 1)
    client = redis.Redis.from_url(url)
    pipe = client.pipeline(transaction=False)
    for number in range(count):
        base, key = f"{prefix}{{{number // 100:032x}}}", f"{number:032x}"
        bucket = "b" * 32
        postings = _other_postings(rng)
        pipe.set(f"{base}:v:{bucket}:{key}", b"\x7f\xf0" + b"\0" * 6 + os.urandom(120))
        pipe.zadd(f"{base}:i:{bucket}", {key: "inf"})
        spec = " ".join([str(postings.length), *(f"{t:016x}:{n}" for t, n in postings.terms.items())])
        pipe.hset(f"{base}:d:{bucket}", key, spec)
        pipe.zadd(f"{base}:x:{bucket}", {f"{t:016x}:{n}:{key}": 0 for t, n in postings.terms.items()})
        if number % 2000 == 1999:
            pipe.execute()
    pipe.execute()
    client.close()


# -- latency --------------------------------------------------------------------------------------------


async def timed(remember: Remember, asked: list[str]) -> dict[str, float]:
    for query in asked[:20]:
        await remember.search(query, scope="user")
    samples = []
    for query in asked:
        start = time.perf_counter()
        await remember.search(query, scope="user")
        samples.append(time.perf_counter() - start)
    return percentiles(samples)


async def latency(store: str, tmp: Path, prefix: str, sizes: list[int], others: int) -> dict[str, Any]:
    rng = random.Random(SEED)
    asked = queries(rng)
    out: dict[str, Any] = {"others": others}
    async with Bench(store, tmp, prefix, search=True, quotas=False) as bench:  # 100k values: past max_values
        started = time.perf_counter()
        if store == "memory":
            await fill_others_memory(bench, others, time.time())
        elif store == "sqlite":
            fill_others_sqlite(Path(bench.plugin.store_config.path or ""), others)
        elif store == "postgres":
            fill_others_postgres(bench.plugin.store_config.url or "", others)
        else:
            fill_others_redis(bench.plugin.store_config.url or "", prefix, others)
        out["fill_others_s"] = time.perf_counter() - started
        remember = bench.remember()
        kept = 0
        for size in sizes:
            while kept < size:
                await remember.set(f"note:{kept}", sentence(rng), scope="user")
                kept += 1
            out[str(size)] = await timed(remember, asked)
            if store == "redis":  # every query's, the most of them judged (one secret in use)
                counts = []
                for query in asked:
                    with SendCounter() as counter:
                        await remember.search(query, scope="user")
                    counts.append(counter.sends)
                out[str(size)]["round_trips"] = max(counts)
                out[str(size)]["round_trips_seen"] = {str(n): counts.count(n) for n in sorted(set(counts))}
    return out


async def hybrid_latency(tmp: Path, prefix: str, sizes: list[int]) -> dict[str, Any]:
    """Search with an embedder at each size, on memory and SQLite, model time left out (``RandomVectors``).

    What grows with the scope: reading its vector shards and the similarities; the model's own time per query
    (``semantic.embedding``) comes on top.
    """
    rng = random.Random(SEED)
    asked = queries(rng)[:50]
    out: dict[str, Any] = {}
    for store in ("memory", "sqlite"):
        out[store] = {}
        embedder = semantic.RandomVectors()
        async with Bench(store, tmp, prefix, search=True, quotas=False, embedder=embedder) as bench:
            remember = bench.remember()
            kept = 0
            for size in sizes:
                while kept < size:
                    await remember.set(f"note:{kept}", sentence(rng), scope="user")
                    kept += 1
                out[store][str(size)] = await timed(remember, asked)
    return out


async def fts5_baseline(tmp: Path, sizes: list[int], others: int) -> dict[str, Any]:
    """Plain-text SQLite FTS5 (porter), the same texts and queries, queried from one worker thread."""
    rng_others, rng = random.Random(SEED + 1), random.Random(SEED)
    asked = queries(rng)
    db = sqlite3.connect(tmp / "fts5.db", check_same_thread=False)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(owner, key, body, tokenize='porter unicode61')")
    started = time.perf_counter()
    for start in range(0, others, 50_000):
        rows = [(f"o{n // 100}", f"{n:032x}", sentence(rng_others)) for n in range(start, min(others, start + 50_000))]
        db.executemany("INSERT INTO docs VALUES (?, ?, ?)", rows)
    db.commit()
    out: dict[str, Any] = {"others": others, "fill_others_s": time.perf_counter() - started}
    sql = "SELECT key, body, bm25(docs) AS score FROM docs WHERE docs MATCH ? ORDER BY score LIMIT 10"

    def search(query: str) -> list[Any]:
        words = " OR ".join(f'"{word}"' for word in query.split())
        return db.execute(sql, (f'owner:"me" AND ({words})',)).fetchall()

    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor(max_workers=1) as executor:
        kept = 0
        for size in sizes:
            while kept < size:
                db.execute("INSERT INTO docs VALUES ('me', ?, ?)", (f"note:{kept}", sentence(rng)))
                kept += 1
            db.commit()
            for query in asked[:20]:
                await loop.run_in_executor(executor, search, query)
            samples = []
            for query in asked:
                began = time.perf_counter()
                await loop.run_in_executor(executor, search, query)
                samples.append(time.perf_counter() - began)
            out[str(size)] = percentiles(samples)
    db.close()
    return out


# -- indexing cost --------------------------------------------------------------------------------------


#: The owner's values kept before the indexing cost is timed: one (the key rewritten), and a realistic memory.
INDEXING_SIZES = (1, 10_000)


async def indexing_cost(tmp: Path, prefix: str, quick: bool) -> dict[str, Any]:
    """``set`` of 100-character texts with ``search=True`` and without (the default, as a set was before search).

    Both plugins run side by side and are timed in back-to-back pairs (on, off, then off, on, ...), so that a
    change of the machine's speed between runs falls on both; the target takes the median of the pair ratios.
    Each size of ``INDEXING_SIZES`` keeps that many values of the owner first and then rewrites them at random:
    with one, the same key again and again; with 10,000, the cost of a real index's pages (rows ``STORE@10000``).
    """
    kept = list(MEMORIES.values())
    # 101 texts of about 100 characters (three of the labelled set's memories each), written in turn: every set
    # replaces a value with different words, as a caller's updates do (a value written again unchanged would let
    # the memory store keep its postings, which flatters indexing).
    texts = [". ".join(kept[(i + j) % len(kept)] for j in range(3)) for i in range(len(kept))]
    out: dict[str, Any] = {"text_chars": statistics.mean(map(len, texts))}
    with micro.postgres_schema() as postgres:
        stores = ("memory", "sqlite", "redis", *(("postgres",) if postgres else ()))
        for size, store in itertools.product(INDEXING_SIZES, stores):
            if quick and size > 1:
                continue
            # SQLite merges its index every MERGE_EVERY changes: any run of twice as many writes holds two merges
            number, pairs = {"memory": 2000, "sqlite": 2 * MERGE_EVERY}.get(store, 200), 9
            if quick:
                number, pairs = number if store == "sqlite" else number // 4, 3
            async with (
                Bench(store, tmp, f"{prefix}ix-on-{size}:", search=True) as on,  # default quotas: 10,000 values fit
                Bench(store, tmp, f"{prefix}ix-off-{size}:", search=False) as off,
            ):
                # a caller of each side's own: the PostgreSQL benches share one schema (the others, nothing)
                writers = {
                    side: await _rewriting(bench, side, texts, size) for side, bench in (("on", on), ("off", off))
                }
                runs: dict[str, list[dict[str, float]]] = {"on": [], "off": []}
                for pair in range(pairs):
                    for side in ("on", "off") if pair % 2 == 0 else ("off", "on"):
                        runs[side].append(await per_call_us(writers[side], number, 1))
            name = store if size == 1 else f"{store}@{size}"
            out.update(_pairs_summary(name, runs, number, pairs))
    for size in INDEXING_SIZES:
        if quick and size > 1:
            continue
        out.update(await _fts5_indexing(tmp, texts, size, 3 if quick else 9))
    return out


def _pairs_summary(name: str, runs: dict[str, list[dict[str, float]]], number: int, pairs: int) -> dict[str, Any]:
    """The rows of one indexing measurement: each side's best and median run, the median of the pair ratios."""
    ratios = [a["min_us"] / b["min_us"] for a, b in zip(runs["on"], runs["off"], strict=True)]
    cpu = [a["cpu_min_us"] / b["cpu_min_us"] for a, b in zip(runs["on"], runs["off"], strict=True)]
    out: dict[str, Any] = {}
    for side in ("on", "off"):
        times = [run["min_us"] for run in runs[side]]
        out[f"{name}/{side}"] = {"min_us": min(times), "median_us": statistics.median(times), "number": number}
    out[f"{name}/ratio"] = statistics.median(ratios)
    out[f"{name}/ratios"] = {"pairs": pairs, "min": min(ratios), "max": max(ratios), "cpu": statistics.median(cpu)}
    return out


async def _fts5_indexing(tmp: Path, texts: list[str], size: int, pairs: int) -> dict[str, Any]:
    """What plain-text SQLite FTS5 (porter) adds to a write, for the same texts and keys as ``indexing_cost``.

    A value row as the SQLite store keeps one (``WITHOUT ROWID``, keyed by owner, bucket and key, the data a
    blob), written on one worker thread, in autocommit (off) or, with its text in an FTS5 table, in one
    ``BEGIN IMMEDIATE`` transaction that deletes the key's old text and inserts the new one (on): not an
    encrypted index, the reference for what any exact index on SQLite costs.
    """
    folder = tmp / f"fts5-indexing-{size}"
    folder.mkdir()
    writers: dict[str, Callable[[], None]] = {}
    connections = []
    for side in ("on", "off"):
        db = sqlite3.connect(folder / f"{side}.db", isolation_level=None, check_same_thread=False)
        connections.append(db)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("""CREATE TABLE entries (owner TEXT NOT NULL, bucket TEXT NOT NULL, key TEXT NOT NULL,
            data BLOB NOT NULL, doc INTEGER NULL, PRIMARY KEY (owner, bucket, key)) WITHOUT ROWID""")
        db.execute("CREATE VIRTUAL TABLE docs USING fts5(body, tokenize='porter unicode61')")
        writers[side] = _fts5_writer(db, texts, size, indexed=side == "on")
    runs: dict[str, list[dict[str, float]]] = {"on": [], "off": []}
    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor(max_workers=1) as executor:
        for side in ("on", "off"):
            for _ in range(size):
                await loop.run_in_executor(executor, writers[side])

        def call(side: str) -> Callable[[], Awaitable[None]]:
            return lambda: loop.run_in_executor(executor, writers[side])

        for pair in range(pairs):
            for side in ("on", "off") if pair % 2 == 0 else ("off", "on"):
                runs[side].append(await per_call_us(call(side), 200, 1))
    for db in connections:
        db.close()
    return _pairs_summary(FTS5_REFERENCE if size == 1 else f"{FTS5_REFERENCE}@{size}", runs, 200, pairs)


def _fts5_writer(db: sqlite3.Connection, texts: list[str], size: int, *, indexed: bool) -> Callable[[], None]:
    """Writes ``size`` keys in turn first, then one of them at random, each time the next text (as ``_rewriting``)."""
    turns, rng, written = itertools.cycle(texts), random.Random(SEED), itertools.count()
    owner, bucket = "o" * 43, "b" * 43  # as long as the store's hashed owner and bucket

    def write() -> None:
        number = next(written)
        key = f"note:{number if number < size else rng.randrange(size)}"
        text = next(turns)
        data = os.urandom(len(text) + 60)  # a sealed value's size: the text, a nonce, a tag, the payload's fields
        if not indexed:
            db.execute(
                "INSERT INTO entries VALUES (?, ?, ?, ?, NULL) ON CONFLICT DO UPDATE SET data = excluded.data",
                (owner, bucket, key, data),
            )
            return
        db.execute("BEGIN IMMEDIATE")
        old = db.execute("SELECT doc FROM entries WHERE owner = ? AND bucket = ? AND key = ?", (owner, bucket, key))
        row = old.fetchone()
        if row is not None:
            db.execute("DELETE FROM docs WHERE rowid = ?", row)
        doc = db.execute("INSERT INTO docs (body) VALUES (?)", (text,)).lastrowid
        db.execute(
            "INSERT INTO entries VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT DO UPDATE SET data = excluded.data, doc = excluded.doc",
            (owner, bucket, key, data, doc),
        )
        db.execute("COMMIT")

    return write


async def _rewriting(bench: Bench, user: str, texts: list[str], size: int) -> Callable[[], Awaitable[None]]:
    """A writer that sets one of ``user``'s ``size`` keys at random to the next text, once all ``size`` are kept."""
    remember, turns, rng = bench.remember(user), itertools.cycle(texts), random.Random(SEED)
    for number in range(size):
        await remember.set(f"note:{number}", next(turns), scope="user")

    async def write() -> None:
        await remember.set(f"note:{rng.randrange(size)}", next(turns), scope="user")

    return write


# -- quality --------------------------------------------------------------------------------------------


async def quality(tmp: Path, prefix: str) -> dict[str, Any]:
    """P@1, MRR and recall@5 of BM25 over the labelled set (bench/data/quality.py), lexical and paraphrased."""
    async with Bench("memory", tmp, prefix, search=True) as bench:
        remember = bench.remember()
        for key, value in MEMORIES.items():
            await remember.set(key, value, scope="user")
        ranks: dict[str, list[int | None]] = {"lexical": [], "paraphrased": []}
        for query, wanted, kind in QUERIES:
            found = [match.key for match in await remember.search(query, scope="user", limit=10)]
            ranks[kind].append(found.index(wanted) + 1 if wanted in found else None)
    return {"queries": len(QUERIES), "memories": len(MEMORIES), **metrics(ranks)}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    sizes = [1000, 10_000] if args.quick else [1000, 10_000, 100_000]
    others = 100_000 if args.quick else args.others
    prefix = f"mcpkit-bench:{os.getpid()}:{uuid.uuid4().hex[:8]}:"
    out: dict[str, Any] = {"sizes": sizes, "queries": QUERY_COUNT}
    with tempfile.TemporaryDirectory(prefix="mcpkit-bench-search-") as folder:
        tmp = Path(folder)
        if args.indexing_only:
            with private_redis(tmp, args.redis_cpu, prefix):
                return {"indexing": await indexing_cost(tmp, prefix, args.quick)}
        if args.postgres_only:
            return {"latency": await postgres_latency(tmp, prefix, sizes, others)}
        if args.redis_only:
            with private_redis(tmp, args.redis_cpu, prefix):
                return {"latency": {"redis": await latency("redis", tmp, prefix, sizes, others)}}
        if args.sqlite_only:  # with the FTS5 baseline its target compares it to, measured in the same run
            sqlite = await latency("sqlite", tmp, prefix, sizes, others)
            return {"latency": {"sqlite": sqlite}, "fts5": await fts5_baseline(tmp, sizes, others)}
        out["quality"] = await quality(tmp, prefix)
        out["semantic"] = await semantic.semantic(tmp, prefix)
        if "error" not in out["semantic"]:
            out["semantic"]["latency"] = await hybrid_latency(tmp, prefix, sizes[:2])
        if args.semantic_only:
            return out
        out["latency"] = {"memory": await latency("memory", tmp, prefix, sizes, others)}
        out["latency"]["sqlite"] = await latency("sqlite", tmp, prefix, sizes, others)
        out["fts5"] = await fts5_baseline(tmp, sizes, others)
        with private_redis(tmp, args.redis_cpu, prefix):
            out["latency"]["redis"] = await latency("redis", tmp, prefix, sizes, others)
            out["indexing"] = await indexing_cost(tmp, prefix, args.quick)
        out["latency"].update(await postgres_latency(tmp, prefix, sizes, others))
    return out


async def postgres_latency(tmp: Path, prefix: str, sizes: list[int], others: int) -> dict[str, Any]:
    """The PostgreSQL row, on the machine's server in a schema of this run's own (none without a server)."""
    with micro.postgres_schema() as postgres:
        if postgres is None:
            return {}
        return {"postgres": await latency("postgres", tmp, prefix, sizes, others)}


@contextlib.contextmanager
def private_redis(tmp: Path, cpu: int, prefix: str) -> Iterator[None]:
    """The Redis steps run on a redis-server of their own (the shared one when none can start)."""
    private = PrivateRedis(tmp, cpu)
    url = private.start()
    try:
        micro.REDIS_URL = url or micro.REDIS_URL  # Bench and clean_redis read it when called
        yield
    finally:
        clean_redis(prefix)
        private.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.search")
    parser.add_argument("--quick", action="store_true", help="1k and 10k values, 100k others")
    parser.add_argument("--others", type=int, default=1_000_000, help="values of other owners in each store")
    parser.add_argument("--cpu", type=int, default=None)
    parser.add_argument("--redis-cpu", type=int, default=1, help="core for the private redis-server")
    parser.add_argument("--semantic-only", action="store_true", help="quality and the semantic extra's figures only")
    parser.add_argument("--indexing-only", action="store_true", help="the indexing cost rows only")
    parser.add_argument("--postgres-only", action="store_true", help="the PostgreSQL latency row only")
    parser.add_argument("--redis-only", action="store_true", help="the Redis latency row only")
    parser.add_argument("--sqlite-only", action="store_true", help="the SQLite and FTS5 latency rows only")
    parser.add_argument("--merge", metavar="JSON", help="put these rows into this saved results file's search part")
    args = parser.parse_args(argv)
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    measured = asyncio.run(run(args))
    json.dump(measured, sys.stdout, indent=1)
    print()
    if args.merge:  # e.g. one store's row measured again after a change to that store
        path = Path(args.merge)
        results = json.loads(path.read_text())
        search = results.setdefault("search", {})
        for part, rows in measured.items():
            search[part] = {**search.get(part, {}), **rows} if isinstance(rows, dict) else rows
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True
        )
        if any(Path(line[3:]).resolve() != path.resolve() for line in changed.stdout.splitlines()):  # code too
            commit += " + uncommitted changes"
        command = " ".join(["python -m bench.search", *(argv or sys.argv[1:])])
        rows = {part: _row_names(rows) for part, rows in measured.items() if isinstance(rows, dict)}
        search["remeasured"] = _still_shown(
            [*search.get("remeasured", []), {"commit": commit, "command": command, "rows": rows}]
        )
        search["note"] = " ".join(
            f"Re-measured at {entry['commit']} with `{entry['command']}`: "
            + ", ".join(f"{part} ({', '.join(names)})" for part, names in entry["rows"].items())
            + "."
            for entry in search["remeasured"]
        )
        path.write_text(json.dumps(results, indent=1) + "\n")
    return 0


def _row_names(rows: dict[str, Any]) -> list[str]:
    """The rows of a part as a note names them: the stores of ``STORE/field`` keys (indexing), else the keys
    that hold rows (a store's latency, a size of the FTS5 baseline), not the part's own figures."""
    fields = [row for row in rows if "/" in row]
    if fields:
        return list(dict.fromkeys(row.split("/")[0] for row in fields))
    return [name for name, row in rows.items() if isinstance(row, dict)]


def _still_shown(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The re-measurements whose rows the page still shows: one whose every row a later one measured again goes."""
    kept = []
    for number, entry in enumerate(entries):
        later = {
            (part, name) for newer in entries[number + 1 :] for part, names in newer["rows"].items() for name in names
        }
        if any((part, name) not in later for part, names in entry["rows"].items() for name in names):
            kept.append(entry)
    return kept


if __name__ == "__main__":
    sys.exit(main())
