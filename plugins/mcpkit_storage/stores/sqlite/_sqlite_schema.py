"""The SQLite store's schema: its tables, indexes and triggers, version by version, and the migration."""

from __future__ import annotations

import sqlite3

__all__ = ["SCHEMA_VERSION", "holds_store", "migrate"]

SCHEMA_VERSION = 4

#: Schema version 1 (mcpkit 0.1): the entries table and its expiry index.
_SCHEMA_1 = (
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

#: Version 2: per-bucket usage kept by triggers (quotas and search statistics), a table of store-wide facts,
#: and the search index.
_SCHEMA_2 = (
    """CREATE TABLE IF NOT EXISTS remember_usage (
        owner TEXT NOT NULL,
        bucket TEXT NOT NULL,
        count INTEGER NOT NULL,
        bytes INTEGER NOT NULL,
        documents INTEGER NOT NULL DEFAULT 0,
        length INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (owner, bucket)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS remember_docs (
        doc INTEGER PRIMARY KEY,
        owner TEXT NOT NULL,
        bucket TEXT NOT NULL,
        key TEXT NOT NULL,
        length INTEGER NOT NULL,
        expires_at REAL NULL,
        UNIQUE (owner, bucket, key)
    )""",
    """CREATE INDEX IF NOT EXISTS remember_docs_expires_at
        ON remember_docs (owner, bucket, expires_at) WHERE expires_at IS NOT NULL""",
    """CREATE TABLE IF NOT EXISTS remember_terms (
        term INTEGER NOT NULL,
        doc INTEGER NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (term, doc)
    ) WITHOUT ROWID""",
    """CREATE INDEX IF NOT EXISTS remember_terms_doc ON remember_terms (doc)""",
    """CREATE TRIGGER IF NOT EXISTS remember_docs_gone AFTER DELETE ON remember_entries BEGIN
        DELETE FROM remember_docs WHERE owner = OLD.owner AND bucket = OLD.bucket AND key = OLD.key;
    END""",
    """CREATE TRIGGER IF NOT EXISTS remember_docs_changed AFTER UPDATE OF data ON remember_entries BEGIN
        DELETE FROM remember_docs WHERE owner = OLD.owner AND bucket = OLD.bucket AND key = OLD.key;
    END""",
    """CREATE TRIGGER IF NOT EXISTS remember_docs_insert AFTER INSERT ON remember_docs BEGIN
        UPDATE remember_usage SET documents = documents + 1, length = length + NEW.length
        WHERE owner = NEW.owner AND bucket = NEW.bucket;
    END""",
    """CREATE TRIGGER IF NOT EXISTS remember_docs_delete AFTER DELETE ON remember_docs BEGIN
        DELETE FROM remember_terms WHERE doc = OLD.doc;
        UPDATE remember_usage SET documents = documents - 1, length = length - OLD.length
        WHERE owner = OLD.owner AND bucket = OLD.bucket;
    END""",
    """CREATE TABLE IF NOT EXISTS remember_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID""",
    """INSERT OR REPLACE INTO remember_usage (owner, bucket, count, bytes)
        SELECT owner, bucket, count(*), sum(length(data)) FROM remember_entries GROUP BY owner, bucket""",
    """INSERT OR REPLACE INTO remember_meta (name, value)
        SELECT 'legacy', '1' WHERE EXISTS (SELECT 1 FROM remember_entries)""",
    """CREATE TRIGGER IF NOT EXISTS remember_usage_insert AFTER INSERT ON remember_entries BEGIN
        INSERT INTO remember_usage (owner, bucket, count, bytes) VALUES (NEW.owner, NEW.bucket, 1, length(NEW.data))
        ON CONFLICT (owner, bucket) DO UPDATE SET count = count + 1, bytes = bytes + length(NEW.data);
    END""",
    """CREATE TRIGGER IF NOT EXISTS remember_usage_update AFTER UPDATE OF data ON remember_entries BEGIN
        UPDATE remember_usage SET bytes = bytes - length(OLD.data) + length(NEW.data)
        WHERE owner = NEW.owner AND bucket = NEW.bucket;
    END""",
    """CREATE TRIGGER IF NOT EXISTS remember_usage_delete AFTER DELETE ON remember_entries BEGIN
        UPDATE remember_usage SET count = count - 1, bytes = bytes - length(OLD.data)
        WHERE owner = OLD.owner AND bucket = OLD.bucket;
    END""",
)


#: Version 3: postings written in batches. A document is written ``fresh``, its postings in ``remember_fresh``
#: (keyed by document, so a write appends to one place); a merge moves every fresh posting into
#: ``remember_terms`` at once. A replaced document that was merged leaves its postings there, its number in
#: ``remember_stale``, for the next merge to delete; searches join postings to live documents, so none is
#: found meanwhile, and documents are numbered past every stale number, so none inherits a stale posting.
_SCHEMA_3 = (
    """ALTER TABLE remember_docs ADD COLUMN fresh INTEGER NULL""",
    """CREATE INDEX IF NOT EXISTS remember_docs_fresh ON remember_docs (owner, bucket) WHERE fresh IS NOT NULL""",
    """CREATE TABLE IF NOT EXISTS remember_fresh (
        doc INTEGER NOT NULL,
        term INTEGER NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (doc, term)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS remember_stale (doc INTEGER PRIMARY KEY)""",
    # An instance of an older mcpkit still running on the file would number its documents without looking at
    # the stale ones and put its postings straight into remember_terms: its writes are refused instead.
    """CREATE TRIGGER IF NOT EXISTS remember_docs_older BEFORE INSERT ON remember_docs WHEN NEW.fresh IS NULL BEGIN
        SELECT RAISE(ABORT, 'this SQLite remember store has schema version 3: upgrade mcpkit and restart');
    END""",
    """DROP TRIGGER IF EXISTS remember_docs_delete""",
    """CREATE TRIGGER remember_docs_delete AFTER DELETE ON remember_docs BEGIN
        DELETE FROM remember_fresh WHERE doc = OLD.doc;
        INSERT OR IGNORE INTO remember_stale (doc) SELECT OLD.doc WHERE OLD.fresh IS NULL;
        UPDATE remember_usage SET documents = documents - 1, length = length - OLD.length
        WHERE owner = OLD.owner AND bucket = OLD.bucket;
    END""",
)


#: Version 4: each entry's first-write time (``Entry.created``), kept by every write; NULL (unknown) for the rows
#: written before it. An instance of version 3 still running on the file writes on (its new keys' time unknown);
#: one of version 2 is refused as before, its refusal naming this version.
_SCHEMA_4 = (
    """ALTER TABLE remember_entries ADD COLUMN created REAL NULL""",
    """DROP TRIGGER IF EXISTS remember_docs_older""",
    """CREATE TRIGGER remember_docs_older BEFORE INSERT ON remember_docs WHEN NEW.fresh IS NULL BEGIN
        SELECT RAISE(ABORT, 'this SQLite remember store has schema version 4: upgrade mcpkit and restart');
    END""",
)


def holds_store(conn: sqlite3.Connection) -> bool:
    """Whether the database holds a remember store, of any schema version (mcpkit 0.1's included)."""
    return (
        conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'remember_entries'").fetchone()
        is not None
    )


def migrate(conn: sqlite3.Connection, version: int) -> None:
    """Bring a database at schema ``version`` to ``SCHEMA_VERSION``, inside the caller's transaction."""
    if version < 1:
        for statement in _SCHEMA_1:
            conn.execute(statement)
    if version < 2:
        for statement in _SCHEMA_2:
            conn.execute(statement)
    if version < 3:
        for statement in _SCHEMA_3:
            conn.execute(statement)
    if version < 4:
        for statement in _SCHEMA_4:
            conn.execute(statement)
    if version < SCHEMA_VERSION:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
