"""A filter keeping a large share of the values (``since`` the newest half, a source of three) on SQLite: the store
tests it on the ranking's best (docs/architecture.md, "A broad filter is tested on the ranking's best"), and the
search returns what filtering the whole ranking returns: fresh postings, merged ones, expired values left out, and
when too few of the best pass.

Through the real HTTP app, on SQLite files.
"""

from __future__ import annotations

import random
import sqlite3
from datetime import UTC, datetime
from typing import Any

import pytest

from mcpkit import ManualClock, Server
from mcpkit.testing import CallAs
from mcpkit_remember import RememberPlugin
from mcpkit_storage.stores.sqlite import _sqlite_index as sqlite_index
from remember.support import SECRET, build_server, mem, store_of
from remember.test_event_time import When, call
from remember.tools import TOOLS
from stores.test_sqlite_broad_filter import spied

_DAY = 86_400.0
_START = datetime(2022, 1, 1, tzinfo=UTC).timestamp()
_WORDS = ("garden", "coffee", "rain", "train")
_SOURCES = ("user", "tool", "model")


@pytest.fixture
def store_kind() -> str:
    return "sqlite"


@pytest.fixture
def mcpkit_server(store_options: dict[str, Any]) -> Server:
    return build_server(RememberPlugin.init(**store_options, secret=SECRET, search=True), [*TOOLS, When])


@pytest.fixture
def answered(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    return spied(monkeypatch)


async def _reopened(server: Server) -> None:
    """The server's store closed (which merges every fresh posting) and opened again."""
    store = store_of(server)
    await store.close()
    await store.open()


def _fresh(store_options: dict[str, Any]) -> int:
    """The file's documents whose postings are not merged yet."""
    with sqlite3.connect(store_options["path"]) as db:
        counted: int = db.execute("SELECT count(*) FROM remember_docs WHERE fresh IS NOT NULL").fetchone()[0]
        return counted


async def test_a_broad_filter_returns_what_filtering_the_whole_ranking_returns(
    call_as: CallAs,
    mcpkit_server: Server,
    store_options: dict[str, Any],
    clock: ManualClock,
    answered: list[bool],
) -> None:
    rng = random.Random(1207)
    nour = call_as("nour")
    times: dict[str, float] = {}
    sources: dict[str, str] = {}
    lasting: set[str] = set()
    for number in range(90):  # a day apart, in turn from each source; one in 7 with a ttl that has run out by then
        key = f"note:{number:02}"
        times[key], sources[key] = _START + number * _DAY, _SOURCES[number % 3]
        # Each value's own length (a filler word, 6 more each time): no two tie.
        text = " ".join(rng.choices(_WORDS, k=rng.randint(1, 5)) + ["filler"] * (6 * number))
        ttl = 60.0 if number % 7 == 3 else None
        await mem(nour, "set", key=key, value=text, scope="user", at=times[key], source=sources[key], ttl=ttl)
        if ttl is None:
            lasting.add(key)
        if number == 59:  # the first 60 merged (closing merges every fresh posting), the last 30 fresh
            await _reopened(mcpkit_server)
    clock.advance(120)
    filters: list[dict[str, Any]] = [
        {"since": _START + 45 * _DAY},
        {"sources": ["user"]},
        {"sources": ["tool", "model"]},
        {"since": _START + 30 * _DAY, "sources": ["model", "user"]},
    ]
    for merged in (False, True):
        assert _fresh(store_options) == (0 if merged else 30)
        for query in ("garden", "coffee rain", "train garden rain"):
            ranked = await call(nour, "search", query=query, limit=100)
            assert set(ranked) <= lasting
            for kept in filters:
                expected = [
                    key
                    for key in ranked
                    if times[key] >= kept.get("since", _START) and sources[key] in kept.get("sources", _SOURCES)
                ]
                for limit in (1, 4, 10):
                    found = await call(nour, "search", query=query, limit=limit, **kept)
                    assert found == expected[:limit], (merged, query, kept, limit)
        await _reopened(mcpkit_server)
    assert sum(answered) >= 60  # the filters were tested on the best, with fresh postings and without


async def test_a_broad_filter_whose_values_rank_low_returns_the_same(
    call_as: CallAs, mcpkit_server: Server, answered: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The values of the source asked (a third) rank below all the others: the best the store's ranking reaches
    hold too few of them, so it ranks again with the filter looked up, and returns the same."""
    monkeypatch.setattr(sqlite_index, "AFTER_REACH", 2)  # the ranking reaches 2 times the limit asked
    nour = call_as("nour")
    for number in range(60):
        low = number % 3 == 0  # "user": the word once in a long value
        text = "garden" + " filler" * (300 + number) if low else " ".join(["garden"] * 3 + ["filler"] * number)
        await mem(nour, "set", key=f"note:{number:02}", value=text, scope="user", source=_SOURCES[number % 3])
    await _reopened(mcpkit_server)  # merged: the store counts a filter's merged holders to weigh it
    ranked = await call(nour, "search", query="garden", limit=100)
    assert ranked[40:] == [f"note:{number:02}" for number in range(0, 60, 3)]
    for limit in (1, 5, 20):
        assert await call(nour, "search", query="garden", limit=limit, sources=["user"]) == ranked[40 : 40 + limit]
    assert answered[:2] == [False, False]  # limits 1 and 5: the best 34 and 42 hold no "user" value
