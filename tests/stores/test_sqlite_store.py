"""What is particular to the SQLite store: several processes on one file, crashes, WAL, the worker thread."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from unittest.mock import ANY

import pytest

from mcpkit_storage.stores._store import Address, Entry, Quota, StoreUnavailableError
from mcpkit_storage.stores.sqlite import _sqlite_schema as sqlite_schema
from mcpkit_storage.stores.sqlite import _sqlite_store as sqlite_store
from mcpkit_storage.stores.sqlite._sqlite_store import SQLiteStore
from stores._counter import increment, read

OWNER = "0f3c9a1b2d4e5f60718293a4b5c6d7e8"

# A child process: bump a counter through its own SQLiteStore, or write values and wait to be killed.
CHILD = """
import asyncio, sys, time, types

# Import the store modules without the plugin package's __init__ (and the framework it pulls in):
# the children then start in milliseconds instead of seconds.
package = types.ModuleType("mcpkit_remember")
package.__path__ = [sys.argv[5]]
sys.modules["mcpkit_remember"] = package
from mcpkit_storage.stores.sqlite._sqlite_store import SQLiteStore
from stores._counter import increment

async def main(path, owner, action, count):
    store = SQLiteStore(path)
    await store.open()
    if action == "increment":
        print("ready", flush=True)
        sys.stdin.readline()  # start together with the other children
        await increment(store, owner, "counter", count, time.time())
        await store.close()
        return
    for number in range(count):
        await store.put(owner, "user", f"k{number}", b"%d" % number, None, time.time())
    print("written", flush=True)
    await asyncio.sleep(60)

asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
"""


def child(path: Path, action: str, count: int) -> subprocess.Popen[str]:
    tests = str(Path(__file__).resolve().parents[1])
    package = str(Path(sqlite_store.__file__).parent)
    command = [sys.executable, "-c", CHILD, str(path), OWNER, action, str(count), package]
    return subprocess.Popen(command, cwd=tests, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


async def test_two_stores_on_one_file_lose_no_increments(tmp_path: Path) -> None:
    path, now = tmp_path / "shared.db", time.time()
    first, second = SQLiteStore(path), SQLiteStore(path)
    await first.open()
    await second.open()
    try:
        racers = [increment(store, OWNER, "counter", 40, now) for store in (first, second) for _ in range(4)]
        lost = await asyncio.gather(*racers)
        assert await read(first, OWNER, "counter", now) == 8 * 40
        assert sum(lost) > 0
    finally:
        await first.close()
        await second.close()


async def test_two_processes_on_one_file_lose_no_increments(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    store = SQLiteStore(path)
    await store.open()  # create the schema before the children race on it
    try:
        children = [child(path, "increment", 150) for _ in range(2)]
        for process in children:
            assert process.stdout is not None
            assert process.stdout.readline().strip() == "ready"
        for process in children:
            assert process.stdin is not None
            process.stdin.write("go\n")
            process.stdin.flush()
        for process in children:
            assert process.wait(timeout=30) == 0
        assert await read(store, OWNER, "counter", time.time()) == 300
    finally:
        await store.close()


async def test_committed_writes_survive_kill_9_of_the_writer(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    writer = child(path, "write", 50)
    try:
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == "written"
    finally:
        writer.kill()  # SIGKILL, by the PID of the child this test started
        writer.wait(timeout=10)
    assert (tmp_path / "crash.db-wal").stat().st_size > 0, "the writes should still sit in the WAL"
    store = SQLiteStore(path)
    await store.open()
    try:
        now = time.time()
        for number in range(50):
            assert await store.get(OWNER, "user", f"k{number}", now) == Entry(b"%d" % number, None, ANY)
    finally:
        await store.close()


async def test_a_missing_directory_is_an_error_naming_the_path(tmp_path: Path) -> None:
    path = tmp_path / "no-such-dir" / "remember.db"
    with pytest.raises(StoreUnavailableError, match="no-such-dir") as raised:
        await SQLiteStore(path).open()
    assert str(path) in str(raised.value)
    assert not path.parent.exists()


async def test_the_file_is_in_wal_mode_with_a_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "remember.db"
    store = SQLiteStore(path)
    await store.open()
    await store.close()
    await store.open()  # creating the schema again is harmless
    await store.close()
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert raw.execute("PRAGMA user_version").fetchone() == (sqlite_schema.SCHEMA_VERSION,) == (4,)


async def test_a_newer_schema_is_refused_with_its_version(tmp_path: Path) -> None:
    path = tmp_path / "remember.db"
    with sqlite3.connect(path) as raw:
        raw.execute("PRAGMA user_version = 7")
    with pytest.raises(StoreUnavailableError, match="schema version 7"):
        await SQLiteStore(path).open()


async def test_a_file_that_is_not_a_database_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreUnavailableError, match=r"notes\.txt"):
        await SQLiteStore(path).open()


async def test_the_event_loop_runs_on_while_a_write_waits_for_the_lock(tmp_path: Path) -> None:
    path, now = tmp_path / "remember.db", time.time()
    store = SQLiteStore(path)
    await store.open()
    blocker = sqlite3.connect(path, isolation_level=None)
    try:
        blocker.execute("BEGIN IMMEDIATE")
        write = asyncio.create_task(store.put(OWNER, "user", "k", b"v", None, now))
        for _ in range(20):
            await asyncio.sleep(0)
        assert not write.done()
        blocker.execute("COMMIT")
        await write
        assert await store.get(OWNER, "user", "k", now) == Entry(b"v", None, ANY)
    finally:
        blocker.close()
        await store.close()


async def test_using_a_store_before_open_says_so(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="open"):
        await SQLiteStore(tmp_path / "remember.db").get(OWNER, "user", "k", time.time())


class CommitFailsOnce:
    """The store's connection, but the next COMMIT fails, as one can on a full disk."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection
        self.failed = False

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
        if sql == "COMMIT" and not self.failed:
            self.failed = True
            raise sqlite3.OperationalError("database or disk is full")
        return self._connection.execute(sql, *args)

    def __getattr__(self, name: str) -> object:
        return getattr(self._connection, name)


async def test_a_failed_commit_rolls_back_and_later_writes_are_committed(tmp_path: Path) -> None:
    path, now = tmp_path / "full.db", time.time()
    store = SQLiteStore(path)
    await store.open()
    try:
        failing = CommitFailsOnce(store._conn)  # type: ignore[arg-type]
        store._conn = failing  # type: ignore[assignment]
        with pytest.raises(StoreUnavailableError, match="disk is full"):
            await store.put(OWNER, "user", "refused", b"1", None, now, Quota(10, None))  # a transaction
        assert failing.failed
        await store.put(OWNER, "user", "acknowledged", b"2", None, now)  # autocommit: must not join an open one
    finally:
        store._conn = failing._connection
        await store.close()
    reopened = SQLiteStore(path)
    await reopened.open()
    try:
        assert await reopened.get(OWNER, "user", "acknowledged", now) == Entry(b"2", None, ANY)
        assert await reopened.get(OWNER, "user", "refused", now) is None
    finally:
        await reopened.close()


async def test_reading_many_addresses_sees_a_value_moved_by_another_process_at_exactly_one(tmp_path: Path) -> None:
    path, now = tmp_path / "moving.db", time.time()
    reader, mover = SQLiteStore(path), SQLiteStore(path)
    await reader.open()
    await mover.open()
    here, there = Address(OWNER, "user", "k"), Address("f" * 32, "user", "k")
    await mover.put(*here, b"v0", None, now)
    seen_nowhere = 0
    try:
        for number in range(200):
            old, new = (here, there) if number % 2 == 0 else (there, here)
            moving = asyncio.create_task(
                mover.swap(*new, None, b"v%d" % (number + 1), None, now, also=[(old, b"v%d" % number)])
            )
            for _ in range(3):
                found = await reader.get_many([here, there], now)
                seen_nowhere += found == [None, None]
            assert await moving
    finally:
        await reader.close()
        await mover.close()
    assert seen_nowhere == 0
