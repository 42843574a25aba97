"""The search benchmark's targets (issue 10) and its section of docs/benchmarks.md."""

from __future__ import annotations

from typing import Any

from bench.report import _target

#: The indexing reference rows' name: SQLite's own full-text index on plain text, doing what the SQLite store does.
FTS5_REFERENCE = "fts5"

__all__ = ["FTS5_REFERENCE", "search_section", "search_targets"]


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
        targets.append(
            _target(
                "Redis: <= 3 round trips per search",
                f"{', '.join(map(str, trips))} (the most of any query, at each size)",
                max(trips) <= 3,
            )
        )
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
    for store in _indexed(indexing):
        if f"{store}/ratio" in indexing and not _reference(store):
            on, off, ratio = indexing[f"{store}/on"], indexing[f"{store}/off"], indexing[f"{store}/ratio"]
            pairs = indexing.get(f"{store}/ratios")
            measured = f"{on['min_us']:.1f} us vs {off['min_us']:.1f} us = {ratio:.2f} x"
            if pairs:  # back-to-back pairs: the median of their ratios
                spread = f"{pairs['min']:.2f}-{pairs['max']:.2f}; CPU time {pairs['cpu']:.2f} x"
                measured = f"median of {pairs['pairs']} back-to-back pairs {ratio:.2f} x ({spread}); best "
                measured += f"{on['min_us']:.1f} us vs {off['min_us']:.1f} us"
            reference = store.replace("sqlite", FTS5_REFERENCE, 1)
            if store.split("@")[0] == "sqlite" and f"{reference}/on" in indexing:
                added = indexing[f"{reference}/on"]["min_us"] - indexing[f"{reference}/off"]["min_us"]
                measured += f"; plain-text SQLite FTS5 adds {added:.1f} us to a write here, in the same run"
            targets.append(
                _target(f"indexing: a set with search=True <= 2 x a set without ({_kept(store)})", measured, ratio <= 2)
            )
    quality, semantic = search.get("quality", {}), search.get("semantic", {})
    if quality:
        title = "quality: hybrid recall@5 >= BM25 and semantic alone, and >= 0.85 on the paraphrased half"
        if "quality" not in semantic:
            why = semantic.get("error", "not measured")
            targets.append(_target(title, f"BM25 recall@5 {quality['all']['recall_at_5']:.2f}", False, why))
        else:
            modes = {"BM25": quality, **{_MODES[mode]: semantic["quality"][mode] for mode in ("semantic", "hybrid")}}
            recall = {(name, kind): rows[kind]["recall_at_5"] for name, rows in modes.items() for kind in _KINDS}
            hybrid_best = all(
                recall[("hybrid", kind)] >= max(recall[("BM25", kind)], recall[("semantic", kind)]) for kind in _KINDS
            )
            targets.append(
                _target(
                    title,
                    "recall@5 lexical / paraphrased / all: "
                    + "; ".join(
                        f"{name} " + " / ".join(f"{recall[(name, kind)]:.2f}" for kind in _KINDS) for name in modes
                    ),
                    hybrid_best and recall[("hybrid", "paraphrased")] >= 0.85,
                )
            )
    return targets


#: How the rows of the quality table are named, and its kinds of query.
_MODES = {
    "semantic": "semantic",
    "semantic_every": "semantic, every memory ranked",
    "hybrid": "hybrid",
    "hybrid_rrf": "hybrid, RRF",
}
_KINDS = ("lexical", "paraphrased", "all")


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
    rows = [(store, latency[store]) for store in ("memory", "sqlite", "redis", "postgres") if store in latency]
    rows.append(("SQLite FTS5, plain text", search["fts5"]))
    for name, row in rows:
        cells = []
        for size in sizes:
            cell = row.get(str(size))
            if cell is None:
                cells.append("-")
                continue
            trips = ""
            if "round_trips" in cell:
                trips = f", {cell['round_trips']} round trip{'s' if cell['round_trips'] != 1 else ''} at most"
            cells.append(f"{cell['p50_ms']:.2f} / {cell['p99_ms']:.2f}{trips}")
        lines.append(f"| {name} | {row['others']:,} | " + " | ".join(cells) + " |")
    indexing = search.get("indexing", {})
    if indexing:
        lines += [
            "",
            "Indexing cost: `set` of about 100-character texts that change at every write (three of the labelled"
            " set's memories each), with `search=True` and without (the default, which writes no postings), both"
            " plugins side by side, timed in back-to-back pairs; best run of each, and the median of the pairs'"
            " ratios. Under one key rewritten again and again, and among 10,000 values of the owner rewritten at"
            " random (a real index, whose postings spread over many pages). The reference rows: the same texts and"
            " keys in plain-text SQLite FTS5 (`porter unicode61`), each beside a row like the SQLite store's, from"
            " one worker thread: the row alone (without), or the row and its text in one transaction that deletes"
            " the key's old text (with), measured the same way; not encrypted, what SQLite's own full-text index"
            " adds to a write:",
            "",
            "| store | values kept | with postings | without | added | ratio |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for store in _indexed(indexing):
            on, off = indexing[f"{store}/on"]["min_us"], indexing[f"{store}/off"]["min_us"]
            kind, _, kept = store.partition("@")
            name = "SQLite FTS5, plain text (reference)" if _reference(store) else kind
            ratio = indexing[f"{store}/ratio"]
            lines.append(
                f"| {name} | {int(kept or 1):,} | {on:.1f} us | {off:.1f} us | {on - off:.1f} us | {ratio:.2f} x |"
            )
    quality = search.get("quality", {})
    if quality:
        lines += [
            "",
            f"Quality over the labelled set in `bench/data/quality.py` ({quality['memories']} memories of one user,"
            f" {quality['queries']} queries: for each memory one lexical query, with its words, and one"
            " paraphrased query, without them). *semantic*: cosine similarity of the embedder's vectors alone,"
            " the memories above its `min_similarity` as a search keeps them (*semantic, every memory ranked*: all"
            " of them, the model's whole ranking, which a search no longer returns); *hybrid*:"
            " `self.remember.search` with the embedder (relative score fusion, what users get); *hybrid, RRF*: the"
            " same two rankings by reciprocal rank fusion (k = 60), for comparison.",
            "",
            "| ranking | queries | P@1 | MRR | recall@5 |",
            "|---|---:|---:|---:|---:|",
        ]
        semantic = search.get("semantic", {})
        modes = [("BM25", quality)] + [(_MODES[mode], rows) for mode, rows in semantic.get("quality", {}).items()]
        for name, rows in modes:
            for kind in _KINDS:
                row = rows[kind]
                figures = f"{row['p_at_1']:.2f} | {row['mrr']:.2f} | {row['recall_at_5']:.2f}"
                lines.append(f"| {name}, {kind} | {row['queries']} | {figures} |")
        lines += _semantic_costs(semantic)
    return [*lines, ""]


def _semantic_costs(semantic: dict[str, Any]) -> list[str]:
    if "embedding" not in semantic:
        why = semantic.get("error", "not measured")
        return ["", f"Semantic and hybrid rows: not measured ({why})."]
    embedding, size = semantic["embedding"], semantic["sqlite_bytes_per_value"]
    return [
        "",
        f"The embedder: `{semantic['model']}` ({semantic['dimensions']} dimensions, `mcpkit_search.MiniLM`), on one"
        f" core. Embedding one value {embedding['value_p50_ms']:.1f} ms and one query {embedding['query_p50_ms']:.1f}"
        f" ms (medians, one text at a time, as a write and a search do); {embedding['batch_per_value_ms']:.1f} ms per"
        " value in one batch (values kept without a vector, embedded at a search). The SQLite file, per value of the"
        f" labelled set kept with search on: {size['with_vectors']:,.0f} bytes with vectors, {size['without']:,.0f}"
        " without.",
        *_hybrid_latency(semantic.get("latency", {})),
    ]


def _hybrid_latency(latency: dict[str, Any]) -> list[str]:
    if not latency:
        return []
    sizes = sorted({int(size) for row in latency.values() for size in row}, key=int)
    lines = [
        "",
        "Search with an embedder, p50 / p99 in ms, the model's own time left out (vectors of the same length"
        " from a stand-in that makes them in microseconds; add a query's embedding time above): a search reads the"
        " vectors of the caller's scope from its vector shards and opens only its best values; the retrieval"
        " section's scaling rows go to 100,000 values.",
        "",
        "| store | " + " | ".join(f"{size:,} values" for size in sizes) + " |",
        "|---|" + "---:|" * len(sizes),
    ]
    for store, row in latency.items():
        cells = [f"{row[str(size)]['p50_ms']:.2f} / {row[str(size)]['p99_ms']:.2f}" for size in sizes]
        lines.append(f"| {store} | " + " | ".join(cells) + " |")
    return lines


def _indexed(indexing: dict[str, Any]) -> list[str]:
    """The indexing rows measured, in the page's order: each store under one key, then among many values."""
    names = {name.rsplit("/", 1)[0] for name in indexing if name.endswith("/ratio")}
    order = ["memory", "sqlite", "redis", "postgres", FTS5_REFERENCE]

    def place(name: str) -> tuple[bool, int, str]:  # a store not listed comes after those that are
        store = name.split("@")[0]
        return "@" in name, order.index(store) if store in order else len(order), name

    return sorted(names, key=place)


def _kept(name: str) -> str:
    """``sqlite@10000`` as the target's text says it: ``sqlite, among 10,000 values``."""
    store, _, kept = name.partition("@")
    return f"{store}, among {int(kept):,} values" if kept else store


def _reference(name: str) -> bool:
    """Whether an indexing row is the plain-text FTS5 reference, not a store's (it is no target)."""
    return name.split("@")[0] == FTS5_REFERENCE
