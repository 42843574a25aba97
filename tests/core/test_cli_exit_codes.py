"""``mcpkit remember ...``: a configuration mistake is one line and exit code 2; a store that fails is exit code 1.

The same rule as ``mcpkit run``: 2 says "change how you called it", 1 says "something it needs is not
there right now" (a store that does not answer, or does not exist: said before any secret is asked for). Each
case runs the real command in a subprocess, with no ``REMEMBER_*`` variable inherited.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from mcpkit_storage.stores.sqlite._sqlite_store import SQLiteStore

SECRET = "a-secret-long-enough-0123456789"


@pytest.fixture
def store_file(tmp_path: Path) -> Path:
    """``remember.db`` in the test's directory, an empty store as a server leaves it."""
    store = SQLiteStore(tmp_path / "remember.db")
    anyio.run(store.open)
    anyio.run(store.close)
    return tmp_path / "remember.db"


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
        (["rotate", "--store", "sqlite:///remember.db"], None, "mcpkit remember: Set REMEMBER_SECRET to the secret"),
        (["purge", "--store", "sqlite:///remember.db", "--user", "u"], "short", "mcpkit remember: REMEMBER_SECRET "),
        (["rotate", "--store", "redis://127.0.0.1:port/0"], SECRET, "mcpkit remember: The store URL for Redis at "),
        (
            ["rotate", "--store", "redis://127.0.0.1:9/0", "--redis-prefix", "{tag}:"],
            SECRET,
            "mcpkit remember: RedisStore prefix '{tag}:' must not contain",
        ),
        (
            ["purge", "--store", "sqlite:///remember.db", "--key-label", "nour"],
            SECRET,
            "mcpkit remember: --key-label 'nour' needs --keys-from VARIABLE",
        ),
        (
            ["purge", "--store", "sqlite:///remember.db", "--user", "static:f646a459"],
            SECRET,
            "mcpkit remember: --user 'static:f646a459' is not a static key's user id",
        ),
        (
            ["purge", "--store", "sqlite:///remember.db", "--key-label", "nour", "--keys-from", "NOT_SET_ANYWHERE"],
            SECRET,
            "mcpkit remember: --keys-from NOT_SET_ANYWHERE: NOT_SET_ANYWHERE is not set here.",
        ),
    ],
    ids=[
        "unknown-store",
        "memory-store",
        "no-secret",
        "short-secret",
        "port-not-a-number",
        "prefix",
        "label-without-keys",
        "static-id-cut-short",
        "keys-variable-unset",
    ],
)
@pytest.mark.usefixtures("store_file")
def test_a_configuration_mistake_is_one_line_and_exit_code_2(
    tmp_path: Path, args: list[str], secret: str | None, said: str
) -> None:
    done = remember(tmp_path, *args, secret=secret)

    assert done.returncode == 2, done.stderr
    assert one_line(done).startswith(said)


@pytest.mark.parametrize("kind", ["directory", "symbolic link"])
@pytest.mark.usefixtures("store_file")
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
    assert one_line(done).startswith("mcpkit remember: There is no SQLite remember store at 'nowhere/remember.db'")
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("action", [["rotate"], ["reindex"], ["purge", "--user", "u"]])
def test_a_missing_sqlite_file_is_said_before_any_secret_is_asked_for_and_nothing_is_made(
    tmp_path: Path, action: list[str]
) -> None:
    done = remember(tmp_path, action[0], "--store", "sqlite:///missing.db", *action[1:], secret=None)

    assert done.returncode == 1, done.stderr
    said = one_line(done)
    assert said.startswith("mcpkit remember: There is no SQLite remember store at 'missing.db': no such file")
    assert str(tmp_path / "missing.db") in said  # where it looked: the path is relative to the current directory
    assert "REMEMBER_SECRET" not in said
    assert sorted(path.name for path in tmp_path.iterdir()) == []  # no database, no secret file


def test_a_sqlite_database_of_something_else_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "orders.db") as db:
        db.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY)")
    before = (tmp_path / "orders.db").read_bytes()

    done = remember(tmp_path, "reindex", "--store", "sqlite:///orders.db")

    assert done.returncode == 1, done.stderr
    assert one_line(done).startswith("mcpkit remember: The SQLite database at 'orders.db' holds no remember store")
    assert (tmp_path / "orders.db").read_bytes() == before  # not switched to WAL, no table added
    assert sorted(path.name for path in tmp_path.iterdir()) == ["orders.db"]


def test_a_postgresql_database_without_the_store_is_refused_and_gets_no_table(
    tmp_path: Path, postgres_url: str
) -> None:
    import psycopg

    done = remember(tmp_path, "purge", "--store", postgres_url, "--user", "u", secret=None)

    assert done.returncode == 1, done.stderr
    assert one_line(done).startswith("mcpkit remember: There is no remember store in PostgreSQL at ")
    with psycopg.connect(postgres_url) as conn:
        tables = conn.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")
        assert tables.fetchall() == []


def test_a_working_command_exits_0(tmp_path: Path, store_file: Path) -> None:
    done = remember(tmp_path, "rotate", "--store", "sqlite:///remember.db")

    assert done.returncode == 0, done.stderr
    *said_first, report = done.stdout.splitlines()
    assert said_first[0].startswith("This moves every value under the secret with key id")  # and what servers need
    assert report == (
        "SQLite at remember.db: rotated 0, already current 0, unreadable 0, expired 0 "
        "(the store holds no values: is it the one the servers use?)"
    )


def test_a_purge_that_finds_nothing_says_so_and_exits_3(tmp_path: Path, store_file: Path) -> None:
    done = remember(tmp_path, "purge", "--store", "sqlite:///remember.db", "--user", "nour")

    assert done.returncode == 3, done.stderr
    said = one_line(done)
    assert said.startswith("mcpkit remember: SQLite at remember.db: nothing is kept under user id 'nour'")
    assert "--key-label nour --keys-from VARIABLE" in said  # "nour" may be a static key's label
