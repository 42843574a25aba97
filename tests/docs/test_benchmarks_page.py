"""docs/benchmarks.md is what ``python -m bench`` makes of the committed results in its generated regions, and a
run rewrites only those: the sections written by hand between them stay as written."""

from __future__ import annotations

import json
from pathlib import Path

from bench.__main__ import findings_for, targets_for
from bench.page import render
from bench.regions import merged, wrapped
from bench.retrieval_report import END, RESULTS, START, write_page

ROOT = Path(__file__).resolve().parents[2]
PAGE, LATEST = ROOT / "docs" / "benchmarks.md", ROOT / "bench" / "results" / "latest.json"


def test_the_generated_regions_are_those_of_the_committed_results() -> None:
    results = json.loads(LATEST.read_text())
    results["targets"] = targets_for(results)
    page = PAGE.read_text()

    assert render(results, findings_for(results), page) == page, (
        "docs/benchmarks.md was edited inside a generated region (between <!-- generated: NAME --> comments): "
        "write outside them, or run python -m bench --render bench/results/latest.json"
    )


def test_a_run_replaces_its_regions_and_keeps_what_was_written_between_them() -> None:
    page = "".join(
        [
            wrapped(("run", ["# Old run", ""])),
            "## Written by hand\n\nKept.\n\n",
            wrapped(("notes", ["## Notes", "- old"])),
            wrapped(("dropped", ["## Made no more"])),
        ]
    )

    text = merged(page, [("run", ["# New run", ""]), ("search", ["## Search"]), ("notes", ["## Notes", "- new"])])

    assert text == "".join(
        [
            wrapped(("run", ["# New run", ""])),
            "## Written by hand\n\nKept.\n\n",
            wrapped(("search", ["## Search"])),  # new: before the next region the page has
            "\n",
            wrapped(("notes", ["## Notes", "- new"])),
        ]
    )
    assert merged(text, [("run", ["# New run", ""]), ("search", ["## Search"]), ("notes", ["## Notes", "- new"])]) == (
        text
    )


def test_an_empty_region_keeps_its_place_and_a_new_page_is_the_regions_alone() -> None:
    page = merged(None, [("run", ["# Run"]), ("profile", []), ("notes", ["## Notes"])])

    assert page == "\n".join([wrapped(("run", ["# Run"])), wrapped(("profile", [])), wrapped(("notes", ["## Notes"]))])
    filled = merged(page, [("run", ["# Run"]), ("profile", ["## Profile"]), ("notes", ["## Notes"])])
    assert "<!-- generated: profile -->\n## Profile\n<!-- /generated: profile -->\n" in filled
    assert filled.index("## Profile") < filled.index("## Notes")
    # a page whose last line has no line end: its last region is replaced, not made twice
    assert merged(filled.rstrip("\n"), [("run", ["# Run"]), ("profile", ["## Profile"]), ("notes", ["## Notes"])]) == (
        filled
    )


def test_a_retrieval_run_leaves_the_page_as_a_full_run_makes_it(tmp_path: Path) -> None:
    results = json.loads(LATEST.read_text())
    results["targets"] = targets_for(results)
    page = tmp_path / "benchmarks.md"
    page.write_text(PAGE.read_text())

    write_page(json.loads(RESULTS.read_text()), page)  # python -m bench.retrieval, with the committed figures

    assert page.read_text() == PAGE.read_text()
    assert render(results, findings_for(results), page.read_text()) == page.read_text()


def test_a_retrieval_section_new_to_the_page_goes_before_the_generated_notes(tmp_path: Path) -> None:
    page = tmp_path / "benchmarks.md"
    page.write_text("# Benchmarks\n\n" + wrapped(("notes", ["## Notes", "- below"])))

    write_page(json.loads(RESULTS.read_text()), page)

    text = page.read_text()
    assert text.index(START) < text.index(END) < text.index("<!-- generated: notes -->")
    assert merged(text, [("notes", ["## Notes", "- new"])]).count(START) == 1  # a full run keeps it
