"""Checks and encoding for keys, values and ttls; every failure is a ``RememberInvalidError``."""

from __future__ import annotations

import json
import sys
from typing import Any

from ._errors import RememberInvalidError

__all__ = [
    "INTERNAL_KEY",
    "MAX_DEPTH",
    "MAX_KEY_LENGTH",
    "MAX_TTL",
    "check_key",
    "check_ttl",
    "encode_value",
    "is_internal_key",
]

MAX_KEY_LENGTH = 256

#: What the keys of a place's internal entries (vector shards, a key's versions) start with: a control character,
#: which ``check_key`` refuses in a caller's key, so the two never meet.
INTERNAL_KEY = "\x00"


def is_internal_key(key: str) -> bool:
    """Whether a sealed entry's key is an internal entry's (never a caller's value)."""
    return key.startswith(INTERNAL_KEY)


#: The longest ttl, in seconds (100 years): far beyond any real use, and within every store's range.
MAX_TTL = 3_155_760_000

#: How deeply a value may nest lists and objects: every store and decoder handles this depth.
MAX_DEPTH = 64

#: One encoder, built once: json.dumps() with options builds a new one on every call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def check_key(key: object) -> str:
    if not isinstance(key, str):
        raise RememberInvalidError(f"A key must be a string, not {type(key).__name__}.")
    if not key:
        raise RememberInvalidError("A key cannot be empty.")
    if len(key) > MAX_KEY_LENGTH:
        raise RememberInvalidError(f"A key can have at most {MAX_KEY_LENGTH} characters; this one has {len(key)}.")
    if not key.isprintable():
        raise RememberInvalidError(f"The key {key!r} contains control characters; use printable characters only.")
    return key


def check_ttl(ttl: object) -> float | None:
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not 0 < ttl <= MAX_TTL or ttl != ttl:
        raise RememberInvalidError(
            f"ttl is a number of seconds above 0 and at most {MAX_TTL:,} (100 years), or None to keep the value; "
            f"got {ttl!r:.40}."
        )
    return float(ttl)


def encode_value(key: str, value: Any, limit: int) -> str:
    """The value as JSON text, checked against ``limit`` bytes."""
    if type(value) is int:  # increment's counters: the encoder's own text for an int, with nothing to nest
        try:
            text = int.__repr__(value)
        except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits())
            raise RememberInvalidError(
                f"The value for {key!r} is an integer of more than {sys.get_int_max_str_digits():,} digits, longer "
                "than JSON text here allows; store it as a string."
            ) from None
        return _within(key, text, len(text), limit)
    try:
        text = _ENCODER.encode(value)
    except (TypeError, ValueError) as exc:
        raise RememberInvalidError(
            f"The value for {key!r} is not JSON ({exc}); store strings, numbers, booleans, null, lists and objects."
        ) from None
    try:
        size = len(text.encode())
    except UnicodeEncodeError:
        raise RememberInvalidError(
            f"The value for {key!r} holds text that is not valid Unicode (a lone surrogate); send valid UTF-8 text."
        ) from None
    _within(key, text, size, limit)
    if text.count("[") + text.count("{") > MAX_DEPTH and _depth(value) > MAX_DEPTH:
        raise RememberInvalidError(f"The value for {key!r} nests lists and objects more than {MAX_DEPTH} levels deep.")
    return text


def _within(key: str, text: str, size: int, limit: int) -> str:
    """``text`` (``size`` bytes of JSON) when it is within ``limit``."""
    if size > limit:
        raise RememberInvalidError(
            f"The value for {key!r} is {size:,} bytes as JSON; the limit is {limit:,} bytes (max_value_bytes)."
        )
    return text


def _depth(value: Any) -> int:
    """How deeply lists and objects nest in ``value`` (stops counting past MAX_DEPTH)."""
    deepest, level = 0, [(value, 1)]
    while level:
        item, depth = level.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            if depth > MAX_DEPTH:
                return depth
            children = item.values() if isinstance(item, dict) else item
            level.extend((child, depth + 1) for child in children)
    return deepest
