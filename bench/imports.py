"""Import cost: ``python -X importtime`` of ``import mcpkit, mcpkit_remember`` against ``import mcp.server``.

Two measurements, alternating over several fresh interpreters pinned to one core:

- ``-X importtime`` of each statement on its own (sum of the top-level cumulative times); the
  extra is the difference of the best runs (timeit's convention: the least disturbed run).
- in one interpreter, ``import mcp.server`` first and then ``import mcpkit, mcpkit_remember``,
  timed with ``time.process_time()``: the CPU the second import adds, direct and robust to a busy machine
  (the target is judged on this); and the same under ``-X importtime`` for which modules it costs.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from typing import Any

from bench.procs import ROOT, pinned

__all__ = ["import_costs"]

BASELINE = "import mcp.server"
MCPKIT = "import mcpkit, mcpkit_remember"
_BOTH = (
    "import json, time\n"
    "w0, c0 = time.perf_counter(), time.process_time()\n"
    "import mcp.server\n"
    "w1, c1 = time.perf_counter(), time.process_time()\n"
    "import mcpkit, mcpkit_remember\n"
    "w2, c2 = time.perf_counter(), time.process_time()\n"
    "print(json.dumps([(w1 - w0) * 1e3, (c1 - c0) * 1e3, (w2 - w1) * 1e3, (c2 - c1) * 1e3]))\n"
)


def _importtime(statement: str, cpu: int) -> tuple[float, dict[str, tuple[int, int]]]:
    """(total ms of the top-level imports, module -> (self us, cumulative us)) of ``statement`` alone."""
    command, _ = pinned(cpu, [sys.executable, "-X", "importtime", "-c", statement])
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    modules: dict[str, tuple[int, int]] = {}
    total = 0
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative, name = line.removeprefix("import time:").split("|", 2)
        modules[name.strip()] = (int(self_us), int(cumulative))
        if not name[1:].startswith(" "):  # a top-level import (nested ones are indented)
            total += int(cumulative)
    return total / 1000, modules


_MARKED = "import mcp.server, sys\nsys.stderr.write('--mark--\\n')\nimport mcpkit, mcpkit_remember\n"


def _after_sdk_modules(cpu: int) -> tuple[float, list[tuple[str, int, int, int]]]:
    """-X importtime in one interpreter, of what ``import mcpkit, mcpkit_remember`` adds after ``mcp.server``.

    Returns (sum of top-level cumulative ms after the mark, [(module, depth, self us, cumulative us)]).
    """
    command, _ = pinned(cpu, [sys.executable, "-X", "importtime", "-c", _MARKED])
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    rows: list[tuple[str, int, int, int]] = []
    seen = False
    for line in done.stderr.splitlines():
        if line == "--mark--":
            seen = True
            continue
        if not seen or not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative, name = line.removeprefix("import time:").split("|", 2)
        depth = (len(name) - len(name.lstrip(" ")) - 1) // 2
        rows.append((name.strip(), depth, int(self_us), int(cumulative)))
    return sum(row[3] for row in rows if row[1] == 0) / 1000, rows


def _in_process(cpu: int) -> list[float]:
    """[mcp.server wall ms, its CPU ms, mcpkit-after-it wall ms, its CPU ms] in one interpreter."""
    command, _ = pinned(cpu, [sys.executable, "-c", _BOTH])
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    return list(json.loads(done.stdout))


def _compile_sources() -> None:
    """Write the bytecode a normal install has, so no run pays for compiling mcpkit's sources.

    (A shell with PYTHONDONTWRITEBYTECODE set never writes it on import, and every measurement would
    then include compiling the modules changed since the last write.)
    """
    folders = [str(ROOT / name) for name in ("framework", "plugins", "apps")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *folders], cwd=ROOT, capture_output=True, check=True)


def import_costs(runs: int, cpu: int) -> dict[str, Any]:
    _compile_sources()
    base_times, kit_times, direct = [], [], []
    for _ in range(runs):
        total, _ = _importtime(BASELINE, cpu)
        base_times.append(total)
        total, _ = _importtime(MCPKIT, cpu)
        kit_times.append(total)
        direct.append(_in_process(cpu))
    marked = [_after_sdk_modules(cpu) for _ in range(runs)]
    rows = marked[len(marked) // 2][1]
    groups = sorted((row for row in rows if row[1] <= 1), key=lambda row: row[3], reverse=True)[:12]
    costliest = sorted(rows, key=lambda row: row[2], reverse=True)[:12]
    return {
        "runs": runs,
        "baseline_ms": min(base_times),
        "mcpkit_ms": min(kit_times),
        "extra_ms": min(kit_times) - min(base_times),
        "baseline_median_ms": statistics.median(base_times),
        "mcpkit_median_ms": statistics.median(kit_times),
        "extra_median_ms": statistics.median(kit_times) - statistics.median(base_times),
        "after_sdk_cpu_ms": statistics.median(row[3] for row in direct),
        "after_sdk_cpu_min_ms": min(row[3] for row in direct),
        "after_sdk_wall_ms": statistics.median(row[2] for row in direct),
        "sdk_cpu_ms": statistics.median(row[1] for row in direct),
        "after_sdk_importtime_ms": statistics.median(total for total, _ in marked),
        "extra_modules": len(rows),
        "extra_self_ms": sum(row[2] for row in rows) / 1000,
        "costliest_extra": [{"module": row[0], "self_ms": row[2] / 1000} for row in costliest],
        "largest_groups": [{"module": row[0], "cumulative_ms": row[3] / 1000, "depth": row[1]} for row in groups],
    }
