"""docs/scaling.md shows exactly what ``python -m bench.scaling`` makes of the committed benchmark results."""

from __future__ import annotations

import json

from bench.scaling import CAPACITY, LATEST, PAGE, rewrite


def test_the_scaling_figures_are_those_of_the_committed_results() -> None:
    page = PAGE.read_text()
    capacity, latest = json.loads(CAPACITY.read_text()), json.loads(LATEST.read_text())

    assert rewrite(page, capacity, latest) == page, "run python -m bench.scaling after a benchmark run"


def test_the_plan_follows_from_the_measurements() -> None:
    capacity = json.loads(CAPACITY.read_text())
    for store in ("sqlite", "redis", "redis-cluster", "postgres"):
        plain, searched = capacity[f"{store}/plain"], capacity[f"{store}/search"]
        assert 0 < plain["bytes_per_value"] < searched["bytes_per_value"]  # an index costs something
    assert "figures:start" in PAGE.read_text()
