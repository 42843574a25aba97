"""``python -m bench.set_cost --base REV``: instructions of one plain ``self.remember.set`` at REV and now.

What provenance (sealed with every value) and the change history cost a set, counted by callgrind as
``bench.revisions`` counts the plain call: the same 100-character user-scope set on the memory store, encryption on,
run ``FEW`` and ``MANY`` times after a warm-up with only the measured sets counted; the difference divided by
``MANY - FEW`` is one set. Measured at REV (a temporary worktree first on ``PYTHONPATH``) and in the working tree
twice: with the defaults (provenance alone, no change history) and with ``history=3`` (the opt-in history).
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
#: The change history measured as the opt-in (the default keeps none).
OPT_IN_HISTORY = 3
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


def _instrument(state: str) -> None:
    import os

    subprocess.run(["callgrind_control", "-i", state, str(os.getpid())], check=True, capture_output=True, timeout=600)


def _instructions(env: dict[str, str], calls: int, history: int | None) -> int:
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "--instr-atstart=no", sys.executable]
    command += ["-m", "bench.set_cost", "--child", str(calls), "--history", "" if history is None else str(history)]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, timeout=1800, check=False)
    found = _COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"callgrind run failed ({done.returncode}): {done.stderr[-800:]!r}")
    return int(found.group(1))


def compare(base: str) -> dict[str, Any]:
    """Instructions per set at ``base`` and now (the defaults, and with the opt-in history), with their ratios."""
    head = _git("rev-parse", "--short", "HEAD") + (" + uncommitted changes" if _git("status", "--porcelain") else "")
    with _checkout(base) as tree:
        jobs = [("before", tree, None), ("provenance", ROOT, None), ("provenance+history", ROOT, OPT_IN_HISTORY)]

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
        "history": OPT_IN_HISTORY,
        "instructions_per_set": counted,
        "ratios": {name: value / before for name, value in counted.items() if name != "before"},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.set_cost", description=__doc__.splitlines()[0])
    parser.add_argument("--base", help="the git revision to compare with")
    parser.add_argument("--merge", metavar="JSON", help="record the comparison in this results file (key 'set_cost')")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--history", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        asyncio.run(_drive(args.child, int(args.history) if args.history else None, toggle=True))
        return 0
    if not args.base:
        parser.error("--base REV is required")
    compared = compare(args.base)
    print(json.dumps(compared, indent=1))
    if args.merge:
        path = Path(args.merge)
        results = json.loads(path.read_text())
        results["set_cost"] = compared
        path.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
