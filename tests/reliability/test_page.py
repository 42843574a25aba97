"""docs/reliability.md stays in step with the suite: every test that records figures has its row."""

from __future__ import annotations

from pathlib import Path

import pytest

from reliability.figures import Figures
from reliability.page import END, PAGE, START, missing_rows, recording_tests, render

HERE = Path(__file__).resolve().parent


def test_every_test_that_records_figures_has_a_row_on_the_page_under_its_file() -> None:
    generated = PAGE.read_text().split(START, 1)[1].split(END, 1)[0]
    sections = {part.split("`", 1)[0]: part for part in generated.split("\n### `")[1:] if part.startswith("tests/")}
    missing = [
        f"{path}::{name}"
        for path, names in recording_tests().items()
        for name in names
        if f"| `{name}`" not in sections.get(path, "") and f"| `{name}[" not in sections.get(path, "")
    ]
    assert not missing, f"run `pytest tests/reliability` then `python tests/reliability/page.py`; missing: {missing}"


def test_the_page_refuses_the_figures_of_a_partial_run() -> None:
    assert missing_rows({"tests": []})  # nothing recorded: every recording test is missing
    rows = [{"test": f"{path}::{name}[x]"} for path, names in recording_tests().items() for name in names]
    assert missing_rows({"tests": rows}) == []


def test_the_page_shows_each_row_with_its_figures_and_the_conformance_summary() -> None:
    document = {
        "when": "2026-11-30 12:00 UTC",
        "commit": "abc1234",
        "ci": True,
        "python": "3.11.7",
        "machine": "x86_64, 2 cores",
        "tests": [
            {
                "test": "tests/reliability/test_x.py::test_y[redis]",
                "outcome": "passed",
                "seconds": 1.25,
                "figures": {"callers": 64, "calls": 6400, "lost": 0},
                "detail": "a | b",
                "extra": {},
            },
            {
                "test": "tests/reliability/test_c.py::test_era[2026-07-28]",
                "outcome": "passed",
                "seconds": 5.0,
                "figures": {"inputs": 40},
                "detail": "",
                "extra": {
                    "conformance": {
                        "spec_version": "2026-07-28",
                        "total": 40,
                        "passed": 13,
                        "expected_failures": {"prompts-list": "mcpkit serves tools only"},
                        "unexpected": [],
                    }
                },
            },
        ],
    }
    text = render(document)
    assert text.startswith(START)
    assert text.endswith(END)
    assert "commit `abc1234`" in text
    assert "CI=true" in text
    assert "| `test_y[redis]` | passed | 64 | 6,400 |  |  | 0 |  |  | 1.2 | a \\| b |" in text
    assert "| 2026-07-28 | 40 | 13 | 1 | 0 |" in text
    assert "- `prompts-list`: mcpkit serves tools only" in text


def test_figures_add_up_and_refuse_an_unknown_column() -> None:
    figures = Figures("t")
    figures.record(calls=3, lost=0)
    figures.record(calls=4, detail="second")
    assert figures.numbers == {"calls": 7, "lost": 0}
    assert figures.detail == "second"
    with pytest.raises(ValueError, match="unknown figure"):
        figures.record(requests=1)
