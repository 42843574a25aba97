"""Which change histories of an export file an import leaves out: those of a key whose value the store keeps."""

from __future__ import annotations

import json
from typing import Any, Literal

from ..vault import VERSIONS_KEY, Found

__all__ = ["history_left_out", "value_key"]

_LIVE_EVENTS = ("set", "update", "import")


def value_key(history_key: str) -> str:
    """The key whose change history is kept under ``history_key`` (an internal ``VERSIONS_KEY`` key)."""
    return history_key[len(VERSIONS_KEY) :]


def history_left_out(history_json: bytes, kept: Found | None, on_conflict: Literal["skip", "replace", "newer"]) -> bool:
    """Whether the file's change history of a key (its versions' JSON) stays out of the store because the store keeps
    its own live value ``kept`` of that key, which the history does not end with: ``skip``, or ``newer`` with the
    store's value written later than the history's last. That history tells how another value came to be, and would
    outlive the one that stays; a history ending with the value the store holds (imported now, or before) goes in."""
    if kept is None or on_conflict == "replace":
        return False
    last = _last_value(history_json)
    if last is not None and last == (_canonical(kept.value), kept.updated_at):
        return False
    if on_conflict == "newer" and last is not None:
        return (last[1] or 0.0) <= (kept.updated_at or 0.0)
    return True


def _last_value(history_json: bytes) -> tuple[str, float | None] | None:
    """The value a history ends with (its JSON, canonical, and its write time); None when it ends with none (a
    ``delete``, an ``expire``, a value whose ttl ended)."""
    rows = json.loads(history_json)
    if not isinstance(rows, list) or not rows:
        return None
    event, value, written_at, *_ = rows[-1]
    if event not in _LIVE_EVENTS or not isinstance(value, str):
        return None
    return _canonical(json.loads(value)), written_at


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
