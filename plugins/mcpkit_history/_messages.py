"""Messages in a provider-neutral shape, checked before anything is written.

A message is ``{"id"?, "role", "content", "at"?}``: ``role`` is ``user``, ``assistant``, ``system`` or ``tool``;
``content`` is a string or a list of parts, each ``{"type": "text", "text"}``, ``{"type": "tool_call", "id", "name",
"arguments"}`` or ``{"type": "tool_result", "tool_call_id", "content"}``; ``at`` is when it was said (seconds since
the epoch, a datetime or an ISO 8601 text; default: when it is saved), its event time, by which a search's window
keeps it. An id the caller does not give is made here; a given one is 1-64 letters, digits, ``_`` or ``-`` and new
in its conversation.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from mcpkit_storage import Found, Kept, is_event_time

from ._errors import HistoryInvalidError

__all__ = [
    "MAX_MESSAGES_PER_SAVE",
    "MAX_MESSAGE_BYTES",
    "check_conversation",
    "checked_messages",
    "event_time",
    "new_id",
    "said_at",
    "stored",
    "text_of",
]

ROLES = ("user", "assistant", "system", "tool")

#: The largest message (its content as compact JSON) and the most messages one save may carry.
MAX_MESSAGE_BYTES = 64 * 1024
MAX_MESSAGES_PER_SAVE = 100

_NAME = re.compile(r"^[A-Za-z0-9_.:\-]{1,128}$")
_ID = re.compile(r"^[A-Za-z0-9_\-]{1,64}$")
_PART_FIELDS = {
    "text": {"type", "text"},
    "tool_call": {"type", "id", "name", "arguments"},
    "tool_result": {"type", "tool_call_id", "content"},
}
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def check_conversation(name: object) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise HistoryInvalidError(
            f"A conversation is named with 1-128 letters, digits, '_', '.', ':' or '-' (a ticket id, a chat id), "
            f"not {name!r:.60}."
        )
    return name


def check_id(message_id: object, what: str = "A message id") -> str:
    if not isinstance(message_id, str) or not _ID.match(message_id):
        raise HistoryInvalidError(f"{what} is 1-64 letters, digits, '_' or '-', not {message_id!r:.60}.")
    return message_id


def new_id() -> str:
    """A fresh message id: 96 random bits, so ids never collide and say nothing about their order."""
    return "m_" + secrets.token_hex(12)


def event_time(at: object, where: str) -> float | None:
    """A message's ``at`` in seconds since the epoch (None: not given), or HistoryInvalidError saying what it takes."""
    if at is None:
        return None
    try:
        seconds = Kept.moment(at)
    except ValueError as exc:
        raise HistoryInvalidError(f"{where}: at {exc}") from None
    if not is_event_time(seconds):
        raise HistoryInvalidError(f"{where}: at is a time from 1970 to the year 9999, not {at!r:.40}.")
    return seconds


def checked_messages(messages: object, limit: int, at: float | None = None) -> list[dict[str, Any]]:
    """``messages`` as stored (``id``, ``role``, ``content``, ``at``: a message's own, else ``at``), or
    HistoryInvalidError naming the first problem."""
    if isinstance(messages, Mapping | str) or not isinstance(messages, Sequence):
        raise HistoryInvalidError('messages is a list of messages, like [{"role": "user", "content": "Hello"}].')
    if not messages:
        raise HistoryInvalidError("messages is empty: give at least one message to save.")
    if len(messages) > MAX_MESSAGES_PER_SAVE:
        raise HistoryInvalidError(
            f"{len(messages)} messages in one save; send at most {MAX_MESSAGES_PER_SAVE} at a time (the next save "
            "continues after the last one)."
        )
    checked = []
    seen: set[str] = set()
    for position, message in enumerate(messages):
        one = _message(f"messages[{position}]", message, limit)
        if one["at"] is None:
            one["at"] = at
        if one["id"] in seen:
            raise HistoryInvalidError(f"messages[{position}]: the id {one['id']!r} is given twice in this save.")
        seen.add(one["id"])
        checked.append(one)
    return checked


def _message(where: str, message: object, limit: int) -> dict[str, Any]:
    if not isinstance(message, Mapping):
        raise HistoryInvalidError(
            f'{where} is an object like {{"role": "user", "content": "..."}}, not {message!r:.40}.'
        )
    unknown = sorted(str(name) for name in message if name not in ("id", "role", "content", "at"))
    if unknown:
        raise HistoryInvalidError(
            f"{where} has {unknown}; a message has id (optional), role, content and at (optional)."
        )
    role = message.get("role")
    if role not in ROLES:
        raise HistoryInvalidError(f"{where}: role is one of {', '.join(ROLES)}, not {role!r:.40}.")
    content = message.get("content")
    if isinstance(content, str):
        checked_content: str | list[dict[str, Any]] = content
    elif isinstance(content, Sequence) and not isinstance(content, Mapping | bytes) and content:
        checked_content = [_part(f"{where}.content[{number}]", part) for number, part in enumerate(content)]
    else:
        raise HistoryInvalidError(f"{where}: content is a string or a non-empty list of parts, not {content!r:.40}.")
    given = message.get("id")
    message_id = new_id() if given is None else check_id(given, f"{where}: id")
    try:
        size = len(_ENCODER.encode(checked_content).encode())
    except (TypeError, ValueError, UnicodeEncodeError) as exc:
        raise HistoryInvalidError(f"{where}: content is not JSON text ({exc}).") from None
    if size > limit:
        raise HistoryInvalidError(
            f"{where} is {size:,} bytes as JSON; a message may have at most {limit:,}: split it, or keep large "
            "documents elsewhere and save a reference."
        )
    at = event_time(message.get("at"), where)
    return {"id": message_id, "role": role, "content": checked_content, "given": given is not None, "at": at}


def _part(where: str, part: object) -> dict[str, Any]:
    if not isinstance(part, Mapping) or part.get("type") not in _PART_FIELDS:
        raise HistoryInvalidError(f"{where} is a part whose type is text, tool_call or tool_result, not {part!r:.60}.")
    kind = part["type"]
    fields = _PART_FIELDS[kind]
    if set(part) != fields:
        raise HistoryInvalidError(f"{where}: a {kind} part has exactly {sorted(fields)}, not {sorted(map(str, part))}.")
    for name in fields - {"type", "arguments", "content"}:
        if not isinstance(part[name], str):
            raise HistoryInvalidError(f"{where}: {name} is a string, not {part[name]!r:.40}.")
    if kind == "tool_call" and not isinstance(part["arguments"], Mapping | str):
        raise HistoryInvalidError(f"{where}: arguments is an object (or its JSON text), not {part['arguments']!r:.40}.")
    if kind == "tool_result" and not isinstance(part["content"], str | Sequence | Mapping):
        raise HistoryInvalidError(f"{where}: content is the tool's result (text or JSON), not {part['content']!r:.40}.")
    return dict(part)


def text_of(content: str | list[dict[str, Any]]) -> str:
    """The words of a message, for ranking within one conversation: its text, tool names and results."""
    if isinstance(content, str):
        return content
    texts = []
    for part in content:
        if part["type"] == "text":
            texts.append(part["text"])
        elif part["type"] == "tool_call":
            texts.append(part["name"])
            arguments = part["arguments"]
            texts.append(arguments if isinstance(arguments, str) else _ENCODER.encode(arguments))
        else:
            result = part["content"]
            texts.append(result if isinstance(result, str) else _ENCODER.encode(result))
    return "\n".join(texts)


class Hit(NamedTuple):
    """One message a search found, with the conversation it is in; ``score`` is BM25's (higher is better)."""

    conversation: str
    message: dict[str, Any]
    score: float


def message_of(node: str, found: Found, parent: str | None) -> dict[str, Any]:
    """A message as ``get`` and ``search`` return it: a summary says what it stands for instead of a parent."""
    value = found.value
    message: dict[str, Any] = {"id": node, "role": value["role"], "content": value["content"]}
    if "summary_of" in value:
        message["summary_of"] = value["summary_of"]
    else:
        message["parent_id"] = parent
    message["created_at"] = found.updated_at
    message["at"] = value.get("at", found.updated_at)
    return message


def stored(message: dict[str, Any]) -> dict[str, Any]:
    """What is kept of a checked message: its role, content and event time when it was given (its parent: the tree)."""
    kept = {"role": message["role"], "content": message["content"]}
    return kept if message["at"] is None else {**kept, "at": message["at"]}


def said_at(found: Found) -> float:
    """A kept message's event time: its own ``at``, else when it was saved."""
    at = found.value.get("at")
    return float(at) if at is not None else found.updated_at or 0.0
