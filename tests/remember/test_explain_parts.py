"""explain's parts add up to the fused score, also for a match the fusion's margin rule lifted (issue 41, item 3).

Through the real stack: the labelled set of ``bench/data/quality.py`` kept with one ``set_many``, every one of its
queries asked in ``hybrid`` mode with ``explain=True``, with ``Concepts``, the deterministic embedder.
"""

from __future__ import annotations

from typing import Any

import pytest
from bench.data.quality import MEMORIES, QUERIES

from mcpkit import Server
from mcpkit.testing import CallAs
from mcpkit_search import CLEAR_RANKS
from remember.support import mem
from remember.test_semantic import Concepts, semantic

pytestmark = pytest.mark.parametrize("store_kind", ["memory", "sqlite"])


@pytest.fixture
def mcpkit_server(store_options: dict[str, Any]) -> Server:
    return semantic(store_options, Concepts())


def _total(why: dict[str, Any]) -> float:
    return float(why["lexical_part"] + why["semantic_part"] + why["lifted_by_margin"])


async def test_the_parts_add_up_to_the_fused_score_for_every_match_of_the_labelled_queries(call_as: CallAs) -> None:
    nour = call_as("nour")
    await mem(nour, "set_many", value=MEMORIES, scope="user")
    lifted = 0
    for query in [text for text, _, _ in QUERIES]:
        found = await mem(nour, "search_explained", query=query, scope="user", limit=10, mode="hybrid")
        totals = [(_total(why), score) for _, score, why in found]
        for _, _, why in found:
            assert why["lifted_by_margin"] >= 0
            if why["lifted_by_margin"] > 0:  # lifted to the rank a side gave it, among that side's first three
                lifted += 1
                assert min(why["lexical_rank"] or 99, why["semantic_rank"] or 99) <= CLEAR_RANKS
        distinct = sorted(set(totals))
        if len(distinct) < 2:
            continue
        # The fused score is the parts' sum rescaled by the query's lowest and highest: one line through them all.
        (low_total, low_score), (high_total, high_score) = distinct[0], distinct[-1]
        slope = (high_score - low_score) / (high_total - low_total)
        for total, score in totals:
            assert score == pytest.approx(low_score + slope * (total - low_total), abs=1e-6), query
        assert [score for _, score, _ in found] == sorted((score for _, score, _ in found), reverse=True)
    assert lifted > 0  # the margin rule lifted some: the rule's part is what makes those add up


async def test_only_hybrid_has_a_margin_part(call_as: CallAs) -> None:
    nour = call_as("nour")
    await mem(nour, "set_many", value=MEMORIES, scope="user")
    for mode in ("lexical", "semantic"):
        [[_, _, why]] = await mem(nour, "search_explained", query="short replies", scope="user", limit=1, mode=mode)
        assert why["lifted_by_margin"] is None  # only hybrid fuses
