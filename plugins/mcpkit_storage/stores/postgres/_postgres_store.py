"""The PostgreSQL store: several server instances on one database, through psycopg 3's async connection pool."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg import AsyncConnection, errors
from psycopg_pool import AsyncConnectionPool, PoolTimeout

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
    without_password,
)
from . import _postgres_ops as ops
from . import _postgres_sql as sql
from ._postgres_schema import migrate

__all__ = ["PostgresStore"]

_T = TypeVar("_T")
Connection = AsyncConnection[tuple[Any, ...]]

#: Pool defaults: connections kept open and at most, and how long a call waits for one (seconds).
MIN_CONNECTIONS = 1
MAX_CONNECTIONS = 10
POOL_TIMEOUT = 5.0
SCAN_PAGE = 500
#: A write that lost a deadlock or serialization race to another transaction is run again, this many times in all.
WRITE_ATTEMPTS = 3
#: A call whose pooled connection the server had closed (a restart, an idle timeout) runs this many times in all.
STALE_ATTEMPTS = 2
#: Set on every connection: how long a statement may run, a lock be waited for, and a transaction sit idle (ms),
#: so a stalled call ends (``REMEMBER_STORE_UNAVAILABLE``) and a half-open connection cannot hold a bucket's
#: lock for every other instance until TCP gives up.
STATEMENT_TIMEOUT_MS = 30_000
LOCK_TIMEOUT_MS = 10_000
IDLE_IN_TRANSACTION_MS = 30_000
#: TCP keepalives (libpq's), so a connection to a database that vanished is found dead in about 25 s.
KEEPALIVES = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3}
#: What a broken or refusing database raises (a lost connection, a timeout, a read-only standby after a failover).
_OUTAGE = (psycopg.OperationalError, psycopg.InternalError)


class PostgresStore:
    """Keeps entries in the PostgreSQL database at ``url`` (``postgresql://USER@HOST:5432/DB``).

    ``create=False`` (the operator commands) opens only a database that already holds a remember store, and
    creates no table in any other.
    """

    def __init__(
        self,
        url: str,
        *,
        min_connections: int = MIN_CONNECTIONS,
        max_connections: int = MAX_CONNECTIONS,
        timeout: float = POOL_TIMEOUT,
        create: bool = True,
    ) -> None:
        self._url = url
        self._create = create
        self._sizes = (min_connections, max_connections)
        self._timeout = timeout
        self._pool: AsyncConnectionPool[Connection] | None = None
        self.legacy = False  # mcpkit 0.1 had no PostgreSQL store: nothing here is in its layout
        self.placed = False
        self.narrows = True

    def __repr__(self) -> str:
        return f"PostgresStore({self._where()!r})"

    def _where(self) -> str:
        """Which database, for messages: its URL without a password."""
        return "PostgreSQL at " + without_password(self._url)

    async def open(self) -> None:
        pool: AsyncConnectionPool[Connection] = AsyncConnectionPool(
            self._url,
            min_size=self._sizes[0],
            max_size=self._sizes[1],
            timeout=self._timeout,
            open=False,
            kwargs={"autocommit": True, **KEEPALIVES},
            configure=_configure,  # no check on each checkout (a round trip): a stale one is found by using it
            name="mcpkit-remember",
        )
        try:
            await pool.open(wait=True, timeout=self._timeout)
            async with pool.connection() as conn:
                await migrate(conn, repr(self), self._where(), create=self._create)
        except PoolTimeout as exc:
            await pool.close()
            raise StoreUnavailableError(f"Cannot reach the PostgreSQL remember store ({self!r}): {exc}") from exc
        except psycopg.Error as exc:
            await pool.close()
            raise StoreUnavailableError(f"Cannot open the PostgreSQL remember store ({self!r}): {exc}") from exc
        except BaseException:
            await pool.close()
            raise
        self._pool = pool

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def settle_legacy(self) -> None:
        self.legacy = False

    async def notes(self) -> dict[str, str]:
        return dict(await self._read(lambda conn: ops.rows(conn, sql.NOTES, {})))

    async def note(self, name: str, value: str | None) -> None:
        query = sql.FORGET_NOTE if value is None else sql.NOTE
        await self._write((), lambda conn: conn.execute(query, {"name": name, "value": value}))

    # -- reads --------------------------------------------------------------------------

    async def get(self, owner: str, bucket: str, key: str, now: float) -> Entry | None:
        params = {"owner": owner, "bucket": bucket, "key": key, "now": now}
        row = await self._read(lambda conn: ops.row(conn, sql.GET, params))
        return None if row is None else Entry(bytes(row[0]), row[1], row[2])

    async def get_many(self, addresses: Sequence[Address], now: float) -> list[Entry | None]:
        if not addresses:
            return []
        params = {
            "owners": [a.owner for a in addresses],
            "buckets": [a.bucket for a in addresses],
            "keys": [a.key for a in addresses],
            "now": now,
        }
        rows = await self._read(lambda conn: ops.rows(conn, sql.GET_MANY, params))
        found = {Address(o, b, k): Entry(bytes(data), expires, created) for o, b, k, data, expires, created in rows}
        return [found.get(address) for address in addresses]

    get_many_created = get_many  # its get_many reads each entry's created already

    async def entries(self, owner: str, bucket: str, now: float) -> list[tuple[str, Entry]]:
        params = {"owner": owner, "bucket": bucket, "now": now}
        rows = await self._read(lambda conn: ops.rows(conn, sql.ENTRIES, params))
        return [(key, Entry(bytes(data), expires_at, created)) for key, data, expires_at, created in rows]

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
        params: dict[str, Any] = {"owner": owner, "bucket": bucket, "now": now, "terms": list(terms)}

        async def snapshot(conn: Connection) -> Ranking:
            async with conn.transaction():  # one snapshot, so the statistics and the ranking agree
                await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                usage = await ops.row(conn, sql.SEARCH_USAGE, params)
                if usage is None:
                    return Ranking(Stats(0, 0, (0,) * len(terms)), [])
                expired, expired_length = await ops.row(conn, sql.SEARCH_EXPIRED, params) or (0, 0)
                counted = dict(await ops.rows(conn, sql.SEARCH_FREQUENCIES, params)) if terms else {}
                frequencies = tuple(int(counted.get(term, 0)) for term in terms)
                own = Stats(int(usage[0]) - int(expired), int(usage[1]) - int(expired_length), frequencies)
                chosen = stats or own
                if limit <= 0 or chosen.documents <= 0 or not terms:
                    return Ranking(own, [])
                ranking = {**params, "idfs": list(chosen.weights()), "average": chosen.average, "limit": limit}
                ranking.update((f"within{group}", list(held)) for group, held in enumerate(within))
                rows = await ops.rows(conn, sql.ranking(len(within)), ranking)
                return Ranking(own, [(key, float(score)) for key, score in rows])

        return await self._read(snapshot)

    async def scan(self) -> AsyncIterator[Record]:
        """Every entry, in primary-key pages, so no transaction spans a ``yield``."""
        statement, params = sql.SCAN_FIRST, {"limit": SCAN_PAGE}
        while True:
            page = dict(params)
            rows = await self._read(lambda conn, q=statement, page=page: ops.rows(conn, q, page))  # type: ignore[misc]
            for owner, bucket, key, data, expires_at, created, indexed in rows:
                yield Record(owner, bucket, key, Entry(bytes(data), expires_at, created), bool(indexed))
            if len(rows) < SCAN_PAGE:
                return
            owner, bucket, key = rows[-1][:3]
            statement, params = sql.SCAN_NEXT, {"owner": owner, "bucket": bucket, "key": key, "limit": SCAN_PAGE}

    # -- writes -------------------------------------------------------------------------

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

        async def body(conn: Connection) -> None:
            if quota is not None:
                await ops.check_quota(conn, params, quota, 0 if index is None else index.length)
            await conn.execute(sql.PUT, params)  # a replaced entry's document goes with its old data (a trigger)
            await ops.add_document(conn, params, index)

        await self._write([(owner, bucket)], body)

    async def delete(self, owner: str, bucket: str, key: str, now: float) -> bool:
        params = {"owner": owner, "bucket": bucket, "key": key}
        rows = await self._write([(owner, bucket)], lambda conn: ops.rows(conn, sql.DELETE, params))
        return any(ops.live(expires_at, now) for (expires_at,) in rows)

    async def delete_many(self, addresses: Sequence[Address], now: float) -> int:
        unique = list(dict.fromkeys(addresses))

        async def body(conn: Connection) -> int:
            gone = 0
            for address in unique:
                rows = await ops.rows(conn, sql.DELETE, address._asdict())
                gone += any(ops.live(expires_at, now) for (expires_at,) in rows)
            return gone

        return await self._write([(a.owner, a.bucket) for a in unique], body)

    async def delete_bucket(self, owner: str, bucket: str, now: float) -> int:
        params = {"owner": owner, "bucket": bucket}
        rows = await self._write([(owner, bucket)], lambda conn: ops.rows(conn, sql.DELETE_BUCKET, params))
        return sum(1 for (expires_at,) in rows if ops.live(expires_at, now))

    async def delete_owner(self, owner: str) -> int:
        async def body(conn: Connection) -> int:
            return (await conn.execute(sql.DELETE_OWNER, {"owner": owner})).rowcount

        return await self._write((), body)

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
        write = Write(owner, bucket, key, expected, data, expires_at, also, quota, index, created)
        return await self._write([(owner, bucket), *((a.owner, a.bucket) for a, _ in also)], ops.swapping(write, now))

    async def swap_many(
        self, writes: Sequence[Write], now: float, *, whole: bool = False
    ) -> list[bool | QuotaExceededError]:
        """Every write in one transaction (one commit), after the locks of every bucket they touch; ``whole``:
        rolled back at the first write that fails."""
        if not writes:
            return []
        buckets = [(a.owner, a.bucket) for write in writes for a in (Address(*write[:3]), *(a for a, _ in write.also))]
        swaps = [ops.swapping(write, now) for write in writes]

        async def body(conn: Connection) -> list[bool | QuotaExceededError]:
            results: list[bool | QuotaExceededError] = []
            for swap in swaps:
                try:  # a refusal comes before the write's first change (a trim of expired rows aside)
                    results.append(await swap(conn))
                except QuotaExceededError as exc:
                    results.append(exc)
                if whole and results[-1] is not True:
                    raise NotWholeError(results, len(swaps))  # the transaction is rolled back
            return results

        try:
            return await self._write(buckets, body)
        except NotWholeError as exc:
            return exc.results

    async def purge_expired(self, now: float) -> int:
        async def body(conn: Connection) -> int:
            purged = (await conn.execute(sql.PURGE, {"now": now})).rowcount
            await conn.execute(sql.PURGE_USAGE)
            return purged

        return await self._write((), body)

    # -- connections, transactions, outages ----------------------------------------------

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[Connection]:
        if self._pool is None:
            raise RuntimeError(f"{self!r} is not open; call open() first")
        try:
            async with self._pool.connection() as conn:
                yield conn
        except PoolTimeout as exc:
            raise StoreUnavailableError(f"The PostgreSQL remember store ({self!r}) gave no connection: {exc}") from exc

    async def _read(self, body: Callable[[Connection], Awaitable[_T]]) -> _T:
        """``body`` on a pooled connection; once more on a new one if the first had been closed by the server
        (a restart, an idle timeout): a read has nothing to undo."""
        for attempt in range(1, STALE_ATTEMPTS + 1):
            conn: Connection | None = None
            try:
                async with self._connection() as conn:
                    return await body(conn)
            except _OUTAGE as exc:
                if attempt == STALE_ATTEMPTS or conn is None or not conn.broken:
                    raise StoreUnavailableError(f"The PostgreSQL remember store ({self!r}) failed: {exc}") from exc
                await self._drop_stale()
        raise AssertionError("unreachable")  # pragma: no cover

    async def _drop_stale(self) -> None:
        """After a connection the server had closed: check the pool's idle ones (the server restarted, they all
        are), so that the next try gets a live one."""
        if self._pool is not None:
            await self._pool.check()

    async def _write(self, buckets: Iterable[tuple[str, str]], body: Callable[[Connection], Awaitable[_T]]) -> _T:
        """``body`` in one transaction, after the advisory locks of ``buckets`` (in one order, so two writes never
        wait for each other's; none for the writes that sweep a whole owner or the store).

        BEGIN and the locks are one round trip. A transaction that lost a deadlock or a serialization race runs
        again, and so does one whose pooled connection the server had closed before it committed (nothing of it
        was kept); a connection lost while committing is the one "may or may not have been applied".
        """
        begin = ";".join(["BEGIN", *(f"SELECT pg_advisory_xact_lock({lock})" for lock in ops.locks(buckets))])
        for attempt in range(1, WRITE_ATTEMPTS + 1):
            committing, conn = False, None
            try:
                async with self._connection() as conn:
                    try:
                        await conn.execute(begin, prepare=False)  # several statements: the simple protocol
                        result = await body(conn)
                        committing = True
                        await conn.commit()
                    except BaseException:
                        if not committing and not conn.broken:
                            with contextlib.suppress(psycopg.Error):  # the pool rolls back what this could not
                                await conn.rollback()
                        raise
                    return result
            except (errors.DeadlockDetected, errors.SerializationFailure):
                if attempt == WRITE_ATTEMPTS:
                    raise StoreUnavailableError(f"The PostgreSQL remember store ({self!r}) is too busy") from None
            except _OUTAGE as exc:
                if committing or conn is None or not conn.broken or attempt >= STALE_ATTEMPTS:
                    raise StoreUnavailableError(
                        f"The PostgreSQL remember store ({self!r}) failed: {exc}", maybe_applied=committing
                    ) from exc
                await self._drop_stale()
        raise AssertionError("unreachable")  # pragma: no cover


async def _configure(conn: Connection) -> None:
    """Every new connection's session settings (the pool runs this before handing it out)."""
    await conn.execute(
        f"SET statement_timeout = {STATEMENT_TIMEOUT_MS}; SET lock_timeout = {LOCK_TIMEOUT_MS};"
        f" SET idle_in_transaction_session_timeout = {IDLE_IN_TRANSACTION_MS};"
        " SET jit = off"  # compiling a short query took longer (30 ms) than running it
    )
