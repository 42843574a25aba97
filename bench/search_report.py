"""The search benchmark's targets (issue 10) and its section of docs/benchmarks.md."""

from __future__ import annotations

from typing import Any

from bench.report import _target

__all__ = ["search_section", "search_targets"]


def search_targets(search: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 10's targets, judged on one run of ``python -m bench.search``."""
    if not search or "error" in search:
        return [_target("search benchmarks", "not measured or failed", False)] if search else []
    targets = []
    latency, sizes = search["latency"], search["sizes"]
    sqlite = latency["sqlite"].get("10000")
    if sqlite:
        targets.append(
            _target(
                f"search p99 on SQLite at 10k values for one owner (with {latency['sqlite']['others']:,} other"
                " values) <= 20 ms",
                f"p50 {sqlite['p50_ms']:.2f} ms, p99 {sqlite['p99_ms']:.2f} ms",
                sqlite["p99_ms"] <= 20 and latency["sqlite"]["others"] >= 1_000_000,
                "" if latency["sqlite"]["others"] >= 1_000_000 else "--quick: fewer than 1M other values",
            )
        )
    trips = [latency["redis"][str(size)]["round_trips"] for size in sizes if str(size) in latency.get("redis", {})]
    if trips:
        targets.append(_target("Redis: <= 3 round trips per search", ", ".join(map(str, trips)), max(trips) <= 3))
    fts5 = search.get("fts5", {}).get("10000")
    if sqlite and fts5:
        ratio50, ratio99 = sqlite["p50_ms"] / fts5["p50_ms"], sqlite["p99_ms"] / fts5["p99_ms"]
        targets.append(
            _target(
                "encrypted search on SQLite <= 1.5 x plain-text SQLite FTS5 (porter), same data and queries, 10k",
                f"p50 {sqlite['p50_ms']:.2f} vs {fts5['p50_ms']:.2f} ms = {ratio50:.2f} x; p99 {sqlite['p99_ms']:.2f}"
                f" vs {fts5['p99_ms']:.2f} ms = {ratio99:.2f} x",
                ratio50 <= 1.5 and ratio99 <= 1.5,
            )
        )
    indexing = search.get("indexing", {})
    for store in ("memory", "sqlite", "redis"):
        if f"{store}/ratio" in indexing:
            on, off = indexing[f"{store}/on"], indexing[f"{store}/off"]
            targets.append(
                _target(
                    f"indexing: a set with search=True <= 2 x a set without ({store})",
                    f"{on['min_us']:.1f} us vs {off['min_us']:.1f} us = {indexing[f'{store}/ratio']:.2f} x",
                    indexing[f"{store}/ratio"] <= 2,
                )
            )
    quality = search.get("quality", {})
    if quality:
        paraphrased = quality["paraphrased"]["recall_at_5"]
        targets.append(
            _target(
                "quality: hybrid recall@5 >= BM25 and semantic alone, and >= 0.85 on the paraphrased half",
                f"BM25 only (no embedder yet): recall@5 {quality['all']['recall_at_5']:.2f} overall,"
                f" {paraphrased:.2f} paraphrased",
                False,
                "semantic and hybrid search are not built yet",
            )
        )
    return targets


def search_section(search: dict[str, Any]) -> list[str]:
    """The page's search section: latency per store and size, the FTS5 baseline, indexing, quality."""
    if not search or "error" in search:
        return []
    latency, sizes = search["latency"], search["sizes"]
    lines = [
        "## Search (`self.remember.search`)",
        "",
        *([search["note"], ""] if search.get("note") else []),
        f"One caller's values, written through `self.remember.set` (8-16 Zipf-distributed words each, from"
        f" {5000:,} pseudo-words), among other owners' values written straight into the same store with their"
        f" postings (quotas lifted: 100,000 values is past the default `max_values`); {search['queries']} queries"
        " of 1-3 words, `limit=10`, in process on one core; p50 / p99 in"
        " ms. The FTS5 row is the same texts and queries in a plain-text SQLite FTS5 table (`porter unicode61`,"
        ' `owner:"me" AND (w1 OR w2)`, values read back), queried from one worker thread as the SQLite store'
        " is.",
        "",
        "| store | other values | " + " | ".join(f"{size:,} values" for size in sizes) + " |",
        "|---|---:|" + "---:|" * len(sizes),
    ]
    rows = [(store, latency[store]) for store in ("memory", "sqlite", "redis") if store in latency]
    rows.append(("SQLite FTS5, plain text", search["fts5"]))
    for name, row in rows:
        cells = []
        for size in sizes:
            cell = row.get(str(size))
            if cell is None:
                cells.append("-")
                continue
            trips = f", {cell['round_trips']} round trips" if "round_trips" in cell else ""
            cells.append(f"{cell['p50_ms']:.2f} / {cell['p99_ms']:.2f}{trips}")
        lines.append(f"| {name} | {row['others']:,} | " + " | ".join(cells) + " |")
    indexing = search.get("indexing", {})
    if indexing:
        lines += [
            "",
            "Indexing cost: `set` of a 100-character text, best of the repeats, with `search=True` and without"
            " (the default, which writes no postings):",
            "",
            "| store | with postings | without | ratio |",
            "|---|---:|---:|---:|",
        ]
        for store in ("memory", "sqlite", "redis"):
            if f"{store}/ratio" in indexing:
                on, off = indexing[f"{store}/on"]["min_us"], indexing[f"{store}/off"]["min_us"]
                lines.append(f"| {store} | {on:.1f} us | {off:.1f} us | {indexing[f'{store}/ratio']:.2f} x |")
    quality = search.get("quality", {})
    if quality:
        lines += [
            "",
            f"Quality over the labelled set in `bench/data/quality.py` ({quality['memories']} memories of one user,"
            f" {quality['queries']} queries: for each memory one lexical query, with its words, and one"
            " paraphrased query, without them). Only BM25 exists so far; semantic and hybrid rows come with the"
            " embedder.",
            "",
            "| ranking | queries | P@1 | MRR | recall@5 |",
            "|---|---:|---:|---:|---:|",
        ]
        for kind in ("lexical", "paraphrased", "all"):
            row = quality[kind]
            figures = f"{row['p_at_1']:.2f} | {row['mrr']:.2f} | {row['recall_at_5']:.2f}"
            lines.append(f"| BM25, {kind} | {row['queries']} | {figures} |")
    return [*lines, ""]
