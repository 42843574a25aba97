"""Lone surrogates in a request body (``"\\ud83d"``, half an emoji), refused the same way in both protocol eras
(docs/architecture.md, "Lone surrogates")."""

from __future__ import annotations

import json
import re
from typing import Any

from mcp_types import PARSE_ERROR
from starlette.types import Message, Receive, Scope, Send

from ..base import send_rpc_error

__all__ = [
    "LONE_SURROGATES_SCOPE_KEY",
    "declared_length",
    "guard_body",
    "is_plain",
    "lone_surrogate_problems",
    "replaying",
]

#: Where the guard leaves the places in a tool's arguments that held a lone surrogate.
LONE_SURROGATES_SCOPE_KEY = "mcpkit.lone_surrogates"

#: Any surrogate escape, paired or not: a body without one is passed on after one regex scan.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
#: A surrogate code point left in a string by ``json.loads``, which joins every valid pair.
_LONE = re.compile("[\ud800-\udfff]")
#: How many places an error names at most.
_MAX_PLACES = 5
_ARGUMENTS = ("params", "arguments")


def is_plain(message: Message) -> bool:
    """Whether ``message`` is a whole body with no surrogate escape in it: the usual case, passed on as it is."""
    if message["type"] != "http.request" or message.get("more_body", False):
        return False
    body: bytes = message.get("body", b"")
    return body.find(b"\\") == -1 or _SURROGATE_ESCAPE.search(body) is None  # memchr first: most bodies have no "\\"


async def guard_body(first: Message, scope: Scope, receive: Receive, send: Send, limit: int) -> Receive | None:
    """The rest of a POST body whose ``first`` message is not plain; what the SDK should receive from,
    or None once the request has been refused. A body over ``limit`` bytes is handed on as soon as that is
    known, unscanned, for the SDK to refuse."""
    held, body = await _hold(first, receive, limit)
    if body is not None and _SURROGATE_ESCAPE.search(body) is not None:
        found = _examine(body)
        if isinstance(found, str):
            await send_rpc_error(send, 400, found, code=PARSE_ERROR)
            return None
        if found is not None:
            rewritten, places = found
            scope[LONE_SURROGATES_SCOPE_KEY] = places
            held = [{"type": "http.request", "body": rewritten, "more_body": False}]
            scope["headers"] = [
                (k, str(len(rewritten)).encode()) if k.lower() == b"content-length" else (k, v)
                for k, v in scope["headers"]
            ]
    return replaying(held, receive)


async def _hold(first: Message, receive: Receive, limit: int) -> tuple[list[Message], bytes | None]:
    """The body's messages, and the body itself unless it is over ``limit`` or the client went away."""
    held = [first]
    size = len(first.get("body", b""))
    message = first
    while message["type"] == "http.request" and message.get("more_body", False):
        if size > limit:
            return held, None
        message = await receive()
        held.append(message)
        size += len(message.get("body", b""))
    if message["type"] != "http.request" or size > limit:
        return held, None
    return held, b"".join(m.get("body", b"") for m in held)


def replaying(held: list[Message], receive: Receive) -> Receive:
    """``receive`` with the ``held`` messages given back first."""
    waiting = held[::-1] if len(held) > 1 else held  # popped from the end

    async def replayed() -> Message:
        return waiting.pop() if waiting else await receive()

    return replayed


def declared_length(scope: Scope) -> int | None:
    """The body length the request's ``Content-Length`` states, if it states one."""
    for key, value in scope["headers"]:
        if key.lower() == b"content-length":
            return int(value) if value.isdigit() else None
    return None


def _examine(body: bytes) -> str | tuple[bytes, tuple[str, ...]] | None:
    """None: no lone surrogate (or not JSON, for the SDK to refuse); a reason to refuse the whole
    request; or the body with its arguments' lone surrogates replaced, and where they were."""
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return None
    places = _scrub(document)
    if not places:
        return None
    in_arguments = (
        isinstance(document, dict)
        and document.get("method") == "tools/call"
        and all(path[:2] == _ARGUMENTS and (len(path) > 2 or is_key) for path, is_key in places)
    )
    if not in_arguments:
        path, _ = places[0]
        where = ".".join(str(part) for part in path) or "the top level"
        return f"Invalid text: the request holds a lone surrogate (half of a UTF-16 pair) at {where}."
    named = tuple(dict.fromkeys(_describe_place(path[2:], is_key) for path, is_key in places))
    return json.dumps(document).encode(), named


def _scrub(document: Any) -> list[tuple[tuple[Any, ...], bool]]:
    """Replace every lone surrogate in ``document`` (in place) with U+FFFD; return where each was.

    Each place is the path to the string, and whether it was a key of the object at that path.
    Iterative, because ``json.loads`` may return data nested as deeply as the stack allows.
    """
    places: list[tuple[tuple[Any, ...], bool]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(document, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, dict):
            for key in [k for k in value if _LONE.search(k)]:
                places.append((path, True))
                value[_LONE.sub("\ufffd", key)] = value.pop(key)
            items: Any = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            continue
        for key, item in list(items):
            if isinstance(item, str):
                if _LONE.search(item):
                    places.append(((*path, key), False))
                    value[key] = _LONE.sub("\ufffd", item)
            elif isinstance(item, dict | list):
                stack.append((item, (*path, key)))
    return places


def _describe_place(path: tuple[Any, ...], is_key: bool) -> str:
    where = ".".join(str(part) for part in path)
    if not is_key:
        return where
    return f"{where} (a key)" if where else "(an argument name)"


def lone_surrogate_problems(places: tuple[str, ...]) -> list[str]:
    """The dispatcher's INVALID_INPUT lines for the places the guard found."""
    shown = [
        f"{place}: holds a lone surrogate (half of a UTF-16 pair, such as half an emoji); send whole characters"
        for place in places[:_MAX_PLACES]
    ]
    if len(places) > _MAX_PLACES:
        shown.append(f"and {len(places) - _MAX_PLACES} more places")
    return shown
