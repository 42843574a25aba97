"""The SQL of the SQLite store's entries (the index's is in ``_sqlite_index``), and the quota check that runs inside a
write's transaction."""

from __future__ import annotations

import sqlite3
from typing import Any

from .. import Quota, QuotaExceededError, charged

__all__ = [
    "AT",
    "DELETE",
    "DELETE_BUCKET",
    "DELETE_OWNER",
    "ENTRIES",
    "GET",
    "LEGACY",
    "LIVE",
    "PURGE",
    "PURGE_USAGE",
    "PUT",
    "SCANNED",
    "SCAN_FIRST",
    "SCAN_NEXT",
    "SETTLE_LEGACY",
    "SWAP_ABSENT",
    "SWAP_EQUAL",
    "TRIM",
    "USAGE",
    "check_quota",
    "live",
]

LIVE = "(expires_at IS NULL OR expires_at > :now)"
AT = "owner = :owner AND bucket = :bucket AND key = :key"

GET = f"SELECT data, expires_at, created FROM remember_entries WHERE {AT} AND {LIVE}"
#: The first-write time a write leaves on the row it replaces: the one given (``:given``; None: unknown, a moved value
#: of unknown age), else the row's own while it is live, else now (an expired row rewritten is a new key).
CREATED = """CASE WHEN :given THEN :created
    WHEN remember_entries.expires_at IS NOT NULL AND remember_entries.expires_at <= :now THEN :now
    ELSE remember_entries.created END"""
PUT = f"""INSERT INTO remember_entries (owner, bucket, key, data, expires_at, created)
    VALUES (:owner, :bucket, :key, :data, :expires_at, CASE WHEN :given THEN :created ELSE :now END)
    ON CONFLICT (owner, bucket, key) DO UPDATE
    SET data = excluded.data, expires_at = excluded.expires_at, created = {CREATED}"""
DELETE = f"DELETE FROM remember_entries WHERE {AT} RETURNING expires_at"
ENTRIES = f"""SELECT key, data, expires_at, created FROM remember_entries
    WHERE owner = :owner AND bucket = :bucket AND {LIVE} ORDER BY key"""
DELETE_BUCKET = "DELETE FROM remember_entries WHERE owner = :owner AND bucket = :bucket RETURNING expires_at"
DELETE_OWNER = "DELETE FROM remember_entries WHERE owner = :owner"
SWAP_ABSENT = f"""INSERT INTO remember_entries (owner, bucket, key, data, expires_at, created)
    VALUES (:owner, :bucket, :key, :data, :expires_at, CASE WHEN :given THEN :created ELSE :now END)
    ON CONFLICT (owner, bucket, key) DO UPDATE
    SET data = excluded.data, expires_at = excluded.expires_at, created = {CREATED}
    WHERE remember_entries.expires_at IS NOT NULL AND remember_entries.expires_at <= :now
        OR remember_entries.data = :data"""
SWAP_EQUAL = f"""UPDATE remember_entries SET data = :data, expires_at = :expires_at, created = {CREATED}
    WHERE {AT} AND (data = :expected AND {LIVE} OR data = :data)"""
USAGE = "SELECT count, bytes, length FROM remember_usage WHERE owner = :owner AND bucket = :bucket"
OLD_WORDS = f"SELECT length FROM remember_docs WHERE {AT}"
TRIM = "DELETE FROM remember_entries WHERE owner = :owner AND bucket = :bucket AND expires_at <= :now"
SCANNED = """SELECT e.owner, e.bucket, e.key, e.data, e.expires_at, e.created, d.doc IS NOT NULL
    FROM remember_entries e LEFT JOIN remember_docs d ON d.owner = e.owner AND d.bucket = e.bucket AND d.key = e.key"""
SCAN_FIRST = f"{SCANNED} ORDER BY e.owner, e.bucket, e.key LIMIT :limit"
SCAN_NEXT = f"""{SCANNED} WHERE (e.owner, e.bucket, e.key) > (:owner, :bucket, :key)
    ORDER BY e.owner, e.bucket, e.key LIMIT :limit"""
PURGE = "DELETE FROM remember_entries WHERE expires_at <= :now"
PURGE_USAGE = "DELETE FROM remember_usage WHERE count <= 0"
LEGACY = "SELECT 1 FROM remember_meta WHERE name = 'legacy'"
SETTLE_LEGACY = "DELETE FROM remember_meta WHERE name = 'legacy'"
#: The store's notes are rows of the table of store-wide facts, named ``note:NAME``.
NOTES = "SELECT substr(name, 6), value FROM remember_meta WHERE substr(name, 1, 5) = 'note:'"
NOTE = "INSERT OR REPLACE INTO remember_meta (name, value) VALUES ('note:' || :name, :value)"
FORGET_NOTE = "DELETE FROM remember_meta WHERE name = 'note:' || :name"


def check_quota(conn: sqlite3.Connection, params: dict[str, Any], quota: Quota, words: int) -> None:
    """Raise QuotaExceededError when the write in ``params`` (with ``words`` indexed) would take its bucket past
    ``quota``; its bytes count the bucket's indexed words too (``charged``)."""
    for attempt in range(2):  # on the first refusal, delete the bucket's expired rows and look again
        usage = conn.execute(USAGE, params).fetchone()
        count, size = (0, 0) if usage is None else (usage[0], charged(usage[1], usage[2]))
        old = conn.execute("SELECT length(data), expires_at FROM remember_entries WHERE " + AT, params).fetchone()
        replaced_live = old is not None and live(old[1], params["now"])
        count += old is None
        old_words = conn.execute(OLD_WORDS, params).fetchone()
        replaced = 0 if old is None else charged(old[0], 0 if old_words is None else old_words[0])
        new_size = size + charged(len(params["data"]), words) - replaced
        problem: QuotaExceededError | None = None
        if quota.values is not None and count > quota.values and not replaced_live:
            problem = QuotaExceededError("values", quota.values)
        elif quota.bytes is not None and new_size > quota.bytes and new_size > size:
            problem = QuotaExceededError("bytes", quota.bytes)
        if problem is None:
            return
        if attempt == 0 and conn.execute(TRIM, params).rowcount:
            continue
        raise problem


def live(expires_at: float | None, now: float) -> bool:
    """Whether a row with this deadline is still to be read at ``now``."""
    return expires_at is None or expires_at > now
