"""Reading a conversation a bounded piece at a time, newest first, so that one long conversation never holds up the
other callers; a page's sealed cursor continues with the older messages."""

from __future__ import annotations

from typing import Any, NamedTuple

import pydantic_core

from mcpkit_storage import CursorSeal, Found, Place, Vault, read_many_in_thread

from ._errors import HistoryInvalidError, HistoryNotFoundError
from ._messages import check_id
from ._tree import Tree

__all__ = ["BATCH", "HistoryPage", "message_bytes", "older_than", "opened_cursor", "path_ids", "read_newest"]

#: Messages read from the store at once (at most ``max_message_bytes`` each: 1 MiB at the default size).
BATCH = 16


class HistoryPage(NamedTuple):
    """Messages of a conversation, oldest first, and the cursor of the older ones before them (None: no more)."""

    messages: list[dict[str, Any]]
    next_cursor: str | None


def message_bytes(value: Found) -> int:
    """How much a message weighs in a page: its content as JSON."""
    content = value.value.get("content") if isinstance(value.value, dict) else value.value
    return len(content) if isinstance(content, str) else len(pydantic_core.to_json(content))


def path_ids(
    tree: Tree | None, conversation: str, leaf_id: str | None, compacted: bool, limit: int | None
) -> list[str]:
    """The ids from the root to ``leaf_id`` (default: the newest leaf), a summary standing for what it compacted."""
    if tree is None or tree.head is None:
        if leaf_id is not None:
            raise HistoryNotFoundError(conversation, check_id(leaf_id, "leaf_id"))
        return []
    leaf = tree.head if leaf_id is None else check_id(leaf_id, "leaf_id")
    if leaf not in tree.parents():
        raise HistoryNotFoundError(conversation, leaf)
    path = tree.path(leaf)
    summary = tree.compaction_on(path) if compacted else None
    ids = path if summary is None else [summary[0], *path[summary[1] :]]
    return ids if limit is None else ids[-limit:]


def opened_cursor(seal: CursorSeal, cursor: str, owner: str, conversation: str) -> tuple[str, str]:
    """The leaf a page's cursor continues on and the message its older messages come before (sealed: owner,
    conversation, leaf, message); HISTORY_INVALID when it is not this caller's for this conversation, intact."""
    parts = seal.read(cursor, 4)
    if parts is None or parts[0] != owner or parts[1] != conversation:
        raise HistoryInvalidError(
            f"cursor is not a nextCursor that load_history gave you for {conversation!r} (changed, or another "
            "caller's or conversation's); load it again without a cursor."
        )
    return parts[2], parts[3]


def older_than(ids: list[str], before: str, conversation: str) -> list[str]:
    """The ids before ``before`` (where the previous page began); HISTORY_INVALID when it is no longer there."""
    if before not in ids:
        raise HistoryInvalidError(
            f"The conversation {conversation!r} changed since this cursor was given (compacted or cleared); load it "
            "again without a cursor."
        )
    return ids[: ids.index(before)]


async def read_newest(
    vault: Vault, place: Place, conversation: str, ids: list[str], now: float, max_bytes: int | None
) -> tuple[list[tuple[str, Found]], int]:
    """The messages of ``ids``, read newest first until ``max_bytes`` of them (always at least one), oldest first;
    and how many of ``ids``, from the first, are left unread. A message past its deadline is left out."""
    kept: list[tuple[str, Found]] = []
    read = 0
    end = len(ids)
    while end > 0 and (max_bytes is None or read < max_bytes):
        start = max(0, end - BATCH)
        batch = ids[start:end]
        values = await read_many_in_thread(vault, place, [f"{conversation}/{node}" for node in batch], now)
        for offset in range(len(batch) - 1, -1, -1):
            value = values[offset]
            if value is None:
                continue
            size = message_bytes(value)
            if max_bytes is not None and kept and read + size > max_bytes:
                kept.reverse()
                return kept, start + offset + 1
            kept.append((batch[offset], value))
            read += size
        end = start
    kept.reverse()
    return kept, end
