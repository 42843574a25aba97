"""What each reliability test measured, gathered into one JSON file that ``page.py`` turns into docs/reliability.md.

A test asks for the ``figures`` fixture and records its numbers with
``figures.record(callers=64, calls=6400, lost=0, leaks=0)``. The columns are
fixed (``COLUMNS``) so the page's table stays one table; ``detail`` is free
text for what the numbers alone don't say. Recording is not asserting: a test
asserts its zeros itself and records what it saw.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
REPORT_ENV = "MCPKIT_RELIABILITY_REPORT"
DEFAULT_REPORT = ROOT / "build" / "reliability.json"
COLUMNS = ("callers", "calls", "faults", "inputs", "lost", "leaks", "internal_errors")


def report_path() -> Path:
    """Where this run writes its figures (env ``MCPKIT_RELIABILITY_REPORT``, else build/reliability.json)."""
    configured = os.environ.get(REPORT_ENV)
    return Path(configured) if configured else DEFAULT_REPORT


class Figures:
    """The numbers one test recorded; several ``record`` calls add up (counts) or overwrite (detail)."""

    def __init__(self, nodeid: str) -> None:
        self.nodeid = nodeid
        self.numbers: dict[str, int] = {}
        self.detail = ""
        self.extra: dict[str, Any] = {}

    def record(self, *, detail: str | None = None, **numbers: int) -> None:
        """Add ``numbers`` (columns of ``COLUMNS``) to this test's row; ``detail`` replaces the row's note."""
        unknown = set(numbers) - set(COLUMNS)
        if unknown:
            raise ValueError(f"unknown figure(s) {sorted(unknown)}; the columns are {COLUMNS}")
        for name, value in numbers.items():
            self.numbers[name] = self.numbers.get(name, 0) + int(value)
        if detail is not None:
            self.detail = detail

    def attach(self, name: str, value: Any) -> None:
        """Keep a JSON-able value beside the row (the conformance results use it)."""
        self.extra[name] = value


class Run:
    """Every recorded test of one pytest run, with its outcome and duration."""

    def __init__(self) -> None:
        self.tests: dict[str, Figures] = {}
        self.outcomes: dict[str, tuple[str, float]] = {}

    def figures_for(self, nodeid: str) -> Figures:
        return self.tests.setdefault(nodeid, Figures(nodeid))

    def write(self, path: Path) -> None:
        rows = []
        for nodeid, figures in sorted(self.tests.items()):
            outcome, seconds = self.outcomes.get(nodeid, ("unknown", 0.0))
            rows.append(
                {
                    "test": nodeid,
                    "outcome": outcome,
                    "seconds": round(seconds, 2),
                    "figures": figures.numbers,
                    "detail": figures.detail,
                    "extra": figures.extra,
                }
            )
        document = {
            "when": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": _commit(),
            "ci": os.environ.get("CI", "").lower() == "true",
            "python": platform.python_version(),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "tests": rows,
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def _commit() -> str:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=5, check=False
        )
    except OSError:
        return "unknown"
    return done.stdout.strip() or "unknown"
