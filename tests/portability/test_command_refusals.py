"""Issue 39 (review), item 3: ``mcpkit remember import`` refuses a negative quota before it starts, and an error of
the store's or of other writers during a command is one line with its exit code, never a traceback."""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mcpkit_storage import Keyring, RememberConflictError
from mcpkit_storage._cli import _execute
from mcpkit_storage.stores._store import Store
from portability.test_commands import SECRET, remember
from portability.test_crafted_files import NOUR, crafted, value_record


def imported_with(tmp_path: Path, *quota: str) -> subprocess.CompletedProcess[str]:
    """``mcpkit remember import`` of a one-value plaintext file into a new SQLite store, with ``quota``'s flags."""
    file = tmp_path / "one.jsonl"
    file.write_bytes(crafted(value_record(NOUR, "user", "k", "kept")))
    store = f"sqlite:///{tmp_path / 'new.db'}"
    return remember("import", "--store", store, str(file), "--plaintext", "--create", *quota, secret=SECRET)


@pytest.mark.parametrize("flag", ["--max-values", "--max-bytes"])
def test_a_negative_quota_is_refused_before_anything_is_read(tmp_path: Path, flag: str) -> None:
    done = imported_with(tmp_path, flag, "-1")

    assert done.returncode == 2
    assert f"argument {flag}: -1 is negative: a quota is a limit of 0 or more" in done.stderr
    assert not (tmp_path / "new.db").exists()


def test_a_quota_of_zero_or_more_is_taken(tmp_path: Path) -> None:
    done = imported_with(tmp_path, "--max-values", "10")

    assert done.returncode == 0, done.stderr
    assert "imported 1 values" in done.stdout
    assert "10 values" in done.stdout


@pytest.mark.parametrize(
    ("error", "code", "line"),
    [
        (RememberConflictError("line 12", 16), 1, "changed under 16 attempts to update it; too many writers"),
        (ValueError("RedisStore bucket 'user:x' must not contain ':'"), 2, "must not contain ':'"),
    ],
)
def test_an_error_during_a_command_is_one_line_with_its_exit_code(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    error: Exception,
    code: int,
    line: str,
) -> None:
    monkeypatch.setenv("REMEMBER_SECRET", SECRET)
    args = argparse.Namespace(store=f"sqlite:///{tmp_path / 'made.db'}", redis_prefix="mcpkit:remember:", create=True)

    async def failing(store: Store, keyring: Keyring) -> Any:
        await store.notes()  # the store is open and answers: the failure is the action's own
        raise error

    assert _execute(args, failing) == code
    err = capsys.readouterr().err
    assert err.startswith("mcpkit remember: ")
    assert err.count("\n") == 1
    assert "Traceback" not in err
    assert line.lower() in err.lower(), json.dumps(err)
