"""Every page of docs/ that shows files runs as copied (issue 36): the files are written into an empty folder, as a
reader saves them, and plain ``pytest`` runs there in a new process, with no configuration file, no command-line
option and no environment of the project's own (a shell's ``REMEMBER_STORE`` included): every test they define
passes, in both protocol eras, and pytest has nothing to warn about.

A ```python block whose first line is ``# conftest.py``, ``# test_<name>.py`` or another ``# <name>.py`` is (part
of) that file; blocks naming the same file are joined in order. test_examples.py executes every block (so these
define their tests); this runs them as a reader would.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from docs.test_examples import DOCS, README, files_of

PAGES_WITH_FILES = [page for page in [README, *sorted(DOCS.rglob("*.md"))] if files_of(page)]
#: What a reader's shell has that this suite's own runs do not: nothing of the project's pytest setup.
_LEFT_OUT = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "REMEMBER_STORE", "REMEMBER_SECRET", "HELPDESK_KEYS")


def pytest_command() -> list[str]:
    """The ``pytest`` a reader types: the script beside this interpreter (the same environment)."""
    script = Path(sys.executable).parent / "pytest"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "pytest"]


def test_the_quickstart_the_testing_page_and_the_tasks_page_show_files() -> None:
    assert {page.name for page in PAGES_WITH_FILES} >= {"quickstart.md", "testing.md", "tasks.md"}


@pytest.mark.parametrize("page", PAGES_WITH_FILES, ids=lambda p: p.name)
def test_a_page_that_shows_files_shows_tests_of_them(page: Path) -> None:
    assert any(name.startswith("test_") for name in files_of(page)), (
        f"{page.name} shows files ({', '.join(f'{name}.py' for name in files_of(page))}) and no test_*.py: show "
        "how to test them (docs/testing.md), so that a reader sees them run and this suite runs them as copied"
    )


@pytest.mark.parametrize("page", PAGES_WITH_FILES, ids=lambda p: p.name)
def test_the_files_a_page_shows_pass_with_plain_pytest_in_an_empty_folder(page: Path, tmp_path: Path) -> None:
    files = files_of(page)
    for name, source in files.items():
        (tmp_path / f"{name}.py").write_text(source)
    defined = sum(len(re.findall(r"^async def test_|^def test_", source, re.MULTILINE)) for source in files.values())
    environment = {name: value for name, value in os.environ.items() if name not in _LEFT_OUT}

    done = subprocess.run(
        pytest_command(), cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=300, check=False
    )

    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    summary = done.stdout.strip().splitlines()[-1]
    passed = re.search(r"(\d+) passed", summary)
    assert passed is not None, done.stdout[-2000:]
    assert int(passed.group(1)) >= defined, f"{defined} tests on the page, {passed.group(1)} passed"
    assert "warning" not in summary, done.stdout[-4000:]
    assert done.stderr == "", done.stderr[-2000:]
    assert sorted(path.name for path in tmp_path.glob("*.db*")) == []  # no store but memory was reached
