"""Instructions per ``tools/call`` in each server's own ASGI app, counted by callgrind.

Wall-clock and CPU-time figures on a shared two-core machine move by tens of percent
from run to run; an instruction count does not (valgrind counts what the program
executes, whatever else the machine is doing). Each server runs ``bench.asgi_driver``
twice under ``valgrind --tool=callgrind``, counting only its ``FEW`` and ``MANY``
measured calls; the difference divided by ``MANY - FEW`` is the cost of one call, with
the constant cost of switching the count on and off taken out.
uvicorn and h11 are left out (the driver calls the app directly), so these are the
parts in which the servers differ.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench.cases import ServerSpec
from bench.procs import ROOT, child_env

__all__ = ["CASES", "FEW", "MANY", "available", "count_all", "countable_specs", "per_call"]

FEW, MANY = 50, 250
#: Counted only here, not under load: mcpkit signing callers in with a JWT, and as an OAuth protected resource.
GATE_CASES = ("mcpkit-jwt", "mcpkit-oauth", "mcpkit-oauth-partial")
#: Cases measured (names as in bench.cases); each needs only in-process state.
CASES = ("floor", "sdk", "sdk-json", "fastmcp", "mcpkit-memory", "mcpkit-memory-alt", *GATE_CASES)
_COLLECTED = re.compile(rb"Collected : (\d+)")


def available() -> bool:
    return shutil.which("valgrind") is not None and shutil.which("callgrind_control") is not None


def _instructions(spec: ServerSpec, calls: int, env: dict[str, str], extra: list[str]) -> int:
    command = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        "--instr-atstart=no",
        sys.executable,
        "-m",
        "bench.asgi_driver",
        spec.kind,
        json.dumps(spec.options),
        str(calls),
        "--callgrind-toggle",
        *extra,
    ]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, timeout=1800, check=False)
    found = _COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"{spec.name}: callgrind run failed ({done.returncode}): {done.stderr[-800:]!r}")
    return int(found.group(1))


def per_call(spec: ServerSpec, *, env: dict[str, str] | None = None, extra: list[str] | None = None) -> dict[str, Any]:
    """Instructions per call of ``spec`` (``env``: the driver's environment; ``extra``: its options, like an era)."""
    env, extra = env or child_env(), extra or []
    few, many = _instructions(spec, FEW, env, extra), _instructions(spec, MANY, env, extra)
    return {"instructions_per_call": (many - few) / (MANY - FEW), "calls": [FEW, MANY], "totals": [few, many]}


def count_all(specs: dict[str, ServerSpec], workers: int = 2) -> dict[str, Any]:
    """case -> instructions per call (two cases at a time: callgrind's counts do not depend on sharing a core)."""
    wanted = [name for name in CASES if name in specs]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        counted = dict(zip(wanted, pool.map(lambda name: per_call(specs[name]), wanted), strict=True))
    return counted


def countable_specs() -> dict[str, ServerSpec] | None:
    """The bench's server cases to count, or None (said on stdout) where valgrind is missing."""
    import tempfile

    from bench.cases import server_specs

    if not available():
        print("valgrind and callgrind_control are needed (Debian's valgrind package)")
        return None
    return server_specs(tempfile.mkdtemp(prefix="mcpkit-bench-"), "redis://127.0.0.1:6379/0", "unused:")


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.instructions [--cases a,b] [--merge FILE]``: count, print, and merge into a results file."""
    import argparse
    from pathlib import Path

    parser = argparse.ArgumentParser(prog="python -m bench.instructions")
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated (default: every case)")
    parser.add_argument("--merge", metavar="JSON", help="update this results file's instruction counts with these")
    args = parser.parse_args(argv)
    specs = countable_specs()
    if specs is None:
        return 3
    counted = count_all({name: specs[name] for name in args.cases.split(",")})
    print(json.dumps(counted, indent=1))
    if args.merge:
        path = Path(args.merge)
        results = json.loads(path.read_text())
        results.setdefault("instructions", {}).update(counted)
        path.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
