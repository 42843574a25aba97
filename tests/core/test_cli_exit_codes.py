"""``mcpkit remember ...``: a configuration mistake is one line and exit code 2; a store that fails is exit code 1.

The same rule as ``mcpkit run``: 2 says "change how you called it", 1 says "something it needs is not
there right now". Each case runs the real command in a subprocess, with no ``REMEMBER_*`` variable inherited.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SECRET = "a-secret-long-enough-0123456789"


def remember(tmp_path: Path, *args: str, secret: str | None = SECRET) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("REMEMBER_")}
    if secret is not None:
        env["REMEMBER_SECRET"] = secret
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", "remember", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
    return lines[0]


@pytest.mark.parametrize(
    ("args", "secret", "said"),
    [
        (["rotate", "--store", "mongodb://db/x"], SECRET, "mcpkit remember: Unknown store 'mongodb://db/x': use"),
        (["rotate", "--store", "memory"], SECRET, "mcpkit remember: The memory store lives inside one server process"),
        (["rotate", "--store", "redis://127.0.0.1:9/0"], None, "mcpkit remember: Set REMEMBER_SECRET to the secret"),
        (["purge", "--store", "redis://127.0.0.1:9/0", "--user", "u"], "short", "mcpkit remember: REMEMBER_SECRET "),
        (["rotate", "--store", "redis://127.0.0.1:port/0"], SECRET, "mcpkit remember: The store URL for Redis at "),
        (
            ["rotate", "--store", "redis://127.0.0.1:9/0", "--redis-prefix", "{tag}:"],
            SECRET,
            "mcpkit remember: RedisStore prefix '{tag}:' must not contain",
        ),
        (["rotate", "--store", "sqlite:///remember.db"], None, "mcpkit remember: Set REMEMBER_SECRET to the secret"),
    ],
    ids=["unknown-store", "memory-store", "no-secret", "short-secret", "port-not-a-number", "prefix", "no-file"],
)
def test_a_configuration_mistake_is_one_line_and_exit_code_2(
    tmp_path: Path, args: list[str], secret: str | None, said: str
) -> None:
    done = remember(tmp_path, *args, secret=secret)

    assert done.returncode == 2, done.stderr
    assert one_line(done).startswith(said)


@pytest.mark.parametrize("kind", ["directory", "symbolic link"])
def test_a_secret_file_that_cannot_be_used_is_one_line_and_exit_code_2(tmp_path: Path, kind: str) -> None:
    secret_file = tmp_path / "remember.db.secret"
    if kind == "directory":
        secret_file.mkdir()
    else:
        (tmp_path / "elsewhere").write_text(SECRET)
        secret_file.symlink_to(tmp_path / "elsewhere")

    done = remember(tmp_path, "rotate", "--store", "sqlite:///remember.db", secret=None)

    assert done.returncode == 2, done.stderr
    assert one_line(done).startswith("mcpkit remember: The secret file remember.db.secret is ")


def test_a_store_that_cannot_be_reached_is_one_line_and_exit_code_1(tmp_path: Path) -> None:
    done = remember(tmp_path, "rotate", "--store", "redis://127.0.0.1:9/0")

    assert done.returncode == 1, done.stderr
    assert one_line(done).startswith("mcpkit remember: Redis at redis://127.0.0.1:9/0 ")


def test_a_sqlite_store_in_a_missing_directory_is_exit_code_1(tmp_path: Path) -> None:
    done = remember(tmp_path, "purge", "--store", "sqlite:///nowhere/remember.db", "--user", "u")

    assert done.returncode == 1, done.stderr
    assert one_line(done).startswith("mcpkit remember: Cannot open the SQLite remember store at 'nowhere/remember.db'")


def test_a_working_command_exits_0(tmp_path: Path) -> None:
    done = remember(tmp_path, "purge", "--store", "sqlite:///remember.db", "--user", "u")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "SQLite at remember.db: deleted 0 values kept under user id 'u'\n"
