"""``python -m bench.tasks``: what the tasks extension costs a plain tool call, in callgrind instructions.

The same ``increment`` call (2026-07-28, memory store, static keys) on two servers: one without a task tool (the
extension is not served), and one with a task tool beside it whose client declares the extension on every request.
The call itself never becomes a task; the difference is what the extension adds to everything else. A third
server serves it to a client that does not declare it, and a fourth, without it, hears from a declaring client: the
server's share, apart from the client's longer envelope.
Writes ``bench/results/tasks.json``; the full run (``python -m bench``) measures the same and puts it on
docs/benchmarks.md; docs/tasks.md quotes it.
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.cases import ServerSpec
from bench.instructions import available, per_call

RESULTS = Path(__file__).resolve().parent / "results" / "tasks.json"
SPECS = {
    "off": ServerSpec("mcpkit-memory", "mcpkit", {"store": "memory"}),
    "on": ServerSpec("mcpkit-memory-tasks", "mcpkit", {"store": "memory", "tasks": True}),
    # A client declaring the extension to the server without it: what the longer envelope costs the SDK alone.
    "declared_off": ServerSpec("mcpkit-memory-declaring", "mcpkit", {"store": "memory", "declare": True}),
    # The server serves the extension, the client does not declare it: the server's share of the difference.
    "served": ServerSpec(
        "mcpkit-memory-tasks-undeclared", "mcpkit", {"store": "memory", "tasks": True, "declare": False}
    ),
}


def measure() -> dict[str, Any]:
    """Instructions per plain call on the three servers, and the two ratios to the server without the extension."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        counted = dict(zip(SPECS, pool.map(per_call, SPECS.values()), strict=True))
    off, on = counted["off"]["instructions_per_call"], counted["on"]["instructions_per_call"]
    served = counted["served"]["instructions_per_call"]
    declared = counted["declared_off"]["instructions_per_call"]
    return {**counted, "ratio": on / off, "served_ratio": served / off, "declared_ratio": on / declared}


def main() -> int:
    if not available():
        print("valgrind (callgrind) is not installed: apt-get install valgrind", file=sys.stderr)
        return 3
    summary = measure()
    off, on = summary["off"]["instructions_per_call"], summary["on"]["instructions_per_call"]
    served = summary["served"]["instructions_per_call"]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(summary, indent=2) + "\n")
    declared = summary["declared_off"]["instructions_per_call"]
    print(
        f"plain call: {off / 1e6:.4f} M instructions without the tasks extension, {on / 1e6:.4f} M with it"
        f" ({on / off:.4f} x); served, not declared: {served / 1e6:.4f} M ({served / off:.4f} x); declared to a"
        f" server without it: {declared / 1e6:.4f} M (with / without, both declared: {on / declared:.4f} x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
