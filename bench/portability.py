"""``python -m bench.portability``: ``mcpkit remember export`` and ``import`` speed on SQLite, and the export's memory.

Prints one JSON document, for two stores of ``VALUES`` searchable values (100 owners, text of about 100 characters):
the default shape, each value with its change history (as a default ``RememberPlugin``, ``history=3``, writes it),
and under ``values_only`` the same values without histories (as a plugin with ``history=0`` writes them):

- export: values per second (values only: a history is a record beside its value, counted in ``histories``), the
  store written to a sealed file (key file) and to a plaintext one;
- import: values per second of that sealed file into a new SQLite store, each value with its search postings made
  anew (as a ``RememberPlugin(search=True)`` store keeps them), also per second of this process's CPU (what a busy
  machine moves least) with its split between the event loop and the store's worker thread, and of the same file
  again (every value already there), per second and per CPU-second;
- memory: the peak RSS of a process that exports a store of ``LARGE`` values (``--large``), against the same
  process's RSS before the export: flat means it does not grow with the store (``--memory-only``: this part alone).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

from bench.portability_fill import fill, fill_large
from bench.tokens import REMEMBER_SECRET
from mcpkit_storage import Keyring
from mcpkit_storage.portability import SealingKey, export_memory, frozen_heap, import_memory
from mcpkit_storage.stores.sqlite._sqlite_store import SQLiteStore

__all__ = ["main"]

VALUES = 20_000
LARGE = 1_000_000


async def export_to(path: Path, out: Path, *, sealed: bool) -> tuple[int, float]:
    store = SQLiteStore(path, create=False)
    await store.open()
    key = SealingKey.key_file(out.with_suffix(".key")) if sealed else None
    started = time.perf_counter()
    with out.open("wb") as file, frozen_heap():  # as the command runs it
        report = await export_memory(store, Keyring([REMEMBER_SECRET]), file, key=key, plaintext=not sealed)
    seconds = time.perf_counter() - started
    await store.close()
    return report.exported, seconds


class Imported(NamedTuple):
    """Records imported, records already there, and the import's seconds: wall, CPU (every thread of this process),
    and the event loop's CPU alone (the rest is the SQLite store's worker thread's)."""

    imported: int
    unchanged: int
    seconds: float
    cpu: float
    loop_cpu: float


async def import_from(file: Path, path: Path) -> Imported:
    store = SQLiteStore(path)
    await store.open()
    started, cpu, loop = time.perf_counter(), time.process_time(), time.thread_time()
    with file.open("rb") as lines, frozen_heap():  # as the command runs it
        report = await import_memory(
            store, Keyring([REMEMBER_SECRET]), lines, key=SealingKey.key_file(file.with_suffix(".key"))
        )
    seconds, cpu, loop = time.perf_counter() - started, time.process_time() - cpu, time.thread_time() - loop
    await store.close()
    return Imported(report.imported, report.unchanged, seconds, cpu, loop)


def peak_rss_mb() -> float:
    """This process's own peak resident set (MB): ``VmHWM`` from /proc, not ``ru_maxrss``, which in a process a
    Python parent started also counts the parent's peak (spawned by ``vfork``, the exec keeps the parent's high-water
    mark as this process's ``maxrss``), so it read the bench's own fills and imports as the export's memory."""
    with open("/proc/self/status") as status:
        return int(status.read().split("VmHWM:")[1].split()[0]) / 1000  # kB


def rss_mb() -> float:
    """This process's resident set now (MB), from /proc."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


async def speeds(tmp: Path, count: int, *, histories: bool) -> dict[str, Any]:
    """Fill a store (through the vault, with postings: as servers write them), export it sealed and in plaintext,
    import the sealed file into a new store, then again."""
    folder = tmp / ("histories" if histories else "values-only")
    folder.mkdir()
    source = folder / "source.db"
    filled = await fill(source, count, histories=histories)
    (folder / "sealed.key").write_bytes(os.urandom(32))
    exported, sealed_s = await export_to(source, folder / "sealed.jsonl", sealed=True)
    _, plain_s = await export_to(source, folder / "plain.jsonl", sealed=False)
    first = await import_from(folder / "sealed.jsonl", folder / "target.db")
    again = await import_from(folder / "sealed.jsonl", folder / "target.db")
    records = count * (2 if histories else 1)
    assert exported == first.imported == again.unchanged == records, (exported, first, again, records)
    return {
        "values": count,
        "histories": records - count,
        "fill_values_per_s": count / filled,
        "export_sealed_values_per_s": count / sealed_s,
        "export_plaintext_values_per_s": count / plain_s,
        "import_indexed_values_per_s": count / first.seconds,
        "import_indexed_values_per_cpu_s": count / first.cpu,
        # the two threads' shares (both Python under one GIL: the wall time comes near their sum)
        "import_indexed_loop_cpu_s": first.loop_cpu,
        "import_indexed_store_thread_cpu_s": first.cpu - first.loop_cpu,
        "import_again_values_per_s": count / again.seconds,
        "import_again_values_per_cpu_s": count / again.cpu,
        "file_bytes_per_value": (folder / "sealed.jsonl").stat().st_size / count,
    }


def memory(tmp: Path, count: int) -> dict[str, Any]:
    """Fill a store of ``count`` values, then export it in a process of its own that reports its RSS."""
    source = tmp / "large.db"
    filled = fill_large(source, count)
    (tmp / "large.key").write_bytes(os.urandom(32))
    done = subprocess.run(
        [sys.executable, "-m", "bench.portability", "--export-rss", str(source), str(tmp / "large.jsonl")],
        capture_output=True,
        text=True,
        check=True,
    )
    return {"values": count, "fill_s": filled, **json.loads(done.stdout)}


async def export_rss(source: Path, out: Path) -> dict[str, Any]:
    before = rss_mb()  # the interpreter, the mcp SDK and mcpkit, imported
    exported, seconds = await export_to(source, out, sealed=True)
    peak = peak_rss_mb()
    return {
        "exported": exported,
        "export_values_per_s": exported / seconds,
        "rss_before_mb": before,
        "rss_peak_mb": peak,
        "rss_growth_mb": peak - before,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.portability", description=__doc__)
    parser.add_argument("--cpu", type=int, default=None)
    parser.add_argument("--quick", action="store_true", help=f"{VALUES // 10:,} values, and no large export")
    parser.add_argument(
        "--large", type=int, default=LARGE, help=f"values of the memory run (default {LARGE:,}; 0: none)"
    )
    parser.add_argument("--histories-only", action="store_true", help="skip the values-only store")
    parser.add_argument(
        "--memory-only", action="store_true", help="only the memory run (a store of --large values, exported)"
    )
    parser.add_argument("--export-rss", nargs=2, metavar=("DB", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    if args.export_rss:
        result = asyncio.run(export_rss(Path(args.export_rss[0]), Path(args.export_rss[1])))
    else:
        with tempfile.TemporaryDirectory(prefix="mcpkit-bench-portability-") as folder:
            tmp = Path(folder)
            count = VALUES // 10 if args.quick else VALUES
            result: dict[str, Any] = {}
            if not args.memory_only:
                result = asyncio.run(speeds(tmp, count, histories=True))
                if not args.histories_only:
                    result["values_only"] = asyncio.run(speeds(tmp, count, histories=False))
            if args.memory_only or (not args.quick and args.large):
                result["memory"] = memory(tmp, args.large)
    json.dump(result, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
