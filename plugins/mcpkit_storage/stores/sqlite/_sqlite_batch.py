"""The SQLite store's batched reads and writes: a chunk of addresses read with a statement per ``READ_AT_ONCE``, and
the writes of a ``swap_many`` that expect a missing row and find none written with multi-row statements (rows,
documents, postings), not with three or four statements each. Each statement is one trip into SQLite, and on the
worker thread each trip gives the interpreter's lock back and waits to take it again."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from .. import Address, NotWholeError, Postings, Quota, QuotaExceededError, Write
from . import _sqlite_index as index_sql
from ._sqlite_index import sizes

__all__ = ["read_live", "swaps_within"]

#: The most addresses one statement reads (3 parameters each), and the most rows one statement writes.
READ_AT_ONCE = 256
WRITE_AT_ONCE = 128

#: One compare-and-set inside the batch's transaction: its parameters, its ``also``, quota and postings, and the rows
#: read already (None: read its row again).
OneSwap = Callable[[dict[str, Any], list[Any], Quota | None, Postings | None, dict[Address, Any] | None], bool]


@functools.lru_cache(maxsize=8)
def _read_sql(count: int) -> str:
    """One statement reading the live rows at ``count`` addresses (its parameters: each one's owner, bucket and key,
    then now)."""
    places = ", ".join(["(?, ?, ?)"] * count)
    return f"""WITH a(owner, bucket, key) AS (VALUES {places})
    SELECT e.owner, e.bucket, e.key, e.data, e.expires_at, e.created FROM a CROSS JOIN remember_entries e
    ON e.owner = a.owner AND e.bucket = a.bucket AND e.key = a.key WHERE e.expires_at IS NULL OR e.expires_at > ?"""


@functools.lru_cache(maxsize=8)
def _put_sql(count: int) -> str:
    """One statement writing ``count`` rows found missing (no live row: an expired one is replaced, and its
    first-write time with it, as ``PUT`` does)."""
    return (
        "INSERT INTO remember_entries (owner, bucket, key, data, expires_at, created) VALUES "
        + ", ".join(["(?, ?, ?, ?, ?, ?)"] * count)
        + """ ON CONFLICT (owner, bucket, key) DO UPDATE
    SET data = excluded.data, expires_at = excluded.expires_at, created = excluded.created"""
    )


def read_live(db: sqlite3.Connection, addresses: Sequence[Address], now: float) -> dict[Address, Any]:
    """The live rows (data, expires_at, created) at ``addresses`` (each distinct), by address: what ``GET`` reads
    at each."""
    found: dict[Address, Any] = {}
    start = 0
    for size in sizes(len(addresses), READ_AT_ONCE):
        params: list[Any] = [part for address in addresses[start : start + size] for part in address]
        params.append(now)
        start += size
        for owner, bucket, key, data, expires_at, created in db.execute(_read_sql(size), params):
            found[Address(owner, bucket, key)] = (data, expires_at, created)
    return found


def swaps_within(
    db: sqlite3.Connection, writes: Sequence[Write], now: float, whole: bool, one: OneSwap
) -> list[bool | QuotaExceededError]:
    """``swap_many``'s writes in order, inside its transaction. Every write's row is read in one go; a write that
    expects no row, finds none and has no ``also`` nor quota is written with the others like it, before the next
    write of another kind (which may read what they wrote, or count it against a quota); the others go one by one
    through ``one``. A write to an address an earlier one wrote or moved reads its row again. (A quota's trim deletes
    only expired rows, which no read sees.) ``whole``: NotWholeError at the first write that fails."""
    results: list[bool | QuotaExceededError] = []
    read = read_live(db, list(dict.fromkeys(Address(*write[:3]) for write in writes)), now)
    touched: set[Address] = set()
    missing: list[Write] = []
    for write in writes:
        owner, bucket, key, expected, data, expires_at, also, quota, postings, created = write
        address = Address(owner, bucket, key)
        known = None if address in touched else read
        touched.add(address)
        touched.update(moved for moved, _ in also)
        if known is not None and expected is None and not also and quota is None and address not in known:
            missing.append(write)
            results.append(True)
            continue
        _put_missing(db, missing, now)
        missing.clear()
        params: dict[str, Any] = {"owner": owner, "bucket": bucket, "key": key, "expected": expected}
        params.update(data=data, expires_at=expires_at, now=now, created=created, given=created is not None)
        try:  # a refusal comes before the write's first change (a trim of expired rows aside)
            results.append(one(params, list(also), quota, postings, known))
        except QuotaExceededError as exc:
            results.append(exc)
        if whole and results[-1] is not True:
            raise NotWholeError(results, len(writes))  # the transaction is rolled back
    _put_missing(db, missing, now)
    return results


def _put_missing(db: sqlite3.Connection, writes: list[Write], now: float) -> None:
    """Write ``writes`` (rows found missing, each address once), then their documents and postings."""
    start = 0
    for size in sizes(len(writes), WRITE_AT_ONCE):
        params: list[Any] = []
        for write in writes[start : start + size]:
            created = now if write.created is None else write.created
            params.extend((write.owner, write.bucket, write.key, write.data, write.expires_at, created))
        start += size
        db.execute(_put_sql(size), params)
    index_sql.add_many(db, [(write, postings) for write in writes if (postings := write.postings) is not None])
