"""``python -m bench.revisions --base REV``: one case's instructions per plain call, at REV and now, in both eras.

What a change costs the plain tool call, measured with one harness in one run: this checkout's ``bench`` drives
the same ASGI calls (``bench.asgi_driver``) into mcpkit as it was at ``REV`` (a temporary ``git worktree``, put
first on ``PYTHONPATH``) and as it is in the working tree, under callgrind (``bench.instructions``), in each
protocol era: 2026-07-28 requests, and calls inside 2025-11-25 sessions opened first. Instruction counts do not
move with the machine's load, so the two sides compare even when measured minutes apart.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.cases import ServerSpec
from bench.instructions import FEW, MANY, countable_specs, per_call
from bench.procs import ROOT
from bench.wire import LEGACY, PROTOCOL

__all__ = ["ERAS", "compare"]

ERAS = (PROTOCOL, LEGACY)
#: The packages a checkout's code lives in (what goes on PYTHONPATH for it).
_SOURCES = ("framework", "plugins", "apps")


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


@contextlib.contextmanager
def _checkout(revision: str) -> Iterator[Path]:
    """``revision`` in a temporary worktree (removed afterwards), with this checkout's compiled modules copied in."""
    place = Path(tempfile.mkdtemp(prefix="mcpkit-base-")) / "tree"
    _git("worktree", "add", "--detach", str(place), revision)
    try:
        for built in ROOT.glob("plugins/*/*.so"):  # built in place by the install; not tracked
            target = place / built.relative_to(ROOT)
            if target.parent.is_dir() and not target.exists():
                shutil.copy2(built, target)
        yield place
    finally:
        _git("worktree", "remove", "--force", str(place))
        shutil.rmtree(place.parent, ignore_errors=True)


def _environment(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    paths = [str(tree / source) for source in _SOURCES] + [str(ROOT)]  # the tree's mcpkit, this bench
    env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")])
    env["PYTHONUNBUFFERED"] = "1"
    return env


def compare(base: str, spec: ServerSpec) -> dict[str, Any]:
    """Instructions per call of ``spec`` at ``base`` and in the working tree, per era, with their ratio."""
    head = _git("rev-parse", "--short", "HEAD") + (" + uncommitted changes" if _git("status", "--porcelain") else "")
    with _checkout(base) as tree:
        jobs = [(side, era) for era in ERAS for side in ("before", "after")]
        trees = {"before": tree, "after": ROOT}

        def count(job: tuple[str, str]) -> dict[str, Any]:
            side, era = job
            return per_call(spec, env=_environment(trees[side]), extra=["--era", era])

        with ThreadPoolExecutor(max_workers=2) as pool:  # callgrind's counts do not depend on sharing a core
            counted = dict(zip(jobs, pool.map(count, jobs), strict=True))
    eras = {}
    for era in ERAS:
        before = counted["before", era]["instructions_per_call"]
        after = counted["after", era]["instructions_per_call"]
        eras[era] = {"before": before, "after": after, "ratio": after / before}
    return {
        "case": spec.name,
        "base": _git("rev-parse", "--short", base),
        "head": head,
        "calls": [FEW, MANY],
        "eras": eras,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.revisions", description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the git revision to compare with (a commit, tag or branch)")
    parser.add_argument("--case", default="mcpkit-memory", help="the bench case (default: %(default)s)")
    parser.add_argument("--merge", metavar="JSON", help="record the comparison in this results file (key 'revisions')")
    args = parser.parse_args(argv)
    specs = countable_specs()
    if specs is None:
        return 3
    if args.case not in specs:
        print(f"--case {args.case!r} is not a bench case: use one of {', '.join(sorted(specs))}")
        return 2
    compared = compare(args.base, specs[args.case])
    print(json.dumps(compared, indent=1))
    if args.merge:
        path = Path(args.merge)
        results = json.loads(path.read_text())
        results["revisions"] = compared
        path.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
