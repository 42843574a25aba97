"""The benchmark page's export and import section, from ``python -m bench.portability``'s figures."""

from __future__ import annotations

from typing import Any

__all__ = ["portability_section"]

#: The issue's targets (issue 39, item 8): values per second, and the exporting process's peak RSS.
EXPORT_TARGET, IMPORT_TARGET, RSS_TARGET_MB = 10_000, 5_000, 100


def portability_section(figures: dict[str, Any]) -> list[str]:
    if not figures or "error" in figures:
        return []
    count = figures["values"]
    export, imported = figures["export_sealed_values_per_s"], figures["import_indexed_values_per_s"]
    lines = [
        "## Export and import",
        "",
        f"`python -m bench.portability`, in process on one core: a SQLite store of {count:,} searchable values"
        " (100 owners, about 100 characters each) exported to a sealed file (key file) and to a plaintext one, and"
        " the sealed file imported into a new SQLite store with search postings made anew, then imported again"
        " (every value already there). Values per second.",
        "",
        "| | values/s | target |",
        "|---|---:|---:|",
        f"| export, sealed | {export:,.0f} | ≥ {EXPORT_TARGET:,} {'met' if export >= EXPORT_TARGET else 'NOT met'} |",
        f"| export, plaintext | {figures['export_plaintext_values_per_s']:,.0f} | |",
        f"| import, with search postings | {imported:,.0f} | ≥ {IMPORT_TARGET:,}"
        f" {'met' if imported >= IMPORT_TARGET else 'NOT met'} |",
        f"| import again (nothing changes) | {figures['import_again_values_per_s']:,.0f} | |",
    ]
    if "import_indexed_values_per_cpu_s" in figures:  # per second of the process's CPU: what a busy machine moves least
        lines.insert(-1, f"| import, per second of CPU | {figures['import_indexed_values_per_cpu_s']:,.0f} | |")
    if "import_again_values_per_cpu_s" in figures:
        lines.append(f"| import again, per second of CPU | {figures['import_again_values_per_cpu_s']:,.0f} | |")
    lines += [
        "",
        f"A sealed file takes {figures['file_bytes_per_value']:.0f} bytes per value.",
        "",
    ]
    memory = figures.get("memory")
    if memory:
        peak = memory["rss_peak_mb"]
        lines += [
            f"Memory: a process that exports a store of {memory['values']:,} values (filled directly, without"
            f" postings) at {memory['export_values_per_s']:,.0f} values/s has {memory['rss_before_mb']:.0f} MB"
            f" resident before the export (the interpreter, the `mcp` SDK and mcpkit) and peaks at {peak:.0f} MB:"
            f" {memory['rss_growth_mb']:.0f} MB more for the whole store (target ≤ {RSS_TARGET_MB} MB:"
            f" {'met' if peak <= RSS_TARGET_MB else 'NOT met'}).",
            "",
        ]
    return lines
