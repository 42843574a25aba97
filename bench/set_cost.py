"""``python -m bench.set_cost --base REV``: instructions of one plain ``self.remember.set`` at REV and now.

What provenance (sealed with every value) and the change history cost a set, counted by callgrind as
``bench.revisions`` counts the plain call: the same 100-character user-scope set on the memory store, encryption on,
run ``FEW`` and ``MANY`` times after a warm-up with only the measured sets counted; the difference divided by
``MANY - FEW`` is one set. Measured at REV (a temporary worktree first on ``PYTHONPATH``) and in the working tree,
at REV with its defaults and with ``history=3``, and now with ``history=0`` and with the default ``history=3``.

Beside the instructions, the store calls one set makes (``store_calls``), at REV and now, with and without the
history: each store method call is one store call on SQLite (one trip to its worker thread), PostgreSQL (one
transaction, of one or more statements) and Redis (one script or pipeline).

``--wall``: instead, the wall time of one set on each store (``--stores``), history 0 and 3, at REV and now: the median
of ``WALL_SETS`` sets timed one by one after ``WALL_WARMUP`` (the servers at 127.0.0.1, as ``bench.micro`` finds them).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.procs import ROOT
from bench.revisions import _checkout, _environment, _git

__all__ = ["compare"]

FEW, MANY = 200, 1200
#: The change history measured (the default's).
HISTORY = 3
WALL_SETS, WALL_WARMUP = 600, 100
WALL_STORES = ("memory", "sqlite", "postgres", "redis")
_WARMUP = 300
_COLLECTED = re.compile(rb"Collected : (\d+)")


async def _drive(calls: int, history: int | None, toggle: bool) -> None:
    from bench.micro import VALUE, Bench

    with tempfile.TemporaryDirectory() as tmp:
        bench = Bench("memory", Path(tmp), "set-cost:")
        if history is not None:
            bench.plugin.history = history  # read when it starts; a revision without history ignores it
        async with bench:
            remember = bench.remember()
            for _ in range(_WARMUP):
                await remember.set("note", VALUE, scope="user")
            if toggle:
                _instrument("on")
            for _ in range(calls):
                await remember.set("note", VALUE, scope="user")
            if toggle:
                _instrument("off")


async def _wall(stores: list[str]) -> dict[str, float]:
    """The median wall time of one set (µs) on each store, with history 0 and 3 (a revision without history: 0)."""
    import statistics
    import time
    import uuid

    from bench.micro import VALUE, Bench, postgres_schema

    medians: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp, postgres_schema():
        for store in stores:
            for history in (0, HISTORY):
                bench = Bench(store, Path(tmp), f"set-wall-{uuid.uuid4().hex[:8]}:")
                bench.plugin.history = history
                async with bench:
                    remember = bench.remember(f"wall-{uuid.uuid4().hex[:8]}")
                    for _ in range(WALL_WARMUP):
                        await remember.set("note", VALUE, scope="user")
                    times = []
                    for _ in range(WALL_SETS):
                        start = time.perf_counter()
                        await remember.set("note", VALUE, scope="user")
                        times.append(time.perf_counter() - start)
                    await remember.forget("note", scope="user")
                medians[f"{store}/history={history}"] = round(statistics.median(times) * 1e6, 1)
    return medians


def walls(base: str, stores: list[str]) -> dict[str, Any]:
    """The median wall time of one set per store and history, at ``base`` and now (one after the other)."""
    head = _git("rev-parse", "--short", "HEAD") + (" + uncommitted changes" if _git("status", "--porcelain") else "")
    measured: dict[str, Any] = {"base": _git("rev-parse", "--short", base), "head": head, "sets": WALL_SETS}
    with _checkout(base) as tree:
        for side, where in (("before", tree), ("now", ROOT)):
            command = [sys.executable, "-m", "bench.set_cost", "--wall-child", *stores]
            done = subprocess.run(command, cwd=ROOT, env=_environment(where), capture_output=True, timeout=1800)
            if done.returncode != 0:
                raise RuntimeError(f"wall time run failed ({done.returncode}): {done.stderr[-800:]!r}")
            measured[side] = json.loads(done.stdout)
    return measured


def _instrument(state: str) -> None:
    import os

    subprocess.run(["callgrind_control", "-i", state, str(os.getpid())], check=True, capture_output=True, timeout=600)


async def _count_calls(history: int | None) -> dict[str, int]:
    """The store calls of one set (the tenth, after nine that made the key and its history), by method."""
    from bench.micro import VALUE, Bench

    counted: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        bench = Bench("memory", Path(tmp), "set-calls:")
        if history is not None:
            bench.plugin.history = history
        async with bench:
            remember = bench.remember()
            for _ in range(9):
                await remember.set("note", VALUE, scope="user")
            from mcpkit_storage.stores.memory import MemoryStore as store

            originals = {name: getattr(store, name) for name in _STORE_CALLS}

            def counting(name: str) -> Any:
                async def call(self: object, *args: Any, **kwargs: Any) -> Any:
                    counted[name] = counted.get(name, 0) + 1
                    return await originals[name](self, *args, **kwargs)

                return call

            for name in _STORE_CALLS:
                setattr(store, name, counting(name))
            try:
                await remember.set("note", VALUE, scope="user")
            finally:
                for name, original in originals.items():
                    setattr(store, name, original)
    return counted


#: The store methods a set may call.
_STORE_CALLS = ("get", "get_many", "put", "swap", "swap_many", "delete", "delete_many")


def _store_calls(env: dict[str, str], history: int | None) -> dict[str, int]:
    command = [sys.executable, "-m", "bench.set_cost", "--calls", "--history", "" if history is None else str(history)]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, timeout=600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"store call count failed ({done.returncode}): {done.stderr[-800:]!r}")
    counted: dict[str, int] = json.loads(done.stdout)
    return counted


def _instructions(env: dict[str, str], calls: int, history: int | None) -> int:
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "--instr-atstart=no", sys.executable]
    command += ["-m", "bench.set_cost", "--child", str(calls), "--history", "" if history is None else str(history)]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, timeout=1800, check=False)
    found = _COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"callgrind run failed ({done.returncode}): {done.stderr[-800:]!r}")
    return int(found.group(1))


def compare(base: str) -> dict[str, Any]:
    """Instructions per set at ``base`` (its default, and with a history) and now (no history, and the default's),
    with their ratios to ``base``'s default."""
    head = _git("rev-parse", "--short", "HEAD") + (" + uncommitted changes" if _git("status", "--porcelain") else "")
    with _checkout(base) as tree:
        jobs = [
            ("before", tree, None),
            ("before+history", tree, HISTORY),
            ("history=0", ROOT, 0),
            ("history=3 (default)", ROOT, HISTORY),
        ]
        calls = {name: _store_calls(_environment(where), history) for name, where, history in jobs}

        def per_set(job: tuple[str, Path, int | None]) -> float:
            _, where, history = job
            env = _environment(where)
            few, many = _instructions(env, FEW, history), _instructions(env, MANY, history)
            return (many - few) / (MANY - FEW)

        with ThreadPoolExecutor(max_workers=2) as pool:
            counted = dict(zip((job[0] for job in jobs), pool.map(per_set, jobs), strict=True))
    before = counted["before"]
    return {
        "base": _git("rev-parse", "--short", base),
        "head": head,
        "calls": [FEW, MANY],
        "history": HISTORY,
        "instructions_per_set": counted,
        "store_calls_per_set": {name: sum(each.values()) for name, each in calls.items()},
        "store_calls": calls,
        "ratios": {name: value / before for name, value in counted.items() if name != "before"},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.set_cost", description=__doc__.splitlines()[0])
    parser.add_argument("--base", help="the git revision to compare with")
    parser.add_argument("--merge", metavar="JSON", help="record the comparison in this results file (key 'set_cost')")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--history", default="", help=argparse.SUPPRESS)
    parser.add_argument("--calls", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--wall", action="store_true", help="wall time per set on each store instead (key 'set_wall')")
    parser.add_argument("--stores", nargs="+", default=list(WALL_STORES), help="the stores of --wall")
    parser.add_argument("--wall-child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.wall_child:
        print(json.dumps(asyncio.run(_wall(args.wall_child))))
        return 0
    if args.calls:
        print(json.dumps(asyncio.run(_count_calls(int(args.history) if args.history else None))))
        return 0
    if args.child is not None:
        asyncio.run(_drive(args.child, int(args.history) if args.history else None, toggle=True))
        return 0
    if not args.base:
        parser.error("--base REV is required")
    compared = walls(args.base, args.stores) if args.wall else compare(args.base)
    print(json.dumps(compared, indent=1))
    if args.merge:
        path = Path(args.merge)
        results = json.loads(path.read_text())
        results["set_wall" if args.wall else "set_cost"] = compared
        path.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
