"""``python -m bench.micro``: in-process micro-benchmarks of ``self.remember`` and its stores.

Prints one JSON document. Everything goes through the public ``Remember`` API of a started
``RememberPlugin`` (encryption on), except the clearly labelled "encryption off" rows, which
swap in a bench-only pass-through keyring because mcpkit has no switch to turn encryption off.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import gc
import json
import math
import os
import pstats
import shutil
import socket
import sqlite3
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import tracemalloc
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import redis

from bench.procs import pinned
from bench.round_trips import VALUE, ExchangeCounter, SendCounter, per_operation
from bench.tokens import REMEMBER_SECRET
from mcpkit import Caller, PluginSetup, SystemClock
from mcpkit_remember import Remember, RememberPlugin
from mcpkit_storage.sealing._keyring import HEADER_BYTES, VERSION, Keyring, Opened

__all__ = ["main"]

#: The shared Redis; ``run()`` swaps in a private one when ``redis-server`` is installed (see PrivateRedis).
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")

#: The PostgreSQL server the bench uses (a schema of its own, dropped after); None when none answers.
POSTGRES_SERVER = os.environ.get("BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
POSTGRES_URL: str | None = None


@contextlib.contextmanager
def postgres_schema() -> Iterator[str | None]:
    """Point ``POSTGRES_URL`` at a schema of this run's own on ``POSTGRES_SERVER`` (None without a server)."""
    global POSTGRES_URL
    try:
        import psycopg
    except ImportError:
        yield None
        return
    schema = f"mcpkit_bench_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    try:
        with psycopg.connect(POSTGRES_SERVER, autocommit=True, connect_timeout=3) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
    except psycopg.Error:
        yield None
        return
    POSTGRES_URL = f"{POSTGRES_SERVER}?options=-csearch_path%3D{schema}"
    try:
        yield POSTGRES_URL
    finally:
        POSTGRES_URL = None
        with psycopg.connect(POSTGRES_SERVER, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


class PlainKeyring(Keyring):
    """Bench-only: the real keyring's owner hashing, but values stored in clear (no AES-GCM)."""

    def seal(self, owner: str, bucket: str, key: str, plaintext: bytes) -> bytes:
        return bytes([VERSION]) + self._secrets[0].key_id + plaintext

    def open(self, owner: str, bucket: str, key: str, sealed: bytes) -> Opened:
        return Opened(bytes(sealed[HEADER_BYTES:]), secret=0, version=VERSION)


def caller(user: str) -> Caller:
    return Caller(f"static:{user}", "static", user, {}, None, "2026-07-28", f"anon:{user}")


class Bench:
    """One started plugin on one store, and a ``Remember`` for any caller."""

    def __init__(
        self,
        store: str,
        tmp: Path,
        prefix: str,
        *,
        plain: bool = False,
        search: bool = False,
        quotas: bool = True,
        embedder: Any = None,
        url: str | None = None,
    ) -> None:
        self.store = store
        self.prefix = prefix
        self.plugin = RememberPlugin.init(
            type=store,
            path=str(tmp / f"{store}-{uuid.uuid4().hex[:8]}.db") if store == "sqlite" else None,
            url=url or (REDIS_URL if store == "redis" else POSTGRES_URL if store == "postgres" else None),
            secret=REMEMBER_SECRET,
            redis_prefix=prefix,
            search=search,
            embedder=embedder,
            **({} if quotas else {"max_values": None, "max_bytes": None}),
        )
        self.plugin.setup(PluginSetup("bench", "bench", "bench", ("bench",), SystemClock))
        if plain:
            self.plugin._backing._keyring = PlainKeyring([REMEMBER_SECRET])

    async def __aenter__(self) -> Bench:
        await self.plugin.startup()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.plugin.shutdown()

    def remember(self, user: str = "alice") -> Remember:
        context = SimpleNamespace(caller=caller(user), kind="tool", name="bench", app_id="bench", request_context=None)
        return self.plugin.remember_for(context)  # type: ignore[arg-type]


async def per_call_us(body: Callable[[], Awaitable[object]], number: int, repeat: int) -> dict[str, float]:
    """timeit-style: ``repeat`` runs of ``number`` calls; microseconds per call (min and median of runs)."""
    for _ in range(max(10, number // 20)):
        await body()
    runs, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        for _ in range(number):
            await body()
        runs.append((time.perf_counter() - start) / number * 1e6)
        cpu.append((time.process_time() - start_cpu) / number * 1e6)
    return {
        "min_us": min(runs),
        "median_us": statistics.median(runs),
        "cpu_median_us": statistics.median(cpu),
        "cpu_min_us": min(cpu),
        "number": number,
        "repeat": repeat,
    }


async def set_get(tmp: Path, prefix: str, quick: bool, stores: tuple[str, ...]) -> dict[str, Any]:
    """Many short repeats, so the best one catches a quiet moment even on a shared machine."""
    sizes = {"memory": (2000, 5) if quick else (3000, 15), "sqlite": (100, 3) if quick else (200, 7)}
    sizes["redis"] = sizes["postgres"] = sizes["sqlite"]
    out: dict[str, Any] = {}
    for store in stores:
        number, repeat = sizes[store]
        for plain in (False, True):
            async with Bench(store, tmp, f"{prefix}sg:", plain=plain) as bench:
                remember = bench.remember()

                async def pair(remember: Remember = remember) -> None:
                    await remember.set("note", VALUE, scope="user")
                    await remember.get("note", scope="user")

                async def increment(remember: Remember = remember) -> None:
                    await remember.increment("hits", scope="user")

                label = f"{store}/{'off' if plain else 'on'}"
                out[f"set+get {label}"] = await per_call_us(pair, number, repeat)
                if not plain:
                    out[f"increment {store}"] = await per_call_us(increment, number, repeat)
    if "memory" in stores:
        out["keyring seal+open"] = keyring_share(quick)
    return out


def keyring_share(quick: bool) -> dict[str, float]:
    """What AES-GCM costs in one set+get pair: one seal and one open of the same value (best of many repeats)."""
    keyring = Keyring([REMEMBER_SECRET])
    owner = keyring.owner_for('["u","static:alice"]')
    plaintext = f'[["u","static:alice"],"{VALUE}"]'.encode()
    number, repeat = (2000, 5) if quick else (3000, 15)
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            sealed = keyring.seal(owner, "user", "note", plaintext)
            keyring.open(owner, "user", "note", sealed)
        runs.append((time.perf_counter() - start) / number * 1e6)
    return {
        "min_us": min(runs),
        "median_us": statistics.median(runs),
        "cpu_median_us": statistics.median(runs),
        "number": number,
        "repeat": repeat,
    }


async def call_profiles(tmp: Path) -> dict[str, Any]:
    """cProfile of memory-store set+get pairs and increments: each function's self time, in us per operation.

    The us figures scale cProfile's shares to the operation's unprofiled CPU time (cProfile itself
    inflates Python calls).
    """
    out: dict[str, Any] = {}
    async with Bench("memory", tmp, "unused:") as bench:
        remember = bench.remember()

        async def pair() -> None:
            await remember.set("note", VALUE, scope="user")
            await remember.get("note", scope="user")

        async def increment() -> None:
            await remember.increment("hits", scope="user")

        for name, body in (("set+get", pair), ("increment", increment)):
            plain = await per_call_us(body, 20000, 3)
            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(20000):
                await body()
            profiler.disable()
            out[name] = _fold_profile(profiler, plain["cpu_min_us"], 20000)
    return out


def _fold_profile(profiler: cProfile.Profile, op_us: float, operations: int) -> dict[str, Any]:
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    total = sum(row[2] for row in stats.values())
    rows = []
    for (filename, line, name), (_, calls, tottime, cumtime, _) in stats.items():
        where = filename.split("site-packages/")[-1].split("/work/main/")[-1].split("/lib/python3.11/")[-1]
        rows.append(
            {
                "function": f"{name} ({where}:{line})",
                "calls_per_op": calls / operations,
                "self_share": tottime / total,
                "self_us": tottime / total * op_us,
                "cumulative_us": cumtime / total * op_us,
            }
        )
    rows.sort(key=lambda row: row["self_share"], reverse=True)
    return {"op_cpu_us": op_us, "functions": rows[:20]}


# -- list() while the store holds many other keys -----------------------------------------------------


def _owners(count: int, seed: int) -> list[str]:
    return [f"{seed:08x}{i:024x}" for i in range(count)]


def fill_sqlite(path: Path, start: int, stop: int) -> None:
    """Rows for owners ``start..stop`` (10 keys each), written raw in the store's table layout."""
    conn = sqlite3.connect(path)
    data = os.urandom(180)
    rows = ((owner, "user", f"k{k}", data) for owner in _owners(stop, 7)[start:] for k in range(10))
    with conn:
        conn.executemany(
            "INSERT INTO remember_entries (owner, bucket, key, data, expires_at) VALUES (?, ?, ?, ?, NULL)", rows
        )
    conn.close()


def fill_redis(client: redis.Redis, prefix: str, start: int, stop: int) -> None:
    """The same for Redis: value strings, one index ZSET and one bucket SET per owner, via pipelines."""
    value = struct.pack(">d", math.inf) + os.urandom(180)
    pipe = client.pipeline(transaction=False)
    queued = 0
    for owner in _owners(stop, 7)[start:]:
        base = f"{prefix}{{{owner}}}"
        for k in range(10):
            pipe.set(f"{base}:v:user:k{k}", value)
        pipe.zadd(f"{base}:i:user", {f"k{k}": math.inf for k in range(10)})
        pipe.sadd(f"{base}:b", "user")
        queued += 12
        if queued >= 12000:
            pipe.execute()
            queued = 0
    pipe.execute()


def clean_redis(prefix: str) -> int:
    client = redis.Redis.from_url(REDIS_URL)
    gone = 0
    try:
        batch = []
        for name in client.scan_iter(match=f"{prefix}*", count=10000):
            batch.append(name)
            if len(batch) >= 10000:
                gone += client.unlink(*batch)
                batch = []
        if batch:
            gone += client.unlink(*batch)
    finally:
        client.close()
    return gone


async def list_scaling(tmp: Path, prefix: str, quick: bool) -> dict[str, Any]:
    sizes = [10_000, 100_000] if quick else [10_000, 100_000, 1_000_000]
    out: dict[str, Any] = {}
    for store in ("sqlite", "redis"):
        rows = {}
        list_prefix = f"{prefix}ls:"
        async with Bench(store, tmp, list_prefix) as bench:
            remember = bench.remember()
            for i in range(10):
                await remember.set(f"note{i}", VALUE, scope="user")
            filled = 0
            client = redis.Redis.from_url(REDIS_URL) if store == "redis" else None
            try:
                for size in sizes:
                    started = time.perf_counter()
                    if store == "sqlite":
                        path = Path(bench.plugin.store_config.path or "")
                        fill_sqlite(path, filled // 10, size // 10)
                    else:
                        assert client is not None
                        fill_redis(client, list_prefix, filled // 10, size // 10)
                    filled = size
                    fill_s = time.perf_counter() - started
                    keys = await remember.list(scope="user")
                    assert keys == sorted(f"note{i}" for i in range(10)), keys

                    async def listing(remember: Remember = remember) -> None:
                        await remember.list(scope="user")

                    timing = await per_call_us(listing, 200 if not quick else 50, 5 if not quick else 3)
                    rows[str(size)] = {"ms": timing["median_us"] / 1000, "min_ms": timing["min_us"] / 1000}
                    rows[str(size)]["fill_s"] = fill_s
            finally:
                if client is not None:
                    client.close()
        if store == "redis":
            rows["cleaned_keys"] = clean_redis(list_prefix)
        out[store] = rows
    return out


# -- Redis round trips per operation --------------------------------------------------------------------


def _commandstats(client: redis.Redis) -> dict[str, int]:
    stats = client.info("commandstats")
    return {
        name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items() if name != "cmdstat_info"
    }


async def redis_round_trips(tmp: Path, prefix: str) -> dict[str, Any]:
    """Round trips (writes on the connection) and Redis commands (INFO commandstats) per operation."""
    probe = redis.Redis.from_url(REDIS_URL)
    try:
        async with Bench("redis", tmp, f"{prefix}rt:") as bench:
            out = await per_operation(bench.remember("rt-user"), SendCounter, snapshot=lambda: _commandstats(probe))
    finally:
        probe.close()
    clean_redis(f"{prefix}rt:")
    return out


async def postgres_round_trips(tmp: Path, prefix: str) -> dict[str, Any]:
    """Exchanges with PostgreSQL per operation (a statement, BEGIN or COMMIT each)."""
    async with Bench("postgres", tmp, prefix) as bench:
        return await per_operation(bench.remember("rt-user"), ExchangeCounter)


# -- memory store bytes per value -----------------------------------------------------------------------


async def memory_per_value(tmp: Path, quick: bool) -> dict[str, Any]:
    """tracemalloc growth while the memory store keeps N 100-character values (1000 callers x N/1000 keys)."""
    total = 20_000 if quick else 100_000
    owners, per_owner = 1000, total // 1000
    async with Bench("memory", tmp, "unused:") as bench:
        remembers = [bench.remember(f"user{i:04d}") for i in range(owners)]
        await bench.remember("warm").set("warm", VALUE, scope="user")
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for k in range(per_owner):
            for remember in remembers:
                await remember.set(f"note{k}", VALUE, scope="user")
        del remember
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        kept = sum([len(await r.list(scope="user")) for r in remembers[:10]]) * (owners // 10)
    return {"values": total, "kept_checked": kept, "bytes_per_value": (after - before) / total}


class PrivateRedis:
    """A redis-server of the bench's own on 127.0.0.1 (free port, no persistence), stopped by PID.

    The machine's shared Redis also serves other test suites, whose key-space SCANs both disturb
    these timings and slow down a lot once a million benchmark keys are in it; a private server
    keeps the micro-benchmarks clean and leaves the shared one alone.
    """

    def __init__(self, folder: Path, cpu: int) -> None:
        self.folder = folder
        self.cpu = cpu
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""

    def start(self) -> str | None:
        binary = shutil.which("redis-server")
        if binary is None:
            return None
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        command, _ = pinned(self.cpu, [binary])
        command += ["--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"]
        command += ["--dir", str(self.folder), "--daemonize", "no", "--loglevel", "warning"]
        self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = f"redis://127.0.0.1:{port}/0"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if redis.Redis.from_url(self.url, socket_connect_timeout=0.2).ping():
                    return self.url
            except redis.ConnectionError:
                time.sleep(0.05)
        self.stop()
        return None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    global REDIS_URL
    prefix = f"mcpkit-bench:{os.getpid()}:{uuid.uuid4().hex[:8]}:"
    out: dict[str, Any] = {"redis_prefix": prefix}
    with tempfile.TemporaryDirectory(prefix="mcpkit-bench-") as folder:
        tmp = Path(folder)
        if "pairs" in args.only:
            # In-process timings first: with the private redis-server running, the same pair measured twice
            # as slow on this 2-core machine (15 vs 30 us), though redis was pinned to the other core.
            out["pairs"] = await set_get(tmp, prefix, args.quick, ("memory",))
        private = PrivateRedis(tmp, args.redis_cpu) if not args.shared_redis else None
        url = private.start() if private is not None else None
        if url is not None:
            REDIS_URL = url
            out["redis"] = f"a private redis-server on 127.0.0.1, pinned to core {args.redis_cpu}"
        else:
            out["redis"] = f"the shared Redis at {REDIS_URL}"
        try:
            if "pairs" in args.only:
                out["pairs"].update(await set_get(tmp, prefix, args.quick, ("sqlite", "redis")))
                with postgres_schema() as postgres:
                    if postgres is not None:
                        out["pairs"].update(await set_get(tmp, prefix, args.quick, ("postgres",)))
                out["call_profiles"] = await call_profiles(tmp)
            if "rtt" in args.only:
                out["round_trips"] = await redis_round_trips(tmp, prefix)
                with postgres_schema() as postgres:
                    if postgres is not None:
                        out["postgres_round_trips"] = await postgres_round_trips(tmp, prefix)
            if "memory" in args.only:
                out["memory"] = await memory_per_value(tmp, args.quick)
            if "list" in args.only:
                out["list"] = await list_scaling(tmp, prefix, args.quick)
        finally:
            out["redis_leftover_keys_cleaned"] = clean_redis(prefix)
            if private is not None:
                private.stop()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.micro")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="pairs,rtt,memory,list", type=lambda s: set(s.split(",")))
    parser.add_argument("--cpu", type=int, default=None)
    parser.add_argument("--redis-cpu", type=int, default=1, help="core for the private redis-server")
    parser.add_argument("--shared-redis", action="store_true", help="use BENCH_REDIS_URL instead of a private one")
    args = parser.parse_args(argv)
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    json.dump(asyncio.run(run(args)), sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
