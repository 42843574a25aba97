"""An SQLite file of schema version 3 (before stores kept ``Entry.created``) opens at version 4: its rows read with an
unknown first-write time, which an overwrite keeps unknown, while keys written since get theirs."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from mcpkit_storage.stores._store import Entry
from mcpkit_storage.stores.sqlite._sqlite_schema import _SCHEMA_1, _SCHEMA_2, _SCHEMA_3
from mcpkit_storage.stores.sqlite._sqlite_store import SQLiteStore
from stores.conftest import OWNER


async def test_a_version_3_row_reads_created_unknown_and_new_keys_get_theirs(tmp_path: Path) -> None:
    now, path = time.time(), tmp_path / "remember.db"
    path.touch(mode=0o600)
    with sqlite3.connect(path) as db:
        for statement in (*_SCHEMA_1, *_SCHEMA_2, *_SCHEMA_3):
            db.execute(statement)
        db.execute("DELETE FROM remember_meta WHERE name = 'legacy'")
        db.execute("PRAGMA user_version = 3")
        db.execute("INSERT INTO remember_entries VALUES (?, 'user', 'old', x'01', NULL)", (OWNER,))
    store = SQLiteStore(path)
    await store.open()
    try:
        with sqlite3.connect(path) as db:
            assert db.execute("PRAGMA user_version").fetchone() == (4,)
        assert await store.get(OWNER, "user", "old", now) == Entry(b"\x01", None, None)
        await store.put(OWNER, "user", "old", b"\x02", None, now)  # still the same key: still unknown
        await store.put(OWNER, "user", "new", b"\x03", None, now)
        scanned = {record.key: record.entry.created async for record in store.scan()}
        assert scanned == {"old": None, "new": now}
    finally:
        await store.close()
