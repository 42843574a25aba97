"""The retrieval benchmark's arithmetic and its page section: recall@k and MRR as defined, the section replaced
in place (not appended again) on every run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bench.retrieval import metrics, misses
from bench.retrieval_data import Query
from bench.retrieval_report import END, START, write_page


def test_a_hit_is_any_answer_in_the_first_k_and_mrr_counts_the_first_one() -> None:
    queries = [
        Query("q1", frozenset({"a"}), "x"),
        Query("q2", frozenset({"b", "c"}), "x"),
        Query("q3", frozenset({"z"}), "x"),
    ]
    found = [["a", "b"], ["x1", "x2", "x3", "x4", "x5", "c", "b"], ["x"] * 10 + ["z"]]
    got = metrics(found, queries)
    assert got["recall_at_5"] == pytest.approx(1 / 3)  # q2's first answer is sixth; q3's eleventh
    assert got["recall_at_10"] == pytest.approx(2 / 3)
    assert got["mrr"] == pytest.approx((1 + 1 / 6) / 3)


def test_hybrids_misses_are_sorted_by_which_side_had_the_answer_in_its_first_k() -> None:
    queries = [Query(f"q{n}", frozenset({"a"}), "x") for n in range(5)]
    far = ["x1", "x2", "x3", "x4", "x5", "a"]  # the answer sixth
    hybrid = [["a"], far, far, far, far]
    lexical = [far, ["a"], far, ["a"], far]
    semantic = [far, far, ["b", "a"], ["a"], far]
    assert misses(hybrid, lexical, semantic, queries) == {
        "queries": 5,
        "misses": 4,  # q0 is a hit: whatever the sides did, it is no miss
        "lexical_had_it": 1,
        "semantic_had_it": 1,
        "both_had_it": 1,
        "neither_had_it": 1,
    }
    assert misses(hybrid, lexical, semantic, queries, k=6)["misses"] == 0


def _results(recall: float) -> dict[str, Any]:
    quality = {"all": {"queries": 1, "recall_at_5": recall, "recall_at_10": recall, "mrr": recall}}
    return {
        "sets": [
            {
                "name": "toy",
                "source": "made here",
                "units": 2,
                "unit_chars_median": 10,
                "rank_bm25": {"quality": quality, "query_ms": 0.1},
                "embedders": [],
                "missing": ["toy model: not installed"],
            }
        ]
    }


def test_the_section_is_replaced_between_its_markers(tmp_path: Path) -> None:
    page = tmp_path / "benchmarks.md"
    page.write_text("# Benchmarks\n\nabove\n\n## Notes\n\n- below\n")
    write_page(_results(0.5), page)
    write_page(_results(0.25), page)
    text = page.read_text()
    assert text.count(START) == text.count(END) == 1
    assert "| rank_bm25 (BM25Okapi) | 0.250 |" in text
    assert "0.500" not in text
    assert "Not measured: toy model: not installed" in text
    assert text.index("above") < text.index(START) < text.index("## Notes") < text.index("- below")
