"""The SQLite store's batched path: a ``swap_many`` writes the rows it expects and finds missing with multi-row
statements, and ``get_many`` reads its addresses a statement per few hundred. Both leave and read exactly what the
same calls one at a time do: the same rows, first-write times, documents, postings and usage. (Document numbers may
differ where a row replaces an expired, unmerged document of the highest number; this mix has none.)"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from mcpkit_storage.stores import Address, Postings, Quota, QuotaExceededError, Write
from mcpkit_storage.stores.sqlite._sqlite_store import SQLiteStore
from stores.conftest import OWNER

TABLES = ("remember_entries", "remember_docs", "remember_fresh", "remember_usage", "remember_stale")


def postings(number: int) -> Postings | None:
    """Every third write unindexed (as a change history is), the others with a few terms of their own and shared."""
    if number % 3 == 2:
        return None
    return Postings({number: 1 + number % 2, 10_000 + number % 7: 2, 99: 1}, 4 + number % 5)


def writes(now: float) -> list[Write]:
    """200 writes (more than one statement's rows) of each kind the batch meets, in an order that mixes them."""
    made = [
        Write(OWNER, "user", f"k{n:03}", None, b"v%d" % n, None if n % 4 else now + 60, postings=postings(n))
        for n in range(200)
    ]
    made[5] = made[5]._replace(created=now - 500)  # a first-write time given (an import's)
    made[17] = made[17]._replace(key="expired")  # an expired row there: replaced, its first-write time now
    made[30] = made[30]._replace(key="live")  # a live row there: refused
    made[31] = made[31]._replace(key="same", data=b"same")  # this very write, resent: answered True
    made[40] = Write(OWNER, "user", "k039", b"v39", b"again", None, postings=postings(1))  # written just before
    made[41] = Write(OWNER, "user", "k041", None, b"moved", None, also=[(Address(OWNER, "user", "k020"), b"v20")])
    made[60] = made[60]._replace(quota=Quota(values=1000, bytes=None))  # counts what the batch wrote before it
    made[70] = Write(OWNER, "user", "k020", None, b"after the move", None, postings=postings(4))
    return made


async def filled(path: Path, now: float) -> SQLiteStore:
    store = SQLiteStore(path, merge_every=1_000_000)  # no merge: the fresh postings are compared
    await store.open()
    await store.put(OWNER, "user", "expired", b"old", now - 1, now - 100, created=now - 100)
    await store.put(OWNER, "user", "live", b"kept", None, now)
    await store.put(OWNER, "user", "same", b"same", None, now)
    return store


def tables(path: Path) -> dict[str, list[tuple[object, ...]]]:
    with sqlite3.connect(path) as db:
        return {table: sorted(db.execute(f"SELECT * FROM {table}").fetchall(), key=repr) for table in TABLES}


async def test_a_batch_leaves_what_the_same_swaps_one_at_a_time_leave(tmp_path: Path) -> None:
    now = time.time()
    one, many = await filled(tmp_path / "one.db", now), await filled(tmp_path / "many.db", now)
    try:
        answers = []
        for write in writes(now):
            owner, bucket, key, expected, data, expires_at, also, quota, index, created = write
            args = (owner, bucket, key, expected, data, expires_at, now)
            answers.append(await one.swap(*args, also=also, quota=quota, index=index, created=created))
        assert await many.swap_many(writes(now), now) == answers
        assert answers.count(False) == 1  # the live row's
        addresses = [Address(OWNER, "user", key) for key in ("expired", "k020", "nothing", "k004", "k004")]
        addresses += [Address(OWNER, "user", f"k{n:03}") for n in range(300)]
        assert await many.get_many(addresses, now) == [await one.get(*address, now) for address in addresses]
    finally:
        await one.close()
        await many.close()
    assert tables(tmp_path / "many.db") == tables(tmp_path / "one.db")


async def test_a_whole_batch_refused_part_way_writes_nothing(tmp_path: Path) -> None:
    now = time.time()
    store = await filled(tmp_path / "remember.db", now)
    try:
        before = tables(tmp_path / "remember.db")
        batch = writes(now)
        assert await store.swap_many(batch, now, whole=True) == [False] * 200  # the live row's write: none made
        assert tables(tmp_path / "remember.db") == before  # the 29 rows written before it, rolled back
        batch[30] = batch[30]._replace(key="k030", quota=Quota(values=20, bytes=None))  # 2 there, 27 written before
        results = await store.swap_many(batch, now, whole=True)
        assert isinstance(results.pop(30), QuotaExceededError)
        assert results == [False] * 199
        assert tables(tmp_path / "remember.db") == before
    finally:
        await store.close()
