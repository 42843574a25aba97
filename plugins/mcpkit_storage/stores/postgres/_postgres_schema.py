"""The PostgreSQL store's schema, version by version, and ``migrate``, which the store runs when it opens."""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection

from .. import StoreUnavailableError

__all__ = ["ADDED", "MIGRATION_LOCK", "SCHEMA", "SCHEMA_VERSION", "migrate"]

SCHEMA_VERSION = 1

#: The advisory lock a start holds while it creates or migrates the schema (any 64-bit number of our own).
MIGRATION_LOCK = 0x6D63706B6974  # "mcpkit"

#: Version 1: entries, usage, the search index, and the triggers that keep usage and the index exact.
SCHEMA: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE remember_entries (
            owner TEXT NOT NULL,
            bucket TEXT NOT NULL,
            key TEXT NOT NULL,
            data BYTEA NOT NULL,
            expires_at DOUBLE PRECISION NULL,
            PRIMARY KEY (owner, bucket, key)
        )""",
        """CREATE INDEX remember_entries_expires_at ON remember_entries (expires_at) WHERE expires_at IS NOT NULL""",
        """CREATE TABLE remember_usage (
            owner TEXT NOT NULL,
            bucket TEXT NOT NULL,
            count BIGINT NOT NULL DEFAULT 0,
            bytes BIGINT NOT NULL DEFAULT 0,
            documents BIGINT NOT NULL DEFAULT 0,
            length BIGINT NOT NULL DEFAULT 0,
            PRIMARY KEY (owner, bucket)
        )""",
        """CREATE TABLE remember_docs (
            doc BIGSERIAL PRIMARY KEY,
            owner TEXT NOT NULL,
            bucket TEXT NOT NULL,
            key TEXT NOT NULL,
            length INTEGER NOT NULL,
            expires_at DOUBLE PRECISION NULL,
            UNIQUE (owner, bucket, key)
        )""",
        """CREATE INDEX remember_docs_expires_at ON remember_docs (owner, bucket, expires_at)
            WHERE expires_at IS NOT NULL""",
        """CREATE TABLE remember_terms (
            term BIGINT NOT NULL,
            doc BIGINT NOT NULL REFERENCES remember_docs (doc) ON DELETE CASCADE,
            count INTEGER NOT NULL,
            PRIMARY KEY (term, doc)
        )""",
        """CREATE INDEX remember_terms_doc ON remember_terms (doc)""",
        """CREATE FUNCTION remember_entry_added() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO remember_usage (owner, bucket, count, bytes) VALUES (NEW.owner, NEW.bucket, 1, length(NEW.data))
            ON CONFLICT (owner, bucket) DO UPDATE
            SET count = remember_usage.count + 1, bytes = remember_usage.bytes + length(NEW.data);
            RETURN NULL;
        END $$""",
        """CREATE FUNCTION remember_entry_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            DELETE FROM remember_docs WHERE owner = OLD.owner AND bucket = OLD.bucket AND key = OLD.key;
            UPDATE remember_usage SET bytes = bytes - length(OLD.data) + length(NEW.data)
            WHERE owner = NEW.owner AND bucket = NEW.bucket;
            RETURN NULL;
        END $$""",
        """CREATE FUNCTION remember_entry_removed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            DELETE FROM remember_docs WHERE owner = OLD.owner AND bucket = OLD.bucket AND key = OLD.key;
            UPDATE remember_usage SET count = count - 1, bytes = bytes - length(OLD.data)
            WHERE owner = OLD.owner AND bucket = OLD.bucket;
            RETURN NULL;
        END $$""",
        """CREATE FUNCTION remember_doc_added() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE remember_usage SET documents = documents + 1, length = length + NEW.length
            WHERE owner = NEW.owner AND bucket = NEW.bucket;
            RETURN NULL;
        END $$""",
        """CREATE FUNCTION remember_doc_removed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE remember_usage SET documents = documents - 1, length = length - OLD.length
            WHERE owner = OLD.owner AND bucket = OLD.bucket;
            RETURN NULL;
        END $$""",
        """CREATE TRIGGER remember_entries_insert AFTER INSERT ON remember_entries
            FOR EACH ROW EXECUTE FUNCTION remember_entry_added()""",
        """CREATE TRIGGER remember_entries_update AFTER UPDATE OF data ON remember_entries
            FOR EACH ROW EXECUTE FUNCTION remember_entry_changed()""",
        """CREATE TRIGGER remember_entries_delete AFTER DELETE ON remember_entries
            FOR EACH ROW EXECUTE FUNCTION remember_entry_removed()""",
        """CREATE TRIGGER remember_docs_insert AFTER INSERT ON remember_docs
            FOR EACH ROW EXECUTE FUNCTION remember_doc_added()""",
        """CREATE TRIGGER remember_docs_delete AFTER DELETE ON remember_docs
            FOR EACH ROW EXECUTE FUNCTION remember_doc_removed()""",
    ),
}

#: Tables and columns added beside a version without changing it, so that instances of an older mcpkit, which do not
#: know them, still start on the database during a rolling upgrade (or a rollback): the store's notes
#: (``Store.note``), which secret the values were rotated to and which key ids the serving instances hold; and each
#: entry's first-write time (``Entry.created``; NULL: unknown, written before it or by an older instance).
ADDED = (
    """CREATE TABLE IF NOT EXISTS remember_notes (name TEXT PRIMARY KEY, value TEXT NOT NULL)""",
    """ALTER TABLE remember_entries ADD COLUMN IF NOT EXISTS created DOUBLE PRECISION NULL""",
)

#: Whether the database holds a remember store: NULL when no remember_entries table is on the search path.
_HOLDS_STORE = "SELECT to_regclass('remember_entries')"


async def migrate(conn: AsyncConnection[Any], store: str, where: str, *, create: bool) -> None:
    """Create the schema or bring it to ``SCHEMA_VERSION``, in one transaction under ``MIGRATION_LOCK``;
    ``create=False`` (the operator commands) only in a database that holds a remember store already. ``store``
    and ``where`` name it in refusals."""
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", [MIGRATION_LOCK])
        if not create:
            row = await (await conn.execute(_HOLDS_STORE)).fetchone()
            if row is None or row[0] is None:
                raise StoreUnavailableError(
                    f"There is no remember store in {where}: the database has no remember_entries table, "
                    "and nothing was created in it. Is it the database the servers' plugins use?"
                )
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS remember_schema (one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),"
            " version INTEGER NOT NULL)"
        )
        row = await (await conn.execute("SELECT version FROM remember_schema")).fetchone()
        version = 0 if row is None else int(row[0])
        if version > SCHEMA_VERSION:
            raise StoreUnavailableError(
                f"The PostgreSQL remember store ({store}) has schema version {version}, newer than this mcpkit "
                f"understands ({SCHEMA_VERSION}); upgrade mcpkit (every instance) before starting it."
            )
        for step in range(version + 1, SCHEMA_VERSION + 1):
            for statement in SCHEMA[step]:
                await conn.execute(statement)
        for statement in ADDED:
            await conn.execute(statement)
        if version < SCHEMA_VERSION:
            await conn.execute(
                "INSERT INTO remember_schema (one, version) VALUES (TRUE, %s)"
                " ON CONFLICT (one) DO UPDATE SET version = excluded.version",
                [SCHEMA_VERSION],
            )
