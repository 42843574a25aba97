"""The benchmark page's export and import section, from ``python -m bench.portability``'s figures."""

from __future__ import annotations

from typing import Any

__all__ = ["portability_section"]

#: The issue's targets (issue 39, item 8): values per second, and the exporting process's peak RSS.
EXPORT_TARGET, IMPORT_TARGET, RSS_TARGET_MB = 10_000, 5_000, 100

#: The rows of the speed table: (figure, what it measures, target).
_ROWS = (
    ("export_sealed_values_per_s", "export, sealed", EXPORT_TARGET),
    ("export_plaintext_values_per_s", "export, plaintext", None),
    ("import_indexed_values_per_s", "import, with search postings", IMPORT_TARGET),
    ("import_indexed_values_per_cpu_s", "import, per second of CPU", None),
    ("import_again_values_per_s", "import again (nothing changes)", None),
    ("import_again_values_per_cpu_s", "import again, per second of CPU", None),
)


def portability_section(figures: dict[str, Any]) -> list[str]:
    if not figures or "error" in figures:
        return []
    count, histories = figures["values"], figures.get("histories", 0)
    alone = figures.get("values_only", {})
    lines = [
        "## Export and import",
        "",
        f"`python -m bench.portability`, in process: a SQLite store of {count:,} searchable values (100 owners, about"
        f" 100 characters each), each with its change history as a default `RememberPlugin` (`history=3`) writes it"
        f" ({histories:,} histories: a record each beside its value), exported to a sealed file (key file) and to a"
        " plaintext one, and the sealed file imported into a new SQLite store with search postings made anew, then"
        " imported again (every value already there); beside it, the same values without histories (`history=0`)."
        " Values per second, counting values (not their histories).",
        "",
        "| | with histories (default) | values only | target |",
        "|---|---:|---:|---:|",
    ]
    for name, what, target in _ROWS:
        if name not in figures:
            continue
        speed = figures[name]
        met = "" if target is None else f"≥ {target:,} {'met' if speed >= target else 'NOT met'}"
        without = f"{alone[name]:,.0f}" if name in alone else ""
        lines.append(f"| {what} | {speed:,.0f} | {without} | {met} |")
    if "import_indexed_loop_cpu_s" in figures:
        loop, store = figures["import_indexed_loop_cpu_s"], figures["import_indexed_store_thread_cpu_s"]
        lines += [
            "",
            f"The first import's CPU by thread, with histories: {loop:.2f} s on the event loop (reading, opening,"
            f" checking and sealing records, indexing values) and {store:.2f} s on the SQLite store's worker thread"
            " (its statements and index merges). Both are Python code under one GIL, so on two free cores the wall"
            " time comes near their sum, not the larger.",
        ]
    lines += [
        "",
        f"A sealed file takes {figures['file_bytes_per_value']:.0f} bytes per value with its history"
        + (f", {alone['file_bytes_per_value']:.0f} without." if "file_bytes_per_value" in alone else "."),
        "",
    ]
    memory = figures.get("memory")
    if memory:
        peak = memory["rss_peak_mb"]
        lines += [
            f"Memory: a process that exports a store of {memory['values']:,} values (filled directly, without"
            f" postings or histories) at {memory['export_values_per_s']:,.0f} values/s has"
            f" {memory['rss_before_mb']:.0f} MB resident before the export (the interpreter, the `mcp` SDK and mcpkit)"
            f" and peaks at {peak:.0f} MB: {memory['rss_growth_mb']:.0f} MB more for the whole store (target ≤"
            f" {RSS_TARGET_MB} MB: {'met' if peak <= RSS_TARGET_MB else 'NOT met'}).",
            "",
        ]
    return lines
