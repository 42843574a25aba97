"""The SQLite store: one file, shareable by several server processes.

One connection lives on one dedicated worker thread, so the event loop never
waits on disk and calls from one process are serialized. Every write is a
single SQL statement in autocommit mode, which SQLite runs under its
database-wide write lock: ``swap`` is a conditional UPDATE (or a guarded
upsert) and is therefore atomic across processes too. WAL journaling keeps
committed data through a crash of the process.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from mcpkit_remember._private_files import create_database
from mcpkit_remember._store import Entry, Record, StoreUnavailableError

__all__ = ["SQLiteStore"]

_T = TypeVar("_T")
_Params = Mapping[str, object]

SCHEMA_VERSION = 1
BUSY_TIMEOUT_SECONDS = 5.0
SCAN_PAGE = 500

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS remember_entries (
        owner TEXT NOT NULL,
        bucket TEXT NOT NULL,
        key TEXT NOT NULL,
        data BLOB NOT NULL,
        expires_at REAL NULL,
        PRIMARY KEY (owner, bucket, key)
    ) WITHOUT ROWID""",
    """CREATE INDEX IF NOT EXISTS remember_entries_expires_at
        ON remember_entries (expires_at) WHERE expires_at IS NOT NULL""",
)

_LIVE = "(expires_at IS NULL OR expires_at > :now)"
_AT = "owner = :owner AND bucket = :bucket AND key = :key"

_GET = f"SELECT data, expires_at FROM remember_entries WHERE {_AT} AND {_LIVE}"
_EXISTS = f"SELECT 1 FROM remember_entries WHERE {_AT} AND {_LIVE}"
_PUT = """INSERT OR REPLACE INTO remember_entries (owner, bucket, key, data, expires_at)
    VALUES (:owner, :bucket, :key, :data, :expires_at)"""
_DELETE = f"DELETE FROM remember_entries WHERE {_AT} RETURNING expires_at"
_KEYS = f"SELECT key FROM remember_entries WHERE owner = :owner AND bucket = :bucket AND {_LIVE} ORDER BY key"
_DELETE_BUCKET = "DELETE FROM remember_entries WHERE owner = :owner AND bucket = :bucket RETURNING expires_at"
_DELETE_OWNER = "DELETE FROM remember_entries WHERE owner = :owner"
_SWAP_ABSENT = """INSERT INTO remember_entries (owner, bucket, key, data, expires_at)
    VALUES (:owner, :bucket, :key, :data, :expires_at)
    ON CONFLICT (owner, bucket, key) DO UPDATE
    SET data = excluded.data, expires_at = excluded.expires_at
    WHERE remember_entries.expires_at IS NOT NULL AND remember_entries.expires_at <= :now
        OR remember_entries.data = :data"""
_SWAP_EQUAL = f"""UPDATE remember_entries SET data = :data, expires_at = :expires_at
    WHERE {_AT} AND (data = :expected AND {_LIVE} OR data = :data)"""
_SCAN_FIRST = """SELECT owner, bucket, key, data, expires_at FROM remember_entries
    ORDER BY owner, bucket, key LIMIT :limit"""
_SCAN_NEXT = """SELECT owner, bucket, key, data, expires_at FROM remember_entries
    WHERE (owner, bucket, key) > (:owner, :bucket, :key)
    ORDER BY owner, bucket, key LIMIT :limit"""
_PURGE = "DELETE FROM remember_entries WHERE expires_at <= :now"


class SQLiteStore:
    """Keeps entries in the SQLite file at ``path``; its directory must already exist."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = Path(path)
        self._executor: ThreadPoolExecutor | None = None
        self._conn: sqlite3.Connection | None = None

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self._path)!r})"

    async def open(self) -> None:
        """Open the file on the worker thread, switch to WAL and create the schema (idempotent)."""
        if not self._path.parent.is_dir():
            raise StoreUnavailableError(
                f"Cannot open the SQLite remember store at {str(self._path)!r}: its directory "
                f"{str(self._path.parent)!r} does not exist. Create it first or choose another path."
            )
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcpkit-sqlite")
        try:
            self._conn = await self._run(self._connect)
        except BaseException:
            self._executor.shutdown(wait=False)
            self._executor = None
            raise

    async def close(self) -> None:
        executor, conn = self._executor, self._conn
        if executor is None:
            return
        if conn is not None:
            await asyncio.get_running_loop().run_in_executor(executor, conn.close)
        executor.shutdown(wait=True)
        self._executor = self._conn = None

    async def get(self, owner: str, bucket: str, key: str, now: float) -> Entry | None:
        params = {"owner": owner, "bucket": bucket, "key": key, "now": now}
        row = await self._run(self._fetchone, _GET, params)
        return None if row is None else Entry(row[0], row[1])

    async def put(self, owner: str, bucket: str, key: str, data: bytes, expires_at: float | None, now: float) -> None:
        params = {"owner": owner, "bucket": bucket, "key": key, "data": data, "expires_at": expires_at}
        await self._run(self._rowcount, _PUT, params)

    async def delete(self, owner: str, bucket: str, key: str, now: float) -> bool:
        params = {"owner": owner, "bucket": bucket, "key": key}
        rows = await self._run(self._fetchall, _DELETE, params)
        return any(_live(expires_at, now) for (expires_at,) in rows)

    async def exists(self, owner: str, bucket: str, key: str, now: float) -> bool:
        params = {"owner": owner, "bucket": bucket, "key": key, "now": now}
        row = await self._run(self._fetchone, _EXISTS, params)
        return row is not None

    async def keys(self, owner: str, bucket: str, now: float) -> list[str]:
        params = {"owner": owner, "bucket": bucket, "now": now}
        rows = await self._run(self._fetchall, _KEYS, params)
        return [key for (key,) in rows]

    async def delete_bucket(self, owner: str, bucket: str, now: float) -> int:
        params = {"owner": owner, "bucket": bucket}
        rows = await self._run(self._fetchall, _DELETE_BUCKET, params)
        return sum(1 for (expires_at,) in rows if _live(expires_at, now))

    async def delete_owner(self, owner: str) -> int:
        return await self._run(self._rowcount, _DELETE_OWNER, {"owner": owner})

    async def swap(
        self,
        owner: str,
        bucket: str,
        key: str,
        expected: bytes | None,
        data: bytes,
        expires_at: float | None,
        now: float,
    ) -> bool:
        params = {
            "owner": owner,
            "bucket": bucket,
            "key": key,
            "expected": expected,
            "data": data,
            "expires_at": expires_at,
            "now": now,
        }
        sql = _SWAP_ABSENT if expected is None else _SWAP_EQUAL
        changed = await self._run(self._rowcount, sql, params)
        return changed == 1

    async def scan(self) -> AsyncIterator[Record]:
        """Every entry, read in primary-key pages so no read transaction spans a ``yield``."""
        sql, params = _SCAN_FIRST, {"limit": SCAN_PAGE}
        while True:
            rows = await self._run(self._fetchall, sql, params)
            for owner, bucket, key, data, expires_at in rows:
                yield Record(owner, bucket, key, Entry(data, expires_at))
            if len(rows) < SCAN_PAGE:
                return
            owner, bucket, key = rows[-1][:3]
            sql, params = _SCAN_NEXT, {"owner": owner, "bucket": bucket, "key": key, "limit": SCAN_PAGE}

    async def purge_expired(self, now: float) -> int:
        return await self._run(self._rowcount, _PURGE, {"now": now})

    def _connect(self) -> sqlite3.Connection:
        """Runs on the worker thread: the connection belongs to it for its whole life."""
        create_database(self._path)  # 0600 before SQLite makes it (and its -wal, -shm) with the umask's mode
        try:
            conn = sqlite3.connect(self._path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
        except sqlite3.DatabaseError as exc:
            raise StoreUnavailableError(f"Cannot open the SQLite remember store at {str(self._path)!r}: {exc}") from exc
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("BEGIN IMMEDIATE")
            (version,) = conn.execute("PRAGMA user_version").fetchone()
            if version > SCHEMA_VERSION:
                raise StoreUnavailableError(
                    f"The SQLite remember store at {str(self._path)!r} has schema version {version}, "
                    f"newer than this mcpkit understands ({SCHEMA_VERSION}); upgrade mcpkit."
                )
            if version < SCHEMA_VERSION:
                for statement in _SCHEMA:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreUnavailableError(f"Cannot open the SQLite remember store at {str(self._path)!r}: {exc}") from exc
        except BaseException:
            conn.close()
            raise
        return conn

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError(f"{self!r} is not open; call open() first")
        return self._conn

    def _fetchone(self, sql: str, params: _Params) -> Any:
        return self._db().execute(sql, params).fetchone()

    def _fetchall(self, sql: str, params: _Params) -> list[Any]:
        return self._db().execute(sql, params).fetchall()

    def _rowcount(self, sql: str, params: _Params) -> int:
        return self._db().execute(sql, params).rowcount

    async def _run(self, call: Callable[..., _T], *args: Any) -> _T:
        """Run ``call(*args)`` on the worker thread; SQLite failures become StoreUnavailableError."""
        if self._executor is None:
            raise RuntimeError(f"{self!r} is not open; call open() first")
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, call, *args)
        except sqlite3.OperationalError as exc:
            raise StoreUnavailableError(f"The SQLite remember store at {str(self._path)!r} failed: {exc}") from exc


def _live(expires_at: float | None, now: float) -> bool:
    return expires_at is None or expires_at > now
