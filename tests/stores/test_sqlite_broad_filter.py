"""A broad filter on the SQLite store is tested on the ranking's best (``_sqlite_index._after``): it ranks the same
keys, with the same scores, in the same order, as the narrowed ranking it replaces, with fresh, merged, stale and
expired postings mixed in one file, and when too few of the best pass (the ranking done again, narrowed).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from mcpkit_storage.stores._store import Postings, Ranking
from mcpkit_storage.stores.sqlite import _sqlite_index as sqlite_index
from mcpkit_storage.stores.sqlite._sqlite_store import SQLiteStore
from stores.test_sqlite_index import OWNER, counts, reopened

BUCKET = "b" * 32
WORDS = list(range(1, 7))  # query terms
DAYS = list(range(100, 140))  # one per entry, in the order written: a window is a run of them
SOURCES = [200, 201, 202]  # one per entry, in turn


def _entry(number: int, rng: random.Random, low: bool = False) -> Postings:
    """Entry ``number``'s words (a few; ``low``: one, once, in a long value), its day and its source."""
    if low:
        counts_, length = {rng.choice(WORDS): 1}, 400 + number
    else:  # each entry's own length: no two score alike
        counts_ = {word: rng.randint(2, 4) for word in rng.sample(WORDS, rng.randint(2, 4))}
        length = sum(counts_.values()) + number
    counts_[DAYS[number * len(DAYS) // 300]] = 1
    counts_[SOURCES[number % 3]] = 1
    return Postings(counts_, length)


def spied(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each ranking tested on the best answered (True) or was done again, narrowed (False)."""
    answered: list[bool] = []
    after = sqlite_index._after

    def spy(*arguments: Any) -> Any:
        found = after(*arguments)
        answered.append(found is not None)
        return found

    monkeypatch.setattr(sqlite_index, "_after", spy)
    return answered


async def _both(
    store: SQLiteStore,
    monkeypatch: pytest.MonkeyPatch,
    now: float,
    terms: list[int],
    groups: list[list[int]],
    limit: int,
) -> tuple[Ranking, Ranking]:
    """The narrowed search with a broad group tested on the best (as it is), and with every group looked up in
    the ranking (as before: the test on the best never answers)."""
    new = await store.search(OWNER, BUCKET, terms, now, limit=limit, within=groups)
    with monkeypatch.context() as patched:
        patched.setattr(sqlite_index, "_after", lambda *_: None)
        old = await store.search(OWNER, BUCKET, terms, now, limit=limit, within=groups)
    return new, old


def _filtered(whole: Ranking, held: dict[str, set[int]], groups: Sequence[Sequence[int]]) -> list[tuple[str, float]]:
    return [(key, score) for key, score in whole.hits if all(held[key] & set(group) for group in groups)]


async def test_a_broad_filter_ranks_exactly_as_the_narrowed_ranking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    now, rng = time.time(), random.Random(20261207)
    store = SQLiteStore(tmp_path / "remember.db", merge_every=1000)
    await store.open()
    held: dict[str, set[int]] = {}
    expired: set[str] = set()

    async def put(number: int, expires_at: float | None = None) -> None:
        key, postings = f"k{number:03}", _entry(number, rng)
        await store.put(OWNER, BUCKET, key, b"v", expires_at, now - 100, index=postings)
        held[key] = set(postings.terms)
        (expired.add if expires_at is not None else expired.discard)(key)

    for number in range(180):  # merged, some expired by the time of the searches
        await put(number, now - 1 if number % 17 == 0 else None)
    await reopened(store)
    for number in range(0, 180, 9):  # rewritten: stale postings, fresh ones under a new number
        await put(number)
    for number in range(180, 300):  # fresh
        await put(number, now - 1 if number % 13 == 0 else None)
    assert len(expired) == 19
    state = counts(tmp_path / "remember.db")
    assert min(state["remember_fresh"], state["remember_terms"], state["remember_stale"]) > 0
    answered = spied(monkeypatch)
    late, early = DAYS[len(DAYS) // 2 :], DAYS[: len(DAYS) // 3]
    for _ in range(60):
        terms = rng.sample(WORDS, rng.randint(1, 3))
        groups = rng.choice([[late], [early], [SOURCES[:1]], [SOURCES[1:]], [late, SOURCES[:1]], [SOURCES, early]])
        limit = rng.choice([1, 5, 10, 26, 40])
        new, old = await _both(store, monkeypatch, now, terms, groups, limit)
        whole = await store.search(OWNER, BUCKET, terms, now, limit=1000)
        assert new.stats == old.stats == whole.stats
        assert new.hits == old.hits, (terms, groups, limit)  # the same keys, scores and order, to the bit
        assert new.hits == _filtered(whole, held, groups)[:limit]
        assert not expired & {key for key, _ in new.hits}
    assert sum(answered) >= 20  # broad groups were tested on the best (the others are looked up as before)
    await store.close()


async def test_too_few_of_the_best_passing_ranks_again_narrowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A third of the entries hold the source asked, and all of them rank below every other: the best the ranking
    reaches hold too few of them, so it is done again, narrowed, with the same answer."""
    now, rng = time.time(), random.Random(7)
    store = SQLiteStore(tmp_path / "remember.db", merge_every=150)  # merged at 150, the rest fresh
    await store.open()
    held: dict[str, set[int]] = {}
    for number in range(300):
        postings = _entry(number, rng, low=number % 3 == 0)
        await store.put(OWNER, BUCKET, f"k{number:03}", b"v", None, now, index=postings)
        held[f"k{number:03}"] = set(postings.terms)
    answered = spied(monkeypatch)
    whole = await store.search(OWNER, BUCKET, WORDS, now, limit=1000)
    passing = [number for number, (key, _) in enumerate(whole.hits) if SOURCES[0] in held[key]]
    assert passing[0] >= 190  # every entry holding the source ranks low
    for limit in (1, 10, 26):
        new, old = await _both(store, monkeypatch, now, WORDS, [SOURCES[:1]], limit)
        assert new.hits == old.hits == _filtered(whole, held, [SOURCES[:1]])[:limit]
    assert answered == [False, False, False]
    await store.close()


async def test_ties_at_the_limit_and_at_the_reach_rank_by_key_as_the_narrowed_ranking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every entry scores the same: which pass within the limit, and where the reach cuts, is the keys' order."""
    now = time.time()
    store = SQLiteStore(tmp_path / "remember.db", merge_every=100)  # merged at 100, the rest fresh
    await store.open()
    held: dict[str, set[int]] = {}
    for number in range(250):
        terms = {WORDS[0]: 2, DAYS[number % len(DAYS)]: 1, SOURCES[number % 3]: 1}
        await store.put(OWNER, BUCKET, f"k{249 - number:03}", b"v", None, now, index=Postings(terms, 10))
        held[f"k{249 - number:03}"] = set(terms)
    answered = spied(monkeypatch)
    whole = await store.search(OWNER, BUCKET, [WORDS[0]], now, limit=1000)
    assert len({score for _, score in whole.hits}) == 1
    for groups in ([SOURCES[:1]], [SOURCES[1:]], [DAYS[: len(DAYS) // 2]], [SOURCES[:2], DAYS[::2]]):
        for limit in (1, 7, 40):
            new, old = await _both(store, monkeypatch, now, [WORDS[0]], groups, limit)
            assert new.hits == old.hits == _filtered(whole, held, groups)[:limit], (groups, limit)
    assert any(answered)
    await store.close()
