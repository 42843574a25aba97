"""A run of writes told of (``bulk_writes``, as an import does): the SQLite store merges its search index in larger
steps, less often, and merges what the run left as it ends; a search meanwhile finds every value, ranked as after
the merge. Another store takes the same run unchanged."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mcpkit_storage.stores import Postings, Write, bulk_writes
from mcpkit_storage.stores.memory._memory_store import MemoryStore
from mcpkit_storage.stores.sqlite import _sqlite_index
from mcpkit_storage.stores.sqlite._sqlite_store import SQLiteStore
from stores.conftest import OWNER
from stores.test_sqlite_index import failing_step

#: Terms every value holds, and one of its own.
SHARED = (7, 8)


def batch(start: int, count: int, *, again: bool = False) -> list[Write]:
    """Values with 3 postings each; ``again``: each replacing the value ``batch`` wrote first at its key."""
    return [
        Write(
            OWNER,
            "user",
            f"k{n:04}",
            b"v%d" % n if again else None,
            b"w%d" % n if again else b"v%d" % n,
            None,
            postings=Postings({1000 + n: 1, **dict.fromkeys(SHARED, 1)}, 3),
        )
        for n in range(start, start + count)
    ]


@contextlib.asynccontextmanager
async def opened(path: Path, merge_every: int = _sqlite_index.MERGE_EVERY) -> AsyncIterator[SQLiteStore]:
    store = SQLiteStore(path, merge_every=merge_every)
    await store.open()
    try:
        yield store
    finally:
        await store.close()


def fresh(path: Path) -> int:
    """The postings not merged yet."""
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT count(*) FROM remember_fresh").fetchone()[0])


def stale(path: Path) -> int:
    """The replaced documents whose merged postings are not deleted yet."""
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT count(*) FROM remember_stale").fetchone()[0])


async def test_a_run_of_writes_merges_less_often_searches_the_same_and_is_merged_as_it_ends(tmp_path: Path) -> None:
    path, now = tmp_path / "remember.db", time.time()
    async with opened(path, merge_every=1) as store:  # outside a run: a merge step after every change
        async with bulk_writes(store):
            async with bulk_writes(store):  # runs may nest: the outer one's end merges
                assert await store.swap_many(batch(0, 100), now) == [True] * 100
            assert await store.swap_many(batch(100, 100), now) == [True] * 100
            assert fresh(path) == 200 * 3  # fewer changes than a run's merge waits for: none merged
            during = await store.search(OWNER, "user", [7, 1150], now, limit=3)
        assert fresh(path) == 0
        after = await store.search(OWNER, "user", [7, 1150], now, limit=3)
        assert after.stats == during.stats
        assert [key for key, _ in after.hits] == [key for key, _ in during.hits]
        assert [score for _, score in after.hits] == pytest.approx([score for _, score in during.hits])
        assert during.hits[0][0] == "k0150"
        assert await store.swap_many(batch(200, 10), now) == [True] * 10
        assert fresh(path) == 0  # outside the run: merged at once again


async def test_a_run_longer_than_a_merge_waits_for_is_merged_in_steps_as_it_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_sqlite_index, "BULK_MERGE_EVERY", 150)
    monkeypatch.setattr(_sqlite_index, "BULK_MERGE_STEP", 90)  # about 30 values' postings a step
    path, now = tmp_path / "remember.db", time.time()
    async with opened(path) as store, bulk_writes(store):
        await store.swap_many(batch(0, 100), now)
        assert fresh(path) == 300
        await store.swap_many(batch(100, 100), now)  # 200 changes: one step, of about 90 postings
        assert 600 - 90 - 3 <= fresh(path) <= 600 - 90
        await store.swap_many(batch(200, 1), now)  # more was left: the next change takes the next step
        assert 603 - 180 - 6 <= fresh(path) <= 603 - 180
    assert fresh(path) == 0  # what is left, merged as the run ends


async def test_a_store_without_a_cheaper_way_takes_the_run_unchanged() -> None:
    store, now = MemoryStore(), time.time()
    async with bulk_writes(store):
        assert await store.swap_many(batch(0, 5), now) == [True] * 5
    assert [key for key, _ in (await store.search(OWNER, "user", [1003], now, limit=5)).hits] == ["k0003"]


async def test_the_end_of_a_run_merges_all_it_left_in_bounded_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_sqlite_index, "BULK_MERGE_EVERY", 10_000)  # none during the run
    monkeypatch.setattr(_sqlite_index, "BULK_MERGE_STEP", 90)  # 600 postings left: 7 steps
    path, now = tmp_path / "remember.db", time.time()
    async with opened(path) as store:
        async with bulk_writes(store):
            await store.swap_many(batch(0, 200), now)
            assert fresh(path) == 600
        assert fresh(path) == 0  # with the store still open: not left to its close


async def test_a_larger_step_deletes_as_many_more_replaced_documents_postings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, now = tmp_path / "remember.db", time.time()
    async with opened(path, merge_every=1) as store:
        await store.swap_many(batch(0, 300), now)  # merged at once
        assert (fresh(path), stale(path)) == (0, 0)
        monkeypatch.setattr(_sqlite_index, "BULK_MERGE_EVERY", 100)
        monkeypatch.setattr(_sqlite_index, "BULK_MERGE_STEP", 4 * _sqlite_index.MERGE_STEP)  # 4 x 64 stale a step
        async with bulk_writes(store):
            assert await store.swap_many(batch(0, 300, again=True), now) == [True] * 300
            assert stale(path) == 300 - 4 * 64  # one step, after the call's 300 changes
        assert (fresh(path), stale(path)) == (0, 0)


async def failing_run(store: SQLiteStore, now: float) -> None:
    async with bulk_writes(store):
        await store.swap_many(batch(0, 10), now)
        raise RuntimeError("the file went bad")


async def test_a_run_that_fails_ends_all_the_same(tmp_path: Path) -> None:
    path, now = tmp_path / "remember.db", time.time()
    async with opened(path, merge_every=1) as store:
        with pytest.raises(RuntimeError, match="the file went bad"):
            await failing_run(store, now)
        assert fresh(path) == 0
        await store.swap_many(batch(10, 1), now)
        assert fresh(path) == 0  # no longer in the run: merged at the change, as merge_every says


async def test_the_end_of_a_run_merges_what_a_failed_step_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_sqlite_index, "BULK_MERGE_EVERY", 100)
    path, now = tmp_path / "remember.db", time.time()
    merge_step = _sqlite_index.merge_step
    async with opened(path) as store:
        async with bulk_writes(store):
            monkeypatch.setattr(_sqlite_index, "merge_step", failing_step("database is locked"))
            await store.swap_many(batch(0, 100), now)  # its step fails: another process held the write lock
            monkeypatch.setattr(_sqlite_index, "merge_step", merge_step)
            assert fresh(path) == 300
        assert fresh(path) == 0  # at the run's end, with no change after the failure
