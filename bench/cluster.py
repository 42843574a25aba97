"""``python -m bench.cluster``: ``self.remember`` on a real Redis Cluster, beside the one-node Redis rows.

Starts the same cluster the tests do (``tests/redis_cluster_fixtures.Cluster``: three primaries and three
replicas of the installed ``redis-server`` on spare loopback ports, stopped by PID afterwards) and measures,
through the public ``Remember`` API of a started plugin (encryption on): a set+get pair and an increment,
without and with ``wait=1`` (each write waits until a replica has it), and the round trips of each operation.
Prints one JSON document; without ``redis-server``/``redis-cli`` it says so instead.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

from bench.micro import VALUE, Bench, per_call_us
from bench.round_trips import SendCounter, per_operation
from mcpkit_remember import Remember

__all__ = ["main"]

ROOT = Path(__file__).resolve().parents[1]


def _cluster_class() -> Any:
    sys.path.insert(0, str(ROOT / "tests"))
    from redis_cluster_fixtures import Cluster

    return Cluster


async def pairs(tmp: Path, url: str, quick: bool) -> dict[str, Any]:
    number, repeat = (100, 3) if quick else (200, 7)
    out: dict[str, Any] = {}
    for label, suffix in (("redis-cluster", ""), ("redis-cluster wait=1", "?wait=1")):
        async with Bench("redis-cluster", tmp, f"mcpkit-bench:{uuid.uuid4().hex[:8]}:", url=url + suffix) as bench:
            remember = bench.remember()

            async def pair(remember: Remember = remember) -> None:
                await remember.set("note", VALUE, scope="user")
                await remember.get("note", scope="user")

            async def increment(remember: Remember = remember) -> None:
                await remember.increment("hits", scope="user")

            out[f"set+get {label}"] = await per_call_us(pair, number, repeat)
            out[f"increment {label}"] = await per_call_us(increment, number, repeat)
    return out


async def round_trips(tmp: Path, url: str) -> dict[str, Any]:
    """Writes on a connection per operation (a command or a pipeline each), as for the one-node Redis."""
    async with Bench("redis-cluster", tmp, f"mcpkit-bench:{uuid.uuid4().hex[:8]}:", url=url) as bench:
        rows = await per_operation(bench.remember("rt-user"), SendCounter, names=_COMPARED)
    return {name: row["round_trips"] for name, row in rows.items()}


_COMPARED = ("set", "get", "forget", "increment", "list")


async def run(args: argparse.Namespace) -> dict[str, Any]:
    if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
        return {"skipped": "redis-server and redis-cli are not installed"}
    with tempfile.TemporaryDirectory(prefix="mcpkit-bench-cluster-") as folder:
        cluster = _cluster_class()(Path(folder) / "cluster")
        cluster.start()
        try:
            return {
                "cluster": "3 primaries + 3 replicas of redis-server on 127.0.0.1 (node timeout 1 s)",
                "pairs": await pairs(Path(folder), cluster.url, args.quick),
                "round_trips": await round_trips(Path(folder), cluster.url),
            }
        finally:
            cluster.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cluster")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    json.dump(asyncio.run(run(args)), sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
