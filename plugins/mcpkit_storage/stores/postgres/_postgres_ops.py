"""The PostgreSQL store's steps inside a connection or transaction: a row or all rows of a query, a document's
postings, the quota check, and the advisory locks of the buckets a write touches."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

from psycopg import AsyncConnection

from .. import Postings, Quota, QuotaExceededError, Write, charged, first_written
from . import _postgres_sql as sql

__all__ = ["add_document", "check_quota", "live", "lock", "locks", "row", "rows", "swapping"]

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


async def check_quota(
    conn: Connection, params: dict[str, Any], quota: Quota, words: int, usage: Sequence[Any] | None = None
) -> None:
    """Raise QuotaExceededError when the write in ``params`` (with ``words`` indexed) would take its bucket past
    ``quota``; its bytes count the bucket's indexed words too (``charged``). ``usage``: ``sql.QUOTA``'s row, read
    already in this transaction (``sql.LOCK_ROW_QUOTA``)."""
    for attempt in range(2):  # on the first refusal, delete the bucket's expired rows and look again
        if usage is None or attempt:
            usage = await row(conn, sql.QUOTA, params)
        count, size, old_length, old_expires_at, indexed, old_words = usage
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


def swapping(write: Write, now: float) -> Callable[[Connection], Awaitable[bool]]:
    """The steps of one compare-and-set (``Store.swap``) inside a transaction that holds its buckets' locks."""
    owner, bucket, key, expected, data, expires_at, also, quota, index, created = write  # index: its postings
    params = {"owner": owner, "bucket": bucket, "key": key, "data": data, "expires_at": expires_at, "now": now}
    params.update(created=created, given=created is not None)

    async def body(conn: Connection) -> bool:
        usage = None
        if quota is None:
            found = await row(conn, sql.LOCK_ROW, params)
        else:  # the row and the bucket's usage in one round trip
            both = await row(conn, sql.LOCK_ROW_QUOTA, params)
            found, usage = (None if both[0] is None else both[:3]), both[3:]
        current = None if found is None else bytes(found[0])
        if current == data:
            return True  # this very swap, resent (its postings are there already)
        if current != expected:
            return False
        moved = [found]
        for address, there_expected in also:
            there = await row(conn, sql.LOCK_ROW, {**address._asdict(), "now": now})
            if (None if there is None else bytes(there[0])) != there_expected:
                return False
            moved.append(there)
        if also:  # a value moving between addresses keeps its first-write time
            params.update(created=first_written([r and (r[1], r[2]) for r in moved], now, created), given=True)
        if quota is not None:
            await check_quota(conn, params, quota, 0 if index is None else index.length, usage)
        await conn.execute(sql.PUT, params)
        await add_document(conn, params, index)
        for address, _ in also:
            await conn.execute(sql.DELETE, address._asdict())
        return True

    return body


def locks(buckets: Iterable[tuple[str, str]]) -> list[int]:
    return sorted({lock(owner, bucket) for owner, bucket in buckets})


def lock(owner: str, bucket: str) -> int:
    """The advisory lock of one owner's bucket: a signed 64-bit hash of both."""
    digest = hashlib.blake2b(f"{owner}\x00{bucket}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def live(expires_at: float | None, now: float) -> bool:
    return expires_at is None or expires_at > now
