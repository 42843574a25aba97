"""Typo tolerance: a query word that no value holds is asked again as its near spellings, on every store."""

from __future__ import annotations

from typing import Any

import pytest
from bench.retrieval_data import labelled, misspelt

from mcpkit import ManualClock
from mcpkit.testing import CallAs, running
from mcpkit_search import Analyzer, near
from mcpkit_search._typos import edits
from remember.support import NEW, OLD, STORES, mem
from remember.test_search import found, keep_notes, searching


@pytest.fixture(params=[NEW, OLD])
def mcp_protocol(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def mcpkit_server(store_options: dict[str, Any]) -> Any:
    return searching(store_options)


async def test_a_misspelt_word_finds_the_value_it_meant(call_as: CallAs) -> None:
    nour = call_as("nour")
    await keep_notes(nour)
    assert (await found(nour, "refnud"))[:1] == ["draft:T-1042"]  # two letters swapped
    assert (await found(nour, "Frech"))[:1] == ["pref:language"]  # one left out
    assert (await found(nour, "timezome"))[:1] == ["fact:timezone"]  # one wrong
    assert (await found(nour, "greetingss"))[:1] == ["pref:reply-style"]  # one too many
    assert (await found(nour, "refnud order"))[:1] == ["draft:T-1042"]  # beside a word that matches
    assert await found(nour, "zebra") == []  # no near spelling held: nothing


async def test_a_word_that_matches_does_not_fan_out_to_its_neighbours(call_as: CallAs) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="a", value="a short walk", scope="user")
    await mem(nour, "set", key="b", value="a sport match", scope="user")
    assert await found(nour, "short") == ["a"]  # "sport" is one edit away, but "short" is held
    await mem(nour, "set", key="c", value="sport news", scope="user")
    assert sorted(await found(nour, "sxort")) == ["b", "c"]  # one spelling per word, the one more values hold


async def test_a_near_spelling_scores_below_the_same_match_spelt_right(call_as: CallAs) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="a", value="refund", scope="user")
    exact = await mem(nour, "search", query="refund", scope="user")
    typo = await mem(nour, "search", query="refnud", scope="user")
    assert [key for key, _, _ in typo] == ["a"]
    assert typo[0][2] == pytest.approx(exact[0][2] / 2)


def test_near_spellings_are_one_edit_away_and_bounded() -> None:
    assert {"refund", "rfnud", "erfnud", "refnu", "xrefnud"} <= edits("refnud")
    assert "refnud" not in edits("refnud")
    assert len(edits("refnud")) <= 53 * 6 + 25
    terms_of = Analyzer().terms_of
    assert near("cat", terms_of) == []  # too short: too many real words one edit away
    assert near("t1042", terms_of) == []  # an id is exact
    assert near("x" * 21, terms_of) == []
    assert "educ" in near("educaton", terms_of)  # the edit "education", stemmed as it is indexed


@pytest.mark.parametrize("store_kind", ["postgres"])
async def test_a_misspelt_word_finds_the_value_on_postgres(call_as: CallAs) -> None:
    nour = call_as("nour")
    await keep_notes(nour)
    assert (await found(nour, "refnud order"))[:1] == ["draft:T-1042"]
    assert (await found(nour, "Frech"))[:1] == ["pref:language"]


@pytest.mark.parametrize("mcp_protocol", [NEW])
@pytest.mark.parametrize("store_kind", [*STORES, "postgres"])
async def test_the_bench_s_typo_d_queries_rank_on_every_store_as_in_the_process(
    call_as: CallAs, clock: ManualClock
) -> None:
    """The labelled set's misspelt queries (``bench.retrieval_data.misspelt``), each store counting a word's near
    spellings in one statement or script, rank as the memory store ranks them in the process: keys and scores."""
    data = labelled()
    asked = [query.text for query in misspelt(data.queries)]
    nour = call_as("nour")
    await mem(nour, "set_many", value=data.units, scope="user")
    async with running(searching({"type": "memory"}), protocol=NEW, clock=clock) as callers:
        reference = callers("nour")
        await mem(reference, "set_many", value=data.units, scope="user")
        for query in asked:
            expected = await mem(reference, "search", query=query, scope="user")
            got = await mem(nour, "search", query=query, scope="user")
            assert [key for key, _, _ in got] == [key for key, _, _ in expected], query
            assert [score for _, _, score in got] == pytest.approx([score for _, _, score in expected], rel=1e-9)
            assert [score for _, _, score in got] == pytest.approx([score for _, _, score in expected], rel=1e-9)
