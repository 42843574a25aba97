"""The SQLite store's search index in batches: fresh postings, merges, stale postings, and schema 2 files.

The store contract suite runs on SQLite twice (``sqlite``, whose postings stay fresh, and ``sqlite-merged``,
merged at every change); these tests mix the two states in one store, and look at the file itself.
"""

from __future__ import annotations

import logging
import random
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from mcpkit_search import Stats
from mcpkit_storage.stores._store import Postings, Ranking, StoreUnavailableError
from mcpkit_storage.stores.sqlite import _sqlite_index as sqlite_index
from mcpkit_storage.stores.sqlite._sqlite_schema import _SCHEMA_1, _SCHEMA_2
from mcpkit_storage.stores.sqlite._sqlite_store import SQLiteStore
from stores.test_sqlite_store import CommitFailsOnce

OWNER, OTHER, BUCKET = "0f3.aaaa", "0f3.bbbb", "b" * 32
TERMS = list(range(100, 130))


def postings(rng: random.Random) -> Postings:
    terms = {term: rng.randint(1, 3) for term in rng.sample(TERMS, rng.randint(1, 8))}
    return Postings(terms, sum(terms.values()))


def counts(path: Path) -> dict[str, int]:
    with sqlite3.connect(path) as db:
        tables = ("remember_terms", "remember_fresh", "remember_stale")
        counted = {table: db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in tables}
        counted["fresh docs"] = db.execute("SELECT count(*) FROM remember_docs WHERE fresh IS NOT NULL").fetchone()[0]
    return counted


def failing_step(problem: str) -> Callable[[sqlite3.Connection, int | None], bool]:
    """A merge step that fails as SQLite does with ``problem``."""

    def failing(db: sqlite3.Connection, budget: int | None = None) -> bool:
        raise sqlite3.OperationalError(problem)

    return failing


async def reopened(store: SQLiteStore) -> None:
    """Close and open ``store`` again: closing merges what it left unmerged."""
    await store.close()
    await store.open()


async def searches(store: SQLiteStore, now: float) -> list[Ranking]:
    return [await store.search(OWNER, BUCKET, terms, now, limit=50) for terms in ([100], [101, 107], TERMS[:12])]


async def test_rankings_are_the_same_whatever_has_been_merged(tmp_path: Path) -> None:
    """The same writes, rewrites and deletes on a store that merges at every change and on a file shared by two
    instances (two server processes) that merge every 7 and every 11 changes, each change made by one of them:
    at every step all three rank alike, with fresh, merged and stale postings mixed in the shared file, each
    instance merging the other's postings too."""
    now, rng = time.time(), random.Random(20261203)
    merged = SQLiteStore(tmp_path / "merged.db", merge_every=1)
    sharing = [SQLiteStore(tmp_path / "batched.db", merge_every=every) for every in (7, 11)]
    for store in (merged, *sharing):
        await store.open()
    for step in range(160):
        key, index = f"k{rng.randrange(40)}", postings(rng)
        action = rng.random()
        for store in (merged, rng.choice(sharing)):
            if action < 0.75:
                await store.put(OWNER, BUCKET, key, b"%d" % step, None, now, index=index)
            elif action < 0.9:
                await store.delete(OWNER, BUCKET, key, now)
            else:  # a write without postings over an indexed value takes its document away
                await store.put(OWNER, BUCKET, key, b"plain", None, now)
        if step % 10 == 9:
            expected = await searches(merged, now)
            for store in sharing:
                for want, have in zip(expected, await searches(store, now), strict=True):
                    assert have.stats == want.stats
                    assert [key for key, _ in have.hits] == [key for key, _ in want.hits]
                    scores = [score for _, score in want.hits]
                    assert [score for _, score in have.hits] == pytest.approx(scores, rel=1e-12)
    state = counts(tmp_path / "batched.db")
    assert state["remember_fresh"] + state["remember_stale"] > 0  # the comparison did see unmerged postings
    for store in (merged, *sharing):
        await store.close()
    closed = counts(tmp_path / "batched.db")  # closing merges: the same postings as merged at every change
    assert (
        closed
        == counts(tmp_path / "merged.db")
        == {**closed, "remember_fresh": 0, "remember_stale": 0, "fresh docs": 0}
    )


async def test_a_document_is_never_numbered_like_a_stale_one(tmp_path: Path) -> None:
    """The newest document, merged and then replaced, leaves stale postings under its number until the next
    merge: the next document is numbered past it, so it neither inherits them nor loses its own to the merge."""
    now, path = time.time(), tmp_path / "remember.db"
    store = SQLiteStore(path, merge_every=1000)
    await store.open()
    await store.put(OWNER, BUCKET, "old", b"1", None, now, index=Postings({100: 1}, 1))
    await reopened(store)
    await store.delete(OWNER, BUCKET, "old", now)  # the newest document: its number is now stale
    await store.put(OWNER, BUCKET, "new", b"2", None, now, index=Postings({101: 1}, 1))
    assert (await store.search(OWNER, BUCKET, [100], now, limit=10)).hits == []
    await reopened(store)
    assert [key for key, _ in (await store.search(OWNER, BUCKET, [101], now, limit=10)).hits] == ["new"]
    assert (await store.search(OWNER, BUCKET, [100], now, limit=10)).stats == Stats(1, 1, (0,))
    await store.close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT doc FROM remember_docs").fetchall() == [(2,)]


async def test_purging_an_owner_deletes_their_postings_at_once(tmp_path: Path) -> None:
    """``purge --user`` deletes by owner: their documents' postings go in the same call, not at a later merge."""
    now, path = time.time(), tmp_path / "remember.db"
    store = SQLiteStore(path, merge_every=1000)
    await store.open()
    for number in range(5):
        for owner in (OWNER, OTHER):
            await store.put(owner, BUCKET, f"k{number}", b"1", None, now, index=Postings({100: 1, 101 + number: 2}, 3))
    await reopened(store)
    await store.put(OWNER, BUCKET, "fresh", b"1", None, now, index=Postings({100: 1}, 1))
    assert await store.delete_owner(OWNER) == 6
    assert counts(path) == {"remember_terms": 10, "remember_fresh": 0, "remember_stale": 0, "fresh docs": 0}
    other = await store.search(OTHER, BUCKET, [100], now, limit=10)
    assert other.stats == Stats(5, 15, (5,))
    await store.close()


async def test_a_purge_whose_merge_fails_deletes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Deleting a user and taking their postings out of the file are one transaction: either both, or the
    purge fails (it can be run again) and the user's values are all still there."""
    now, path = time.time(), tmp_path / "remember.db"
    store = SQLiteStore(path, merge_every=1)
    await store.open()
    await store.put(OWNER, BUCKET, "k", b"1", None, now, index=Postings({100: 1}, 1))

    def failing(db: sqlite3.Connection) -> None:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(sqlite_index, "merge", failing)
    with pytest.raises(StoreUnavailableError, match="database is locked"):
        await store.delete_owner(OWNER)
    assert await store.get(OWNER, BUCKET, "k", now) is not None
    assert counts(path) == {"remember_terms": 1, "remember_fresh": 0, "remember_stale": 0, "fresh docs": 0}
    await store.close()


async def test_an_older_instance_cannot_write_to_the_index(tmp_path: Path) -> None:
    """An instance of an older mcpkit, started before the file's migration, adds documents without ``fresh``:
    refused, rather than numbered over stale ones."""
    path = tmp_path / "remember.db"
    store = SQLiteStore(path)
    await store.open()
    await store.close()
    with sqlite3.connect(path) as db, pytest.raises(sqlite3.IntegrityError, match="has schema version 4: upgrade"):
        db.execute("INSERT INTO remember_docs (owner, bucket, key, length, expires_at) VALUES ('o', 'b', 'k', 1, NULL)")


async def test_a_failed_merge_fails_no_write_and_is_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    now, path = time.time(), tmp_path / "remember.db"
    store = SQLiteStore(path, merge_every=2)
    await store.open()
    merge_step = sqlite_index.merge_step
    monkeypatch.setattr(sqlite_index, "merge_step", failing_step("disk I/O error"))
    with caplog.at_level(logging.WARNING, logger="mcpkit.remember"):
        for key in ("a", "b"):  # the second write's merge fails; the write itself stands
            await store.put(OWNER, BUCKET, key, b"1", None, now, index=Postings({100: 1}, 1))
    assert "was not merged (tried again later): " in caplog.text
    assert "disk I/O error" in caplog.text
    assert [key for key, _ in (await store.search(OWNER, BUCKET, [100], now, limit=10)).hits] == ["a", "b"]
    monkeypatch.setattr(sqlite_index, "merge_step", merge_step)
    await store.put(OWNER, BUCKET, "c", b"1", None, now, index=Postings({100: 1}, 1))
    assert counts(path)["remember_fresh"] == 3  # a failed merge waits merge_every changes before the next
    await store.put(OWNER, BUCKET, "d", b"1", None, now, index=Postings({100: 1}, 1))
    assert counts(path) == {"remember_terms": 4, "remember_fresh": 0, "remember_stale": 0, "fresh docs": 0}
    await store.close()


async def with_a_failed_merge(path: Path, monkeypatch: pytest.MonkeyPatch) -> SQLiteStore:
    """A store at ``path`` whose merge after its second write failed (another process held the write lock)."""
    store = SQLiteStore(path, merge_every=2)
    await store.open()
    merge_step = sqlite_index.merge_step
    monkeypatch.setattr(sqlite_index, "merge_step", failing_step("database is locked"))
    for key in ("a", "b"):
        await store.put(OWNER, BUCKET, key, b"1", None, time.time(), index=Postings({100: 1}, 1))
    monkeypatch.setattr(sqlite_index, "merge_step", merge_step)
    return store


async def test_what_a_failed_merge_left_is_merged_on_closing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No change comes after the failure: closing merges what it left, as it merges changes not merged yet."""
    path = tmp_path / "remember.db"
    store = await with_a_failed_merge(path, monkeypatch)
    assert counts(path)["remember_fresh"] == 2
    await store.close()

    assert counts(path) == {"remember_terms": 2, "remember_fresh": 0, "remember_stale": 0, "fresh docs": 0}


async def test_a_purge_whose_commit_fails_leaves_the_failed_merge_owed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A purge merges inside its transaction; rolled back by its failed commit, what was owed is merged on closing."""
    path = tmp_path / "remember.db"
    store = await with_a_failed_merge(path, monkeypatch)
    failing = CommitFailsOnce(store._conn)  # type: ignore[arg-type]
    store._conn = failing  # type: ignore[assignment]
    with pytest.raises(StoreUnavailableError, match="disk is full"):
        await store.delete_owner(OTHER)  # nothing of its own, but it merges the bucket's postings: rolled back
    store._conn = failing._connection
    assert counts(path)["remember_fresh"] == 2
    await store.close()

    assert counts(path) == {"remember_terms": 2, "remember_fresh": 0, "remember_stale": 0, "fresh docs": 0}


async def test_a_schema_2_file_is_searched_and_rewritten_after_its_migration(tmp_path: Path) -> None:
    """A file of mcpkit's schema 2 (postings written at once, keyed by term): opened, it is version 3, its
    postings are found as they are, and a rewrite leaves the old ones stale until the next merge."""
    now, path = time.time(), tmp_path / "remember.db"
    path.touch(mode=0o600)
    with sqlite3.connect(path) as db:
        for statement in (*_SCHEMA_1, *_SCHEMA_2):
            db.execute(statement)
        db.execute("PRAGMA user_version = 2")
        for doc, (key, terms) in enumerate({"tea": {100: 2}, "coffee": {101: 1, 100: 1}}.items(), start=1):
            db.execute("INSERT INTO remember_entries VALUES (?, ?, ?, x'00', NULL)", (OWNER, BUCKET, key))
            db.execute(
                "INSERT INTO remember_docs (doc, owner, bucket, key, length, expires_at) VALUES (?, ?, ?, ?, ?, NULL)",
                (doc, OWNER, BUCKET, key, sum(terms.values())),
            )
            db.executemany("INSERT INTO remember_terms VALUES (?, ?, ?)", [(t, doc, c) for t, c in terms.items()])
    store = SQLiteStore(path, merge_every=1000)
    await store.open()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (4,)
    ranking = await store.search(OWNER, BUCKET, [100], now, limit=10)
    assert ranking.stats == Stats(2, 4, (2,))
    assert [key for key, _ in ranking.hits] == ["tea", "coffee"]
    await store.put(OWNER, BUCKET, "tea", b"2", None, now, index=Postings({102: 1}, 1))
    assert counts(path) == {"remember_terms": 3, "remember_fresh": 1, "remember_stale": 1, "fresh docs": 1}
    assert [key for key, _ in (await store.search(OWNER, BUCKET, [100], now, limit=10)).hits] == ["coffee"]
    await store.close()
    assert counts(path) == {"remember_terms": 3, "remember_fresh": 0, "remember_stale": 0, "fresh docs": 0}
    with sqlite3.connect(path) as db:  # tea's old posting went with the merge; its new one is merged
        assert sorted(db.execute("SELECT term, doc FROM remember_terms")) == [(100, 2), (101, 2), (102, 3)]


async def test_a_merge_goes_in_bounded_steps_one_after_each_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Dense values (many postings each) merged at once held every other call of the store for seconds (issue 29,
    point 3): a merge now moves about ``MERGE_STEP`` postings (whole documents) after a change, and the next change
    takes the next step, while searches rank every value alike throughout."""
    monkeypatch.setattr(sqlite_index, "MERGE_STEP", 1500)
    now = time.time()
    dense = Postings(dict.fromkeys(range(1000, 2000), 1), 1000)
    store = SQLiteStore(tmp_path / "kept.db", merge_every=4)
    await store.open()
    merged_after: list[int] = []
    found: list[int] = []
    try:
        for number in range(12):
            await store.put(OWNER, BUCKET, f"k{number}", b"1", None, now, index=dense)
            await store.delete(OWNER, BUCKET, f"k{number - 6}", now) if number >= 6 else None
            merged_after.append(counts(tmp_path / "kept.db")["remember_terms"])
            found.append(len((await store.search(OWNER, BUCKET, [1500], now, limit=50)).hits))
        await reopened(store)  # closing merges the rest
        final = counts(tmp_path / "kept.db")
    finally:
        await store.close()
    moved = [after - before for before, after in zip([0, *merged_after], merged_after, strict=False)]
    assert max(moved) <= 2000  # a step moves whole documents, up to the budget: never all 6,000+ at once
    assert found == [number + 1 if number < 6 else 6 for number in range(12)]
    assert final == {"remember_terms": 6000, "remember_fresh": 0, "remember_stale": 0, "fresh docs": 0}
