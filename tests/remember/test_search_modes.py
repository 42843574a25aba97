"""search(mode=..., weight=..., explain=True), long values found by meaning, set_many, and the newest winning ties.

Through the real stack (the official client, both protocol eras) with ``Concepts``, the deterministic embedder
of ``test_semantic``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import pytest

from mcpkit import ManualClock, Server
from mcpkit.testing import CallAs, running
from mcpkit_remember import RememberPlugin
from mcpkit_search import document_chunks
from mcpkit_storage._cli import rotate
from remember.support import NEW, OLD, SECRET, build_server, keyring_for, mem, refused
from remember.test_rotation import opened_store
from remember.test_search import found
from remember.test_semantic import NOTES, Concepts, keep_notes, semantic

pytestmark = pytest.mark.parametrize("store_kind", ["memory", "sqlite"])

#: A long value whose one fact about drinks sits past what a model reads in one go.
LONG = " ".join(["the quarterly report lists suppliers and invoices"] * 120) + " and she orders a latte every morning"


class Counting(Concepts):
    """Concepts that also counts its calls: a batch write makes few."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        return await super().embed(texts)


@pytest.fixture(params=[NEW, OLD])
def mcp_protocol(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def embedder() -> Counting:
    return Counting()


@pytest.fixture
def mcpkit_server(store_options: dict[str, Any], embedder: Counting) -> Server:
    return semantic(store_options, embedder)


async def test_each_mode_ranks_by_its_own_side(call_as: CallAs) -> None:
    await keep_notes(call_as)
    nour = call_as("nour")
    assert await found(nour, "favourite hot beverage", mode="lexical") == []  # no word of it is kept
    assert await found(nour, "favourite hot beverage", mode="semantic") == ["pref:coffee"]
    assert await found(nour, "favourite hot beverage", mode="hybrid") == ["pref:coffee"]
    assert (await found(nour, "oat milk", mode="lexical"))[:1] == ["pref:coffee"]
    assert await found(nour, "favourite hot beverage") == await found(nour, "favourite hot beverage", mode="hybrid")


async def test_semantic_mode_fills_its_limit_with_the_best_weak_matches_after_the_strong_ones(call_as: CallAs) -> None:
    await keep_notes(call_as)
    nour = call_as("nour")
    marked = await mem(nour, "search_weak", query="favourite hot beverage", scope="user", limit=3, mode="semantic")
    assert marked[0] == ["pref:coffee", False]  # above min_similarity
    assert [weak for _, weak in marked] == [False, True, True]  # then the best of the rest, marked weak
    marked = await mem(nour, "search_weak", query="weekend hiking plans", scope="user", mode="semantic")
    assert sorted(key for key, _ in marked) == sorted(NOTES)  # nothing near it: the best there is, every one weak
    assert all(weak for _, weak in marked)
    assert await mem(nour, "search_weak", query="weekend hiking plans", scope="user", mode="hybrid") == []
    assert await mem(nour, "search_weak", query="weekend hiking plans", scope="user", mode="lexical") == []


async def test_explain_says_how_each_side_ranked_a_match(call_as: CallAs) -> None:
    await keep_notes(call_as)
    nour = call_as("nour")
    [[key, score, why]] = await mem(nour, "search_explained", query="oat milk coffee", scope="user", limit=1)
    assert key == "pref:coffee"
    assert (why["mode"], why["lexical_rank"], why["semantic_rank"], why["chunk"]) == ("hybrid", 1, 1, 0)
    assert why["lexical"] > 0
    assert 0 < why["semantic"] <= 1
    assert score == pytest.approx(1.0)  # first on both sides
    [[_, _, why]] = await mem(nour, "search_explained", query="oat milk", scope="user", limit=1, mode="lexical")
    assert (why["semantic"], why["semantic_rank"], why["lexical_rank"]) == (None, None, 1)


async def test_explain_says_which_words_matched_their_weight_each_sides_share_and_the_window(call_as: CallAs) -> None:
    await keep_notes(call_as)
    await mem(call_as("nour"), "set", key="note:milk", value="buy milk on the way home", scope="user")
    nour = call_as("nour")
    [[key, score, why]] = await mem(nour, "search_explained", query="Oat milk, coffee!", scope="user", limit=1)
    assert key == "pref:coffee"
    weights = dict(why["terms"])
    assert list(weights) == ["oat", "milk", "coffee"]  # the query's words the value holds, as the query wrote them
    assert weights["oat"] > weights["milk"] > 0  # two values hold "milk", one "oat": the rarer weighs more
    assert why["weight"] == pytest.approx(0.4)
    assert why["lexical_part"] > why["semantic_part"]  # found by its words above all ("coffee!" means little here)
    assert why["window"] == "pref coffee Oat milk flat white, no sugar"
    assert why["relevance"] == pytest.approx(0.6 * 1.0 + 0.4 * why["semantic"])  # every word of the query held
    assert score == pytest.approx(1.0)  # the fused score is rescaled per query: relevance is what compares
    every = await mem(nour, "search_explained", query="Oat milk, coffee!", scope="user")
    sums = [why["lexical_part"] + why["semantic_part"] for _, _, why in every]
    assert len(every) > 1
    assert sums == sorted(sums, reverse=True)  # the two parts' sum ranks the matches


async def test_relevance_compares_across_queries_where_the_fused_score_does_not(call_as: CallAs) -> None:
    await keep_notes(call_as)
    nour = call_as("nour")
    [[_, _, all_held], *_] = await mem(nour, "search_explained", query="oat milk", scope="user", mode="lexical")
    [[_, _, half_held], *_] = await mem(nour, "search_explained", query="oat tractor", scope="user", mode="lexical")
    assert all_held["relevance"] == pytest.approx(1.0)
    assert 0 < half_held["relevance"] < 0.6  # "tractor" is in no value, and weighs more than "oat" (no value holds it)
    assert [term for term, _ in half_held["terms"]] == ["oat"]
    [[_, _, meaning], *_] = await mem(nour, "search_explained", query="hot beverage", scope="user", mode="semantic")
    assert meaning["relevance"] == pytest.approx(meaning["semantic"])
    assert (meaning["terms"], meaning["weight"], meaning["lexical_part"]) == ([], None, None)


async def test_the_weight_moves_hybrid_between_words_and_meaning(call_as: CallAs) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="a", value="coffee", scope="user")  # in meaning only
    await mem(nour, "set", key="b", value="morning ritual notes", scope="user")  # in words only
    assert (await found(nour, "beverage morning", weight=0.0))[0] == "b"
    assert (await found(nour, "beverage morning", weight=1.0))[0] == "a"


async def test_a_fact_at_the_end_of_a_long_value_is_found_by_meaning(call_as: CallAs) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="report", value=LONG, scope="user")
    await mem(nour, "set", key="other", value="invoices from suppliers", scope="user")
    assert await found(nour, "hot beverage", mode="semantic") == ["report"]
    [[_, _, why], *_] = await mem(nour, "search_explained", query="hot beverage", scope="user", mode="semantic")
    windows = document_chunks("report", LONG)
    assert "latte" in windows[-1]
    assert "latte" not in windows[-2]
    assert why["chunk"] == len(windows) - 1  # matched by its last window, which alone holds the latte


async def test_set_many_keeps_every_value_and_embeds_them_together(call_as: CallAs, embedder: Counting) -> None:
    nour = call_as("nour")
    embedder.calls = 0
    assert await mem(nour, "set_many", value=NOTES, scope="user") is True
    assert embedder.calls == 1  # four short values: one call to the model
    for key, value in NOTES.items():
        assert await mem(nour, "get", key=key, scope="user") == value
    assert await found(nour, "favourite hot beverage") == ["pref:coffee"]
    assert await found(nour, "where to sit on the plane") == ["pref:seat"]


async def test_set_many_checks_everything_before_writing_anything(call_as: CallAs) -> None:
    nour = call_as("nour")
    error = await refused(nour, "set_many", value={"ok": "fine", "": "no key"}, scope="user")
    assert "key" in error.message
    assert await mem(nour, "get", key="ok", scope="user") == "<missing>"


async def test_a_newer_value_wins_a_tie_with_an_older_one(call_as: CallAs, clock: ManualClock) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="m1", value="the office moved to Lyon", scope="user")
    clock.advance(60)
    await mem(nour, "set", key="m2", value="the office moved to Lyon", scope="user")
    assert await found(nour, "office Lyon", mode="lexical") == ["m2", "m1"]  # equal BM25 scores: newest first
    clock.advance(60)
    await mem(nour, "set", key="m1", value="the office moved to Lyon", scope="user")  # m1 is now the newer
    assert await found(nour, "office Lyon", mode="lexical") == ["m1", "m2"]


async def test_a_search_mode_that_does_not_exist_is_refused(call_as: CallAs) -> None:
    error = await refused(call_as("nour"), "search", query="tea", scope="user", mode="fuzzy")
    assert "search(mode=...) is one of lexical, semantic, hybrid" in error.message
    error = await refused(call_as("nour"), "search", query="tea", scope="user", weight=2)
    assert "search(weight=...) is a number from 0 to 1, not 2" in error.message


async def test_searching_by_meaning_without_an_embedder_says_what_to_configure(store_options: dict[str, Any]) -> None:
    server = build_server(RememberPlugin.init(**store_options, secret=SECRET, search=True))
    async with running(server) as callers:
        nour = callers("nour")
        await mem(nour, "set", key="pref:coffee", value=NOTES["pref:coffee"], scope="user")
        assert await found(nour, "oat milk", mode="lexical") == ["pref:coffee"]
        error = await refused(nour, "search", query="oat milk", scope="user", mode="semantic")
        assert "needs an embedder: RememberPlugin.init(..., embedder=mcpkit_search.MiniLM())" in error.message


async def test_keys_can_be_left_out_of_what_is_searched(store_options: dict[str, Any]) -> None:
    plugin = RememberPlugin.init(**store_options, secret=SECRET, search=True, embedder=Concepts(), search_keys=False)
    async with running(build_server(plugin)) as callers:
        nour = callers("nour")
        await mem(nour, "set", key="coffee-order", value="flat white", scope="user")
        assert await found(nour, "order", mode="lexical") == []  # the key's words are not indexed
        assert await found(nour, "flat white", mode="lexical") == ["coffee-order"]
        assert await found(nour, "beverage", mode="semantic") == []  # nor embedded ("coffee" is in the key only)


async def test_a_long_values_window_vectors_count_towards_the_byte_quota(store_options: dict[str, Any]) -> None:
    # The value: about 6 KB sealed, and its 605 indexed words count 32 bytes each (19 KB): 25.5 KB in all.
    # history=0: the limits are measured for the value and its vectors; a history would add a copy of the value.
    limits = {"max_value_bytes": 8_000, "max_bytes": 30_000, "history": 0}
    wide = Concepts(dimensions=1024)  # about 1 KB per window: the value's ten windows add about 10 KB
    for embedder, kept in ((None, True), (wide, False)):
        plugin = RememberPlugin.init(**store_options, secret=SECRET, search=True, embedder=embedder, **limits)
        async with running(build_server(plugin)) as callers:
            nour = callers("nour")
            await mem(nour, "forget_all", scope="user")
            if kept:
                assert await mem(nour, "set", key="report", value=LONG, scope="user") is True
            else:
                error = await refused(nour, "set", key="report", value=LONG, scope="user")
                assert "past 30,000 bytes" in error.message
                assert await mem(nour, "get", key="report", scope="user") == "<missing>"


async def test_reindex_without_keys_takes_the_keys_out_of_values_kept_with_them(store_options: dict[str, Any]) -> None:
    if store_options["type"] != "sqlite":
        pytest.skip("another handle on the same data: the memory store lives in its server's process")
    async with running(semantic(store_options, Concepts())) as callers:
        await mem(callers("nour"), "set", key="coffee-order", value="flat white", scope="user")
        assert await found(callers("nour"), "order", mode="lexical") == ["coffee-order"]
    async with opened_store(store_options) as store:
        report = await rotate(store, keyring_for(store_options, [SECRET]), time.time(), reindex=True, keys=False)
        assert (report.unreadable, report.changed) == (0, 0)
    plugin = RememberPlugin.init(**store_options, secret=SECRET, search=True, embedder=Concepts(), search_keys=False)
    async with running(build_server(plugin)) as callers:
        assert await found(callers("nour"), "order", mode="lexical") == []
        assert await found(callers("nour"), "flat white", mode="lexical") == ["coffee-order"]
