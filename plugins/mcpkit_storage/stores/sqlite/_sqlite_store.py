"""The SQLite store: one file, shareable by several server processes."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import sqlite3
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from mcpkit_search import Stats

from .. import (
    Address,
    Entry,
    Expectation,
    NotWholeError,
    Postings,
    Quota,
    QuotaExceededError,
    Ranking,
    Record,
    StoreUnavailableError,
    Write,
    first_written,
)
from . import _sqlite_batch as batch
from . import _sqlite_index as index_sql
from . import _sqlite_sql as statements
from ._merge_schedule import MergeSchedule
from ._sqlite_connect import connect
from ._sqlite_index import changes_written, one_change

__all__ = ["SQLiteStore"]

_T = TypeVar("_T")
_Params = Mapping[str, object]

SCAN_PAGE = 500
#: Merge steps the end of a run of writes (``bulk``) takes at most; past them (other processes writing as fast as
#: they merge), the ordinary schedule merges the rest.
RUN_END_STEPS = 64


class SQLiteStore:
    """Keeps entries in the SQLite file at ``path``; its directory must already exist.

    ``merge_every``: the changes after which this instance merges the search index's fresh postings
    (``_sqlite_index``); tests give 1, to merge at every change. ``create=False`` (the operator commands)
    opens only a file that already holds a remember store, and changes nothing in any other.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, merge_every: int = index_sql.MERGE_EVERY, create: bool = True
    ) -> None:
        self._path = Path(path)
        self._create = create
        self._executor: ThreadPoolExecutor | None = None
        self._conn: sqlite3.Connection | None = None
        self._merging = MergeSchedule(self, merge_every, self._transaction, self._db)
        self.legacy = False
        self.placed = False
        self.narrows = True

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self._path)!r})"

    def watch_merges(self, watch: Callable[[int, int, bool], None], wanted: Callable[[], bool]) -> None:
        """Tell ``watch`` of each merge step a call's change makes, in its context, while ``wanted()``."""
        self._merging.watch.set(watch, wanted)

    async def open(self) -> None:
        """Open the file on the worker thread, switch to WAL and create or migrate the schema."""
        if not self._create and not self._path.is_file():
            raise StoreUnavailableError(
                f"There is no SQLite remember store at {str(self._path)!r}: no such file "
                f"({str(self._path.absolute())!r}); nothing was created. A server makes the file when it first "
                "starts; check the path."
            )
        if not self._path.parent.is_dir():
            raise StoreUnavailableError(
                f"Cannot open the SQLite remember store at {str(self._path)!r}: its directory "
                f"{str(self._path.parent)!r} does not exist. Create it first or choose another path."
            )
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcpkit-sqlite")
        try:
            self._conn = await self._run(connect, self._path, self._create)
            self.legacy = await self._run(self._fetchone, statements.LEGACY, {}) is not None
        except BaseException:
            self._executor.shutdown(wait=False)
            self._executor = None
            raise

    async def close(self) -> None:
        executor, conn = self._executor, self._conn
        if executor is None:
            return
        try:
            if conn is not None:
                await asyncio.get_running_loop().run_in_executor(executor, self._close_connection, conn)
        finally:
            executor.shutdown(wait=True)
            self._executor = self._conn = None

    async def settle_legacy(self) -> None:
        await self._run(self._rowcount, statements.SETTLE_LEGACY, {})
        self.legacy = False

    async def notes(self) -> dict[str, str]:
        return dict(await self._run(self._fetchall, statements.NOTES, {}))

    async def note(self, name: str, value: str | None) -> None:
        statement = statements.FORGET_NOTE if value is None else statements.NOTE
        await self._run(self._rowcount, statement, {"name": name, "value": value})

    async def get(self, owner: str, bucket: str, key: str, now: float) -> Entry | None:
        params = {"owner": owner, "bucket": bucket, "key": key, "now": now}
        row = await self._run(self._fetchone, statements.GET, params)
        return None if row is None else Entry(*row)

    async def get_many(self, addresses: Sequence[Address], now: float) -> list[Entry | None]:
        return await self._run(self._get_many, list(addresses), now)

    get_many_created = get_many  # its get_many reads each entry's created already

    async def put(
        self,
        owner: str,
        bucket: str,
        key: str,
        data: bytes,
        expires_at: float | None,
        now: float,
        quota: Quota | None = None,
        index: Postings | None = None,
        *,
        created: float | None = None,
    ) -> None:
        params = {"owner": owner, "bucket": bucket, "key": key, "data": data, "expires_at": expires_at, "now": now}
        params.update(created=created, given=created is not None)
        if quota is None and index is None:
            await self._run(self._changing, one_change, self._rowcount, statements.PUT, params)
        else:
            await self._run(self._changing, one_change, self._transaction, self._put_within, params, quota, index)

    async def delete(self, owner: str, bucket: str, key: str, now: float) -> bool:
        params = {"owner": owner, "bucket": bucket, "key": key}
        rows = await self._run(self._changing, len, self._fetchall, statements.DELETE, params)
        return any(statements.live(expires_at, now) for (expires_at,) in rows)

    async def delete_many(self, addresses: Sequence[Address], now: float) -> int:
        return await self._run(self._changing, int, self._transaction, self._delete_within, list(addresses), now)

    async def entries(self, owner: str, bucket: str, now: float) -> list[tuple[str, Entry]]:
        params = {"owner": owner, "bucket": bucket, "now": now}
        rows = await self._run(self._fetchall, statements.ENTRIES, params)
        return [(key, Entry(data, expires_at, created)) for key, data, expires_at, created in rows]

    async def delete_bucket(self, owner: str, bucket: str, now: float) -> int:
        params = {"owner": owner, "bucket": bucket}
        rows = await self._run(self._changing, len, self._fetchall, statements.DELETE_BUCKET, params)
        return sum(1 for (expires_at,) in rows if statements.live(expires_at, now))

    async def delete_owner(self, owner: str) -> int:
        """Delete every entry of ``owner`` and, in the same transaction, a merge takes their postings out of the
        file: if it cannot, nothing is deleted and the call fails (``purge --user`` can be run again)."""
        return await self._run(self._delete_owner_merged, owner)

    async def swap(
        self,
        owner: str,
        bucket: str,
        key: str,
        expected: bytes | None,
        data: bytes,
        expires_at: float | None,
        now: float,
        *,
        also: Sequence[Expectation] = (),
        quota: Quota | None = None,
        index: Postings | None = None,
        created: float | None = None,
    ) -> bool:
        params: dict[str, Any] = {"owner": owner, "bucket": bucket, "key": key, "expected": expected, "data": data}
        params.update(expires_at=expires_at, now=now, created=created, given=created is not None)
        if not also and quota is None and index is None:  # one statement
            sql = statements.SWAP_ABSENT if expected is None else statements.SWAP_EQUAL
            written: int = await self._run(self._changing, int, self._rowcount, sql, params)
            return written == 1
        swap, also_list = self._swap_within, list(also)
        return bool(await self._run(self._changing, int, self._transaction, swap, params, also_list, quota, index))

    async def swap_many(
        self, writes: Sequence[Write], now: float, *, whole: bool = False
    ) -> list[bool | QuotaExceededError]:
        """Every write in one transaction (one commit, one trip to the worker thread); ``whole``: rolled back at
        the first write that fails."""
        if not writes:
            return []
        swaps = self._swaps_within
        try:
            results: list[bool | QuotaExceededError] = await self._run(
                self._changing, changes_written, self._transaction, swaps, list(writes), now, whole
            )
        except NotWholeError as exc:
            return exc.results
        return results

    async def search(
        self,
        owner: str,
        bucket: str,
        terms: Sequence[int],
        now: float,
        *,
        limit: int,
        stats: Stats | None = None,
        within: Sequence[Sequence[int]] = (),
    ) -> Ranking:
        params = {"owner": owner, "bucket": bucket, "now": now}
        # The statistics and the ranking as of one moment (a read transaction), so they agree with each other.
        snapshot = functools.partial(self._transaction, index_sql.search, begin="BEGIN")
        return await self._run(snapshot, self._db(), params, list(terms), limit, stats, within)

    async def scan(self) -> AsyncIterator[Record]:
        """Every entry, read in primary-key pages so no read transaction spans a ``yield``."""
        sql, params = statements.SCAN_FIRST, {"limit": SCAN_PAGE}
        while True:
            rows = await self._run(self._fetchall, sql, params)
            for owner, bucket, key, data, expires_at, created, indexed in rows:
                yield Record(owner, bucket, key, Entry(data, expires_at, created), bool(indexed))
            if len(rows) < SCAN_PAGE:
                return
            owner, bucket, key = rows[-1][:3]
            sql, params = statements.SCAN_NEXT, {"owner": owner, "bucket": bucket, "key": key, "limit": SCAN_PAGE}

    async def purge_expired(self, now: float) -> int:
        purged: int = await self._run(self._changing, int, self._rowcount, statements.PURGE, {"now": now})
        await self._run(self._rowcount, statements.PURGE_USAGE, {})
        return purged

    # -- on the worker thread ---------------------------------------------------------

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

    def _transaction(self, body: Callable[..., _T], *args: Any, begin: str = "BEGIN IMMEDIATE") -> _T:
        """Run ``body(*args)`` in one transaction (``BEGIN IMMEDIATE``: with the write lock), committed if it returns;
        whatever fails (``body``, or the ``COMMIT`` itself: a full disk) rolls it back, so the connection never stays
        inside one that later autocommit writes would silently join."""
        db = self._db()
        db.execute(begin)
        try:
            result = body(*args)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                with contextlib.suppress(sqlite3.Error):  # the first error is the one to report
                    db.execute("ROLLBACK")
            raise
        return result

    def _get_many(self, addresses: list[Address], now: float) -> list[Entry | None]:
        """The entries at ``addresses`` as of one moment: a read transaction (a WAL snapshot), so a value
        another process moves between two of them in one transaction is seen at exactly one."""
        return self._transaction(self._read_many, addresses, now, begin="BEGIN")

    def _read_many(self, addresses: list[Address], now: float) -> list[Entry | None]:
        found = batch.read_live(self._db(), list(dict.fromkeys(addresses)), now)
        return [None if (row := found.get(address)) is None else Entry(*row) for address in addresses]

    def _delete_within(self, addresses: list[Address], now: float) -> int:
        gone = 0
        for address in dict.fromkeys(addresses):
            rows = self._fetchall(statements.DELETE, address._asdict())
            gone += any(statements.live(expires_at, now) for (expires_at,) in rows)
        return gone

    def _put_within(self, params: dict[str, Any], quota: Quota | None, index: Postings | None) -> None:
        if quota is not None:
            statements.check_quota(self._db(), params, quota, 0 if index is None else index.length)
        self._rowcount(statements.PUT, params)  # a replaced entry's document goes with its old data (a trigger)
        self._index(params, index)

    def _index(self, params: dict[str, Any], index: Postings | None) -> None:
        """Give the entry just written its document and postings (none when ``index`` is None)."""
        if index is not None:
            index_sql.add(self._db(), params, index)

    def _changing(self, changes: Callable[[_T], int], call: Callable[..., _T], *args: Any) -> _T:
        """``call(*args)``, then count the changes to the index it made (``changes`` of its result), merging when
        due (``MergeSchedule``): in the same job on the worker thread, after the call's commit."""
        result = call(*args)
        self._merging.changed(changes(result))
        return result

    @contextlib.asynccontextmanager
    async def bulk(self) -> AsyncIterator[None]:
        """While in it, this instance merges the search index's fresh postings in larger steps, less often
        (``BULK_MERGE_EVERY`` changes, ``BULK_MERGE_STEP`` postings): a long run of writes (an import) costs a
        fraction of the disk writes, and a search meanwhile reads more fresh postings. Leaving it merges what is
        left in such steps, a job each (other calls take their turns between them), at most ``RUN_END_STEPS``."""
        self._merging.bulk += 1
        try:
            yield
        finally:
            self._merging.bulk -= 1
            if not self._merging.bulk and self._executor is not None and self._merging.owed:
                for _ in range(RUN_END_STEPS):  # more is left after one step only of a run of dense values
                    if not await self._run(self._merging.merge, True, index_sql.BULK_MERGE_STEP):
                        break

    def _close_connection(self, conn: sqlite3.Connection) -> None:
        """Merge what this instance left unmerged, then close: the file is left with its index merged."""
        try:
            if self._merging.owed:
                self._merging.merge()
        finally:
            conn.close()

    def _delete_owner_merged(self, owner: str) -> int:
        deleted = self._transaction(self._delete_owner_within, owner)
        self._merging.merged()  # once committed: a merge rolled back with its commit is still owed
        return deleted

    def _delete_owner_within(self, owner: str) -> int:
        deleted = self._rowcount(statements.DELETE_OWNER, {"owner": owner})
        index_sql.merge(self._db())
        return deleted

    def _swap_within(
        self,
        params: dict[str, Any],
        also: list[Expectation],
        quota: Quota | None,
        index: Postings | None,
        read: dict[Address, Any] | None = None,
    ) -> bool:
        """One compare-and-set; ``read``: the live rows read already in this transaction (by a batch), of addresses
        no write of the batch has touched since."""
        row = (
            self._fetchone(statements.GET, params)
            if read is None
            else read.get(Address(params["owner"], params["bucket"], params["key"]))
        )
        current = None if row is None else bytes(row[0])
        if current == params["data"]:
            return True  # this very swap, resent (its postings are there already)
        if current != params["expected"]:
            return False
        moved = [row]
        for address, expected in also:
            there = self._fetchone(statements.GET, {**address._asdict(), "now": params["now"]})
            if (None if there is None else bytes(there[0])) != expected:
                return False
            moved.append(there)
        if also and not params["given"]:  # a value moving between addresses keeps its first-write time
            params.update(created=first_written([r and r[1:] for r in moved], params["now"], None), given=True)
        if quota is not None:
            statements.check_quota(self._db(), params, quota, 0 if index is None else index.length)
        self._rowcount(statements.PUT, params)
        self._index(params, index)
        for address, _ in also:
            self._rowcount(statements.DELETE, address._asdict())
        return True

    def _swaps_within(self, writes: list[Write], now: float, whole: bool) -> list[bool | QuotaExceededError]:
        return batch.swaps_within(self._db(), writes, now, whole, self._swap_within)

    async def _run(self, call: Callable[..., _T], *args: Any) -> _T:
        """Run ``call(*args)`` on the worker thread; SQLite failures become StoreUnavailableError."""
        if self._executor is None:
            raise RuntimeError(f"{self!r} is not open; call open() first")
        try:
            job, given = self._merging.watch.job(call, args)  # a merge is told of in the call's context
            return await asyncio.get_running_loop().run_in_executor(self._executor, job, *given)
        except sqlite3.OperationalError as exc:
            raise StoreUnavailableError(f"The SQLite remember store at {str(self._path)!r} failed: {exc}") from exc
