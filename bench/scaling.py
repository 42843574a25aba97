"""``python -m bench.scaling``: the figures of docs/scaling.md, worked out from this project's own measurements.

Inputs: ``bench/results/capacity.json`` (``python -m bench.capacity --save``: bytes per value and per search
posting on each store, Redis CPU per write) and ``bench/results/latest.json`` (``python -m bench``: server CPU per
call of one mcpkit instance on one core). The plan's assumptions (users, values, calls per second, usable memory
per Redis primary, how busy a core may run) are the constants below; the page shows them beside the results.
The block between ``<!-- figures:start -->`` and ``<!-- figures:end -->`` is rewritten; the test suite checks that
the committed page equals this rendering of the committed results.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

__all__ = ["main", "render_block", "rewrite"]

ROOT = Path(__file__).resolve().parents[1]
CAPACITY = ROOT / "bench" / "results" / "capacity.json"
LATEST = ROOT / "bench" / "results" / "latest.json"
PAGE = ROOT / "docs" / "scaling.md"

USERS, VALUES_PER_USER, CALLS_PER_SECOND = 1_000_000, 100, 10_000
BIG_USERS = 100_000_000
#: Memory a Redis primary may fill with data (the rest for fragmentation, forks, buffers), in GB.
USABLE_GB_PER_PRIMARY = 25
#: How busy an instance core may run at peak.
CORE_TARGET = 0.7
GB = 1e9

_BLOCK = re.compile(r"(<!-- figures:start -->\n).*?(<!-- figures:end -->)", re.DOTALL)
_STORES = (("sqlite", "SQLite"), ("redis", "Redis"), ("redis-cluster", "Redis Cluster"), ("postgres", "PostgreSQL"))


def _gb(size: float) -> str:
    return f"{size / GB:,.0f} GB" if size >= 10 * GB else f"{size / GB:,.1f} GB"


def render_block(capacity: dict[str, Any], latest: dict[str, Any]) -> list[str]:
    values = USERS * VALUES_PER_USER
    lines = [
        f"Measured with `python -m bench.capacity` ({capacity['values']:,} values of about 100 characters, "
        f"{capacity['owners']} owners, written through `self.remember` with encryption on; "
        f"{capacity['postings_per_value']:.1f} search postings per value) and `python -m bench` at "
        f"{latest['meta']['commit']}.",
        "",
        "| store | bytes per value | with search | per search posting |",
        "|---|---:|---:|---:|",
    ]
    for store, name in _STORES:
        plain, searched = capacity.get(f"{store}/plain"), capacity.get(f"{store}/search")
        if plain and searched:
            posting = capacity[f"{store}/bytes_per_posting"]
            lines.append(
                f"| {name} | {plain['bytes_per_value']:,.0f} | {searched['bytes_per_value']:,.0f} | {posting:,.0f} |"
            )
    redis_cpu = capacity.get("redis/plain", {}).get("server_cpu_us_per_set")
    summary = latest["summary"]
    per_core = {
        case: 1000 / summary[case]["16"]["server_cpu_ms_per_call"]["median"]
        for case in ("mcpkit-memory", "mcpkit-redis", "mcpkit-sqlite")
        if case in summary
    }
    lines += [
        "",
        "Redis and Redis Cluster are memory (`used_memory` less client buffers and the replication backlog; a cluster"
        " node also keeps each key in its slot index), SQLite and PostgreSQL are disk (pages in use, after a checkpoint"
        " or `VACUUM`). A replica holds a second copy.",
        "",
        "| one instance on one core (`python -m bench`, 16 callers) | server CPU per call | calls/s per core |",
        "|---|---:|---:|",
    ]
    for case, rate in per_core.items():
        cpu = summary[case]["16"]["server_cpu_ms_per_call"]["median"]
        lines.append(f"| {case} | {cpu:.3f} ms | {rate:,.0f} |")
    if redis_cpu is not None:
        lines += ["", f"Redis itself spent {redis_cpu:.0f} µs of CPU per `set` (`INFO cpu` over the fill)."]

    rate = per_core.get("mcpkit-redis") or next(iter(per_core.values()))
    cores = math.ceil(CALLS_PER_SECOND / (rate * CORE_TARGET))
    lines += [
        "",
        f"### The plan: {USERS:,} users x {VALUES_PER_USER} values, {CALLS_PER_SECOND:,} calls/s",
        "",
        f"Assumptions: {values:,} values in all; every call touches the store; cores run at {CORE_TARGET:.0%} at"
        f" peak; a Redis primary fills {USABLE_GB_PER_PRIMARY} GB with data.",
        "",
        f"- **Instances:** {CALLS_PER_SECOND:,} calls/s / ({rate:,.0f} calls/s per core x {CORE_TARGET:.0%}) ="
        f" **{cores} cores** of mcpkit, e.g. {math.ceil(cores / 4)} instances of 4 cores behind the balancer,"
        " plus one for a failure.",
    ]
    if redis_cpu is not None:
        redis_cores = CALLS_PER_SECOND * redis_cpu / 1e6
        lines.append(
            f"- **Redis CPU:** {CALLS_PER_SECOND:,} writes/s x {redis_cpu:.0f} µs = {redis_cores:.1f} cores in all:"
            " a single primary's one thread keeps up; throughput is not what makes a cluster necessary."
        )
    for label, key in (("without search", "plain"), ("with search on every value", "search")):
        parts = []
        for store, name in _STORES[1:]:
            row = capacity.get(f"{store}/{key}")
            if row is None:
                continue
            total = values * row["bytes_per_value"]
            if store == "redis-cluster":
                primaries = math.ceil(total / (USABLE_GB_PER_PRIMARY * GB))
                parts.append(f"{name} {_gb(total)} = **{primaries} primaries** (+{primaries} replicas)")
            elif store == "redis" and total > USABLE_GB_PER_PRIMARY * GB:
                parts.append(f"one Redis node {_gb(total)} (more than a node holds)")
            else:
                parts.append(f"{name} {_gb(total)}")
        lines.append(f"- **Data, {label}:** " + "; ".join(parts) + ".")
    lines.append(
        f"- **Machines:** {math.ceil(cores / 4) + 1} application hosts of 4 cores; for the data, Redis Cluster hosts"
        f" with {USABLE_GB_PER_PRIMARY} GB of data each (a primary or a replica per host), or one PostgreSQL server"
        " whose disk holds the figure above with room to grow (its memory then caches the active users, not all)."
    )
    cluster, postgres = capacity.get("redis-cluster/plain"), capacity.get("postgres/plain")
    if cluster is not None and postgres is not None:
        big = BIG_USERS * VALUES_PER_USER * cluster["bytes_per_value"]
        on_disk = BIG_USERS * VALUES_PER_USER * postgres["bytes_per_value"]
        lines += [
            "",
            f"At {BIG_USERS:,} users the same values take {_gb(big)} in a Redis Cluster"
            f" ({math.ceil(big / (USABLE_GB_PER_PRIMARY * GB)):,} primaries) — memory, not calls, sets the size;"
            f" PostgreSQL would keep them in {_gb(on_disk)} of disk.",
        ]
    return lines


def rewrite(page: str, capacity: dict[str, Any], latest: dict[str, Any]) -> str:
    """``page`` with its figures block replaced by the rendering of these results."""
    block = "\n".join(render_block(capacity, latest)) + "\n"
    if not _BLOCK.search(page):
        raise ValueError("docs/scaling.md has no <!-- figures:start --> ... <!-- figures:end --> block")
    return _BLOCK.sub(lambda m: m.group(1) + block + m.group(2), page)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.scaling")
    parser.add_argument("--capacity", type=Path, default=CAPACITY)
    parser.add_argument("--results", type=Path, default=LATEST)
    args = parser.parse_args(argv)
    capacity = json.loads(args.capacity.read_text())
    latest = json.loads(args.results.read_text())
    PAGE.write_text(rewrite(PAGE.read_text(), capacity, latest))
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
