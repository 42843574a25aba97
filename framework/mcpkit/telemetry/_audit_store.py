"""``AuditStore``: the memory audit as a table (SQLite, in a file or in memory) that answers the operator's questions
by index, with the records older than ``max_age`` swept; the same records as ``AuditLog``'s lines, never a value."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..base import ConfigurationError
from ._audit_sink import AuditSink, asked_by, call_fields, is_change, matches

__all__ = ["DEFAULT_STORE_MAX_AGE", "AuditStore"]

#: How long an ``AuditStore`` keeps a record by default: a week.
DEFAULT_STORE_MAX_AGE = 7 * 86400.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS mcpkit_audit (
    at REAL NOT NULL,
    request_id TEXT,
    trace_id TEXT,
    key TEXT,
    key_label TEXT,
    operation TEXT,
    change INTEGER NOT NULL DEFAULT 0,
    record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS mcpkit_audit_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS mcpkit_audit_at ON mcpkit_audit (at);
CREATE INDEX IF NOT EXISTS mcpkit_audit_request ON mcpkit_audit (request_id);
CREATE INDEX IF NOT EXISTS mcpkit_audit_trace ON mcpkit_audit (trace_id);
CREATE INDEX IF NOT EXISTS mcpkit_audit_key ON mcpkit_audit (key);
CREATE INDEX IF NOT EXISTS mcpkit_audit_label ON mcpkit_audit (key_label);
"""

#: The columns a question looks a record up by (the rest of the record is its JSON text).
_COLUMNS = ("request_id", "trace_id", "key", "key_label", "operation")
#: At most this many expired rows go in one sweep, so a write after a long pause does not hold the loop while a
#: backlog is deleted: the next write sweeps the next batch.
_SWEEP_BATCH = 1000
#: How long a write waits for a database another process holds locked before it fails (sqlite3's default is 5 s,
#: all of it on the event loop).
_BUSY_TIMEOUT = 0.25


class AuditStore(AuditSink):
    """Keeps each memory record as a row of the table ``mcpkit_audit`` in ``url``: ``"memory"`` (this process
    only), ``sqlite:///relative.db``, ``sqlite:////absolute.db`` or a file path. Rows older than ``max_age`` seconds
    are never answered and are deleted by a sweep at most every ``min(60, max_age / 10)`` seconds of writes (and by
    ``sweep()``). The file is created readable by the server's user alone (0600)."""

    def __init__(
        self,
        url: str | os.PathLike[str] = "memory",
        *,
        max_age: float = DEFAULT_STORE_MAX_AGE,
        clock: Callable[[], float] = time.time,
        opened: sqlite3.Connection | None = None,
    ) -> None:
        if isinstance(max_age, bool) or not isinstance(max_age, int | float) or not max_age > 0:
            raise ConfigurationError(f"AuditStore(max_age=...) is a number of seconds above 0, not {max_age!r:.40}.")
        self.path = _path_of(url)
        self.max_age = float(max_age)
        self._clock = clock
        self._every = min(60.0, self.max_age / 10)
        self._next_sweep = 0.0
        self._lock = threading.Lock()
        #: ``opened``: a connection ``reading`` made read-only (this instance then writes nothing).
        self._db, self._read_only = opened, opened is not None

    def __repr__(self) -> str:
        return f"AuditStore({str(self.path or 'memory')!r}, max_age={self.max_age:g})"

    @classmethod
    def reading(cls, path: str | os.PathLike[str]) -> AuditStore:
        """The table in the SQLite file ``path``, opened read-only (nothing is created or changed in it), answering
        with the ``max_age`` its server recorded. ``ValueError`` when the file holds no audit table."""
        uri = Path(path).resolve().as_uri() + "?mode=ro"
        db = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=_BUSY_TIMEOUT)
        try:
            tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "mcpkit_audit" not in tables:
                raise ValueError(f"{path} is an SQLite database with no memory audit (no table mcpkit_audit) in it.")
            recorded = db.execute("SELECT value FROM mcpkit_audit_meta WHERE name = 'max_age'").fetchone()
        except Exception:
            db.close()
            raise
        return cls(path, max_age=float(recorded[0]) if recorded else float("inf"), opened=db)

    def write(self, record: Mapping[str, Any]) -> None:
        """Keep ``record`` as a row (its time ``at`` first); sweep the rows past ``max_age`` when one is due."""
        self.write_many((record,))

    def write_many(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Keep ``records`` (one operation's) as rows in one transaction; sweep a batch of old rows when one is due."""
        if self._read_only:
            raise ValueError(f"{self!r} was opened for reading: it writes nothing.")
        now = self._clock()
        at = round(now, 6)
        rows = []
        for record in records:
            row = {"at": at, **record}
            values = [None if row.get(column) is None else str(row[column]) for column in _COLUMNS]
            text = json.dumps(row, separators=(",", ":"), ensure_ascii=False)
            rows.append((at, *values, int(is_change(row)), text))
        with self._lock:
            db = self._opened()
            with db:
                db.executemany(
                    "INSERT INTO mcpkit_audit (at, request_id, trace_id, key, key_label, operation, change, record) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )
                if now >= self._next_sweep:
                    self._swept(db, now)

    def sweep(self) -> int:
        """Delete every row older than ``max_age`` now; how many went."""
        gone = 0
        with self._lock:
            db = self._opened()
            while True:
                with db:
                    swept = self._swept(db, self._clock())
                gone += swept
                if swept < _SWEEP_BATCH:
                    return gone

    def lines(self) -> Iterator[dict[str, Any]]:
        """Every kept record younger than ``max_age``, oldest first."""
        return iter(self._select("1 = 1", ()))

    def entered(
        self,
        *,
        request_id: str | None = None,
        trace_id: str | None = None,
        session: str | None = None,
        caller: str | None = None,
    ) -> list[dict[str, Any]]:
        wanted = call_fields(request_id=request_id, trace_id=trace_id, session=session, caller=caller)
        field = "trace_id" if "trace_id" in wanted else "request_id"  # looked up by index, the rest checked here
        return [line for line in self._select(f"{field} = ?", (wanted[field],)) if matches(line, wanted)]

    def changed(self, *, key: str | None = None, label: str | None = None) -> list[dict[str, Any]]:
        field, wanted = asked_by(key=key, label=label)
        return self._select(f"{field} = ? AND change = 1", (wanted,))

    def close(self) -> None:
        with self._lock:
            if self._db is not None and self.path is not None:  # in memory: closing would lose every row
                self._db.close()
                self._db = None

    def _select(self, where: str, parameters: tuple[str, ...]) -> list[dict[str, Any]]:
        with self._lock:
            rows = (
                self._opened()
                .execute(
                    f"SELECT record FROM mcpkit_audit WHERE at >= ? AND {where} ORDER BY at, rowid",
                    (self._clock() - self.max_age, *parameters),
                )
                .fetchall()
            )
        return [json.loads(record) for (record,) in rows]

    def _swept(self, db: sqlite3.Connection, now: float) -> int:
        """Delete a batch of the rows past ``max_age``; the next sweep is due at once while more are left."""
        swept = db.execute(
            "DELETE FROM mcpkit_audit WHERE rowid IN (SELECT rowid FROM mcpkit_audit WHERE at < ? LIMIT ?)",
            (now - self.max_age, _SWEEP_BATCH),
        ).rowcount
        self._next_sweep = now if swept == _SWEEP_BATCH else now + self._every
        return swept

    def _opened(self) -> sqlite3.Connection:
        if self._db is None:
            if self.path is None:
                db = sqlite3.connect(":memory:", check_same_thread=False)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))  # only the server's own user reads it
                db = sqlite3.connect(self.path, check_same_thread=False, timeout=_BUSY_TIMEOUT)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(_SCHEMA)
            with db:  # what a reader (mcpkit audit) holds the rows to: a row past it is never answered
                db.execute("INSERT OR REPLACE INTO mcpkit_audit_meta VALUES ('max_age', ?)", (repr(self.max_age),))
            self._db = db
        return self._db


def _path_of(url: str | os.PathLike[str]) -> Path | None:
    """The SQLite file ``url`` names, None for ``memory``; any other store is refused with what to give instead."""
    if isinstance(url, os.PathLike):
        return Path(url)
    if not isinstance(url, str) or not url:
        raise ConfigurationError(f"AuditStore(url) is 'memory', a sqlite:/// URL or a file path, not {url!r:.60}.")
    if url in ("memory", ":memory:"):
        return None
    if url.startswith("sqlite:///") and len(url) > len("sqlite:///"):
        return Path(url.removeprefix("sqlite:///"))
    if "://" in url:
        scheme = url.partition("://")[0]
        raise ConfigurationError(
            f"AuditStore keeps its table in SQLite; a {scheme}:// store is not supported: give it 'memory', "
            "sqlite:///relative.db, sqlite:////absolute.db or a file path (or AuditLog(path) for a JSON Lines file)."
        )
    return Path(url)
