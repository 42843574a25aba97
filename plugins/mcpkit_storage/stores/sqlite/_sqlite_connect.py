"""Opening the SQLite store's file: WAL mode, the schema created or migrated, a locked database tried again."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from .. import StoreUnavailableError
from ._private_files import create_database
from ._sqlite_schema import SCHEMA_VERSION, holds_store, migrate

__all__ = ["BUSY_TIMEOUT_SECONDS", "OPEN_ATTEMPTS", "OPEN_RETRY_SECONDS", "connect"]

BUSY_TIMEOUT_SECONDS = 5.0
#: Opening a database another instance holds is tried this many times, waiting this long times the attempt between.
OPEN_ATTEMPTS = 4
OPEN_RETRY_SECONDS = 0.5


def connect(path: Path, create: bool = True) -> sqlite3.Connection:
    """A connection to the SQLite file at ``path``, in WAL mode, its schema created or migrated. Called on the store's
    worker thread: the connection belongs to it for its whole life.

    Another instance can hold the database while this one starts (a rolling restart: its write lock, or the
    recovery of a WAL left by one that was killed), and SQLite does not always wait for that within its busy
    timeout; so a locked database is tried again, ``OPEN_ATTEMPTS`` times in all, before starting fails.
    """
    for attempt in range(1, OPEN_ATTEMPTS + 1):
        try:
            return _connect_once(path, create)
        except StoreUnavailableError as exc:
            if attempt == OPEN_ATTEMPTS or "locked" not in str(exc):
                raise
            time.sleep(OPEN_RETRY_SECONDS * attempt)
    raise AssertionError("unreachable")  # pragma: no cover


def _connect_once(path: Path, create: bool) -> sqlite3.Connection:
    if create:
        create_database(path)  # 0600 before SQLite makes it (and its -wal, -shm) with the umask's mode
    # Without create, mode=rw: SQLite refuses a missing file instead of making one.
    where: str | Path = path if create else f"{path.absolute().as_uri()}?mode=rw"
    try:
        conn = sqlite3.connect(where, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None, uri=not create)
    except sqlite3.DatabaseError as exc:
        raise StoreUnavailableError(f"Cannot open the SQLite remember store at {str(path)!r}: {exc}") from exc
    try:
        if not create and not holds_store(conn):  # before WAL: a file of something else stays as it was
            raise StoreUnavailableError(
                f"The SQLite database at {str(path)!r} holds no remember store (no remember_entries "
                "table); nothing was changed in it. Is it the file the servers' plugins use?"
            )
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("BEGIN IMMEDIATE")
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if version > SCHEMA_VERSION:
            raise StoreUnavailableError(
                f"The SQLite remember store at {str(path)!r} has schema version {version}, "
                f"newer than this mcpkit understands ({SCHEMA_VERSION}); upgrade mcpkit."
            )
        migrate(conn, version)
        conn.execute("COMMIT")
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise StoreUnavailableError(f"Cannot open the SQLite remember store at {str(path)!r}: {exc}") from exc
    except BaseException:
        conn.close()
        raise
    return conn
