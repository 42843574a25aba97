"""``python -m bench.import_neighbours``: what an import into a SQLite store costs the store's other callers.

A server in another process keeps serving on the same SQLite file: a search of its own caller's values, a write of
one (searchable), and a search of a caller whose values the import brings (``user-0``'s, empty before it), pausing
5 ms after each round. Its latencies are measured alone, then while ``import_memory`` (what ``mcpkit remember
import`` runs) writes the bench's export (``bench.portability``'s default shape: 20,000 values, each with its change
history) into that file. Prints one JSON document: each phase's p50, p99 and worst, in milliseconds, per
operation, the calls that failed, and the import's values per second.

The other caller runs in an interpreter of its own (``--neighbour``: its own event loop and store instance, as
another server's); it says when its store is open, starts its next phase at each line on its standard input, and
stops when that closes.
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
from asyncio.subprocess import PIPE
from pathlib import Path
from statistics import quantiles
from typing import Any

from bench.portability import export_to, import_from
from bench.portability_fill import fill
from bench.search import WEIGHTS, WORDS
from bench.tokens import REMEMBER_SECRET
from mcpkit_storage import Keyring, Place, StoreUnavailableError, Vault, search
from mcpkit_storage.stores.sqlite._sqlite_store import SQLiteStore

__all__ = ["main"]

VALUES = 20_000
#: The other caller's own values, written before the measure.
OWN = 500
#: Seconds the other caller is measured alone, before the import.
ALONE_S = 5.0
#: Seconds the other caller's process may take to start, or to report once told to stop.
_STARTED_S = 120.0
_WORDS = ["oat", "milk", "invoice", "refund", "printer", "ticket", "banner", "signature", "draft", "laptop", "badge"]


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(12))


async def neighbour(path: Path) -> dict[str, Any]:
    """The other caller: search, then write, until standard input closes; each call's latency and the phase it fell
    in (a line on standard input starts the next phase)."""
    store = SQLiteStore(path)
    await store.open()
    vault = Vault(store, Keyring([REMEMBER_SECRET]), search_all=True)
    place, rng = Place(json.dumps(["u", "other-caller"]), "user"), random.Random(7)
    imported = Place(json.dumps(["u", "user-0"]), "user")  # a caller of the import's (bench.portability_fill)
    for number in range(OWN):
        await vault.write(place, f"own-{number}", json.dumps(_text(rng)), None, time.time(), None)
    phases: list[dict[str, list[float]]] = [{"search": [], "write": [], "search_imported": []}]
    failed: list[int] = [0]
    lines: asyncio.Queue[bytes] = asyncio.Queue()
    loop = asyncio.get_running_loop()
    loop.add_reader(sys.stdin.fileno(), lambda: lines.put_nowait(os.read(sys.stdin.fileno(), 64)))
    print("ready", flush=True)
    number = 0
    while True:
        while not lines.empty():
            if not lines.get_nowait():  # standard input closed: done
                loop.remove_reader(sys.stdin.fileno())
                await store.close()
                return {"phases": phases, "failed": failed}
            phases.append({"search": [], "write": [], "search_imported": []})
            failed.append(0)
        try:
            started = time.perf_counter()
            await search(vault, place, rng.choice(_WORDS), time.time(), 5)
            phases[-1]["search"].append(time.perf_counter() - started)
            started = time.perf_counter()
            await vault.write(place, f"own-{number % OWN}", json.dumps(_text(rng)), None, time.time(), None)
            phases[-1]["write"].append(time.perf_counter() - started)
            started = time.perf_counter()
            words = " ".join(rng.choices(WORDS, WEIGHTS, k=2))  # as the fill's text is drawn
            await search(vault, imported, words, time.time(), 5)
            phases[-1]["search_imported"].append(time.perf_counter() - started)
        except StoreUnavailableError:
            failed[-1] += 1
        number += 1
        await asyncio.sleep(0.005)  # a caller's pace, not a flood


def _summary(latencies: list[float]) -> dict[str, float]:
    if len(latencies) < 2:
        return {"calls": len(latencies)}
    cuts = quantiles(latencies, n=100, method="inclusive")
    return {
        "calls": len(latencies),
        "p50_ms": round(cuts[49] * 1000, 2),
        "p99_ms": round(cuts[98] * 1000, 2),
        "max_ms": round(max(latencies) * 1000, 2),
    }


async def measure(tmp: Path) -> dict[str, Any]:
    source, target = tmp / "source.db", tmp / "target.db"
    await fill(source, VALUES, histories=True)
    (tmp / "sealed.key").write_bytes(os.urandom(32))
    await export_to(source, tmp / "sealed.jsonl", sealed=True)
    made = SQLiteStore(target)  # the file and its schema, as a server's first start makes them
    await made.open()
    await made.close()
    other = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.import_neighbours", "--neighbour", str(target), stdin=PIPE, stdout=PIPE
    )
    assert other.stdin is not None
    assert other.stdout is not None
    try:
        if (await asyncio.wait_for(other.stdout.readline(), _STARTED_S)).strip() != b"ready":
            raise RuntimeError("the other caller's process did not start")
        await asyncio.sleep(ALONE_S)
        other.stdin.write(b"import\n")
        await other.stdin.drain()
        imported = await import_from(tmp / "sealed.jsonl", target)
        other.stdin.close()
        report = json.loads(await asyncio.wait_for(other.stdout.read(), _STARTED_S))
        await other.wait()
    finally:
        if other.returncode is None:  # this process failed first: end the other caller's
            other.kill()
            await other.wait()
    alone, during = report["phases"]
    return {
        "values": VALUES,
        "import_values_per_s": round(VALUES / imported.seconds),
        "alone": {op: _summary(times) for op, times in alone.items()} | {"failed": report["failed"][0]},
        "during_import": {op: _summary(times) for op, times in during.items()} | {"failed": report["failed"][1]},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.import_neighbours", description=__doc__)
    parser.add_argument("--neighbour", metavar="DB", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.neighbour:
        print(json.dumps(asyncio.run(neighbour(Path(args.neighbour)))))
        return 0
    with tempfile.TemporaryDirectory(prefix="mcpkit-bench-import-neighbours-") as folder:
        result = asyncio.run(measure(Path(folder)))
    json.dump(result, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
