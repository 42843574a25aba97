"""The benchmark page's conversation-history section, from ``python -m bench.history``'s figures."""

from __future__ import annotations

from typing import Any

__all__ = ["history_section"]


def history_section(history: dict[str, Any]) -> list[str]:
    if not history or "error" in history:
        return []
    size, searched = history["conversation"], history["searched"]
    lines = [
        "## Conversation history (`self.history`)",
        "",
        f"In process on one core (`python -m bench.history`), beside the same work done through `self.remember`"
        f" directly. Append: a {size:,}-message conversation saved one message per call, as an agent saves its"
        f" turns (the tree is rewritten by compare-and-set on every save), against {size:,} `remember.set` of the"
        f" same texts; µs per call. Load: the whole {size:,}-message path (two round trips), against the same"
        f" {size:,} values read back with `remember.get` one by one. Search: {history['queries']} queries over"
        f" one caller's {searched:,} messages in {searched // size} conversations, against the same {searched:,}"
        " texts kept as searchable values; p50 / p99 in ms.",
        "",
        f"| store | append (µs per save) | `remember.set` | load {size:,} (ms) | {size:,} `remember.get` |"
        f" search {searched:,} (ms) | `remember.search` |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for store in ("memory", "sqlite", "redis", "postgres"):
        row = history.get(store)
        if not row:
            continue
        load, search = row["load"], row["search"]
        lines.append(
            f"| {store} | {row['append']['history_us']:,.0f} | {row['append']['remember_us']:,.0f} |"
            f" {load['history']['p50_ms']:.1f} / {load['history']['p99_ms']:.1f} |"
            f" {load['remember_one_by_one']['p50_ms']:.1f} / {load['remember_one_by_one']['p99_ms']:.1f} |"
            f" {search['history']['p50_ms']:.2f} / {search['history']['p99_ms']:.2f} |"
            f" {search['remember']['p50_ms']:.2f} / {search['remember']['p99_ms']:.2f} |"
        )
    lines += [
        "",
        "A save costs more than a `set` because it also changes the conversation's tree (read, compare-and-set),"
        " whose size grows with the conversation; a load costs less than reading the same values one by one"
        " because the path's messages come in one batch. Search ranks with the same blind index as"
        " `remember.search`, then reads the trees of the conversations it found to leave out messages whose save"
        " never completed.",
        "",
    ]
    return lines
