"""The PostgreSQL store's steps inside a connection or transaction: a row or all rows of a query, a document's
postings, the quota check, and the advisory locks of the buckets a write touches."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from psycopg import AsyncConnection

from .. import Postings, Quota, QuotaExceededError, charged
from . import _postgres_sql as sql

__all__ = ["add_document", "check_quota", "live", "lock", "locks", "row", "rows"]

Connection = AsyncConnection[tuple[Any, ...]]


async def row(conn: Connection, query: str, params: Any) -> Any:
    return await (await conn.execute(query, params)).fetchone()


async def rows(conn: Connection, query: str, params: Any) -> list[Any]:
    return await (await conn.execute(query, params)).fetchall()


async def add_document(conn: Connection, params: dict[str, Any], index: Postings | None) -> None:
    """Give the entry just written its document and postings (none when ``index`` is None)."""
    if index is None:
        return
    added = await row(conn, sql.ADD_DOC, {**params, "length": index.length})
    terms = index.terms
    await conn.execute(sql.ADD_TERMS, {"doc": added[0], "terms": list(terms), "counts": list(terms.values())})


async def check_quota(conn: Connection, params: dict[str, Any], quota: Quota, words: int) -> None:
    """Raise QuotaExceededError when the write in ``params`` (with ``words`` indexed) would take its bucket past
    ``quota``; its bytes count the bucket's indexed words too (``charged``)."""
    for attempt in range(2):  # on the first refusal, delete the bucket's expired rows and look again
        count, size, old_length, old_expires_at, indexed, old_words = await row(conn, sql.QUOTA, params)
        count, size = int(count or 0), charged(int(size or 0), int(indexed or 0))
        replaced_live = old_length is not None and live(old_expires_at, params["now"])
        count += old_length is None
        new_size = size + charged(len(params["data"]), words) - charged(int(old_length or 0), int(old_words or 0))
        problem: QuotaExceededError | None = None
        if quota.values is not None and count > quota.values and not replaced_live:
            problem = QuotaExceededError("values", quota.values)
        elif quota.bytes is not None and new_size > quota.bytes and new_size > size:
            problem = QuotaExceededError("bytes", quota.bytes)
        if problem is None:
            return
        if attempt == 0 and (await conn.execute(sql.TRIM, params)).rowcount:
            continue
        raise problem


def locks(buckets: Iterable[tuple[str, str]]) -> list[int]:
    return sorted({lock(owner, bucket) for owner, bucket in buckets})


def lock(owner: str, bucket: str) -> int:
    """The advisory lock of one owner's bucket: a signed 64-bit hash of both."""
    digest = hashlib.blake2b(f"{owner}\x00{bucket}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def live(expires_at: float | None, now: float) -> bool:
    return expires_at is None or expires_at > now
