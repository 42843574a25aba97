"""The test files the docs show are real test suites: written out as files and run with pytest.

A ```python block whose first line is ``# conftest.py``, ``# test_<name>.py`` or another ``# <name>.py`` is
(part of) that file; blocks naming the same file are joined in order. test_examples.py executes every block (so these
define their tests); this runs them, fixtures and both protocol eras included, as a reader would.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from docs.test_examples import DOCS, files_of

_PYTEST_INI = "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"


SUITES = [page for page in sorted(DOCS.rglob("*.md")) if any(name.startswith("test_") for name in files_of(page))]


def test_the_quickstart_and_the_testing_page_show_test_suites() -> None:
    assert {page.name for page in SUITES} >= {"quickstart.md", "testing.md"}


@pytest.mark.parametrize("page", SUITES, ids=lambda p: p.name)
def test_the_test_files_a_page_shows_pass(page: Path, tmp_path: Path) -> None:
    files = files_of(page)
    for name, source in files.items():
        (tmp_path / f"{name}.py").write_text(source)
    (tmp_path / "pytest.ini").write_text(_PYTEST_INI)
    defined = sum(len(re.findall(r"^async def test_|^def test_", source, re.MULTILINE)) for source in files.values())

    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    passed = re.search(r"(\d+) passed", done.stdout)
    assert passed is not None, done.stdout[-2000:]
    assert int(passed.group(1)) >= defined, f"{defined} tests on the page, {passed.group(1)} passed"
