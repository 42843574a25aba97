"""ruff and mypy (strict) pass on the library packages, and ruff's formatting holds everywhere (tests, the bench and
the Python examples in docs/ too), so CI fails when they don't."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing() -> None:
    result = _run("ruff", "check", "framework", "plugins", "apps", "tests")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_applied() -> None:
    result = _run("ruff", "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_passes() -> None:
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr
