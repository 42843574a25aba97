"""Ties at the store's cut: of equal texts, a search returns the newest, whichever keys the store ranks first among
the tied (it breaks ties by its own blind keys, the search by recency), on every store, PostgreSQL too.

Through the real stack in both protocol eras, by words; in hybrid on the memory store and SQLite.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit import ManualClock, Server
from mcpkit.testing import CallAs, CallerClient
from mcpkit_storage import MAX_SEARCH_LIMIT
from remember.support import NEW, OLD, STORES, mem
from remember.test_search import found
from remember.test_semantic import Concepts, semantic

#: Equal texts (and keys of the same shape, which are searched too): their scores tie exactly.
TEXT = "the office moved to Lyon"


@pytest.fixture(params=[NEW, OLD])
def mcp_protocol(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Apart(Concepts):
    """An embedder to which every value ("moved") means one thing and the query another: by meaning, the values
    all tie and none is close enough to be found, so hybrid finds them by their words alone."""

    def vector(self, text: str) -> list[float]:
        vector = [0.0] * self.dimensions
        vector[0 if "moved" in text else 1] = 1.0
        return vector


@pytest.fixture
def mcpkit_server(store_options: dict[str, Any]) -> Server:
    return semantic(store_options, Apart())


async def keep_equal_texts(nour: CallerClient, clock: ManualClock, count: int) -> list[str]:
    """``count`` values of the same text, each written a minute after the one before; their keys, newest first."""
    keys = [f"move{number:03d}" for number in range(count)]
    for key in keys:
        await mem(nour, "set", key=key, value=TEXT, scope="user")
        clock.advance(60)
    return keys[::-1]


@pytest.mark.parametrize("store_kind", [*STORES, "postgres"])
async def test_a_limit_that_cuts_through_a_tie_keeps_the_newest_of_equal_texts(
    call_as: CallAs, clock: ManualClock
) -> None:
    nour = call_as("nour")
    newest = await keep_equal_texts(nour, clock, 30)  # more than the first call past the cut sees (FIRST_EXTRA)
    await mem(nour, "set", key="move-on", value="the office moved to Lyon, then Lyon again", scope="user")
    ranked = await found(nour, "office Lyon", mode="lexical", limit=31)
    assert ranked[0] == "move-on"  # "Lyon" twice: above the tie
    assert ranked[1:] == newest
    for limit in (1, 2, 9, 29):  # the cut falls inside the tie: the newest of it, newest first
        assert await found(nour, "office Lyon", limit=limit + 1, mode="lexical") == ["move-on", *newest[:limit]]
    await mem(nour, "set", key=newest[-1], value=TEXT, scope="user")  # the oldest is now the newest
    assert await found(nour, "office Lyon", limit=3, mode="lexical") == ["move-on", newest[-1], newest[0]]


@pytest.mark.parametrize("store_kind", ["memory", "sqlite"])
async def test_in_hybrid_a_tie_at_the_cut_by_words_keeps_the_newest(call_as: CallAs, clock: ManualClock) -> None:
    """Hybrid ranks the best ``MAX_SEARCH_LIMIT`` (100) by words: a value that scores more, then 100 equal texts,
    every one of them, since by meaning (``Apart``) a value left out would not be found at all."""
    nour = call_as("nour")
    newest = await keep_equal_texts(nour, clock, MAX_SEARCH_LIMIT)
    await mem(nour, "set", key="move-on", value="the office moved to Lyon, then Lyon again", scope="user")
    ranked = await found(nour, "office Lyon", limit=MAX_SEARCH_LIMIT, mode="hybrid")
    assert ranked == ["move-on", *newest[: MAX_SEARCH_LIMIT - 1]]
