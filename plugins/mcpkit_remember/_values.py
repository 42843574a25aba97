"""Checks and encoding for keys, values and ttls; every failure is a ``RememberInvalidError``."""

from __future__ import annotations

import json
import math
from typing import Any

import pydantic_core

from ._errors import RememberInvalidError

__all__ = ["MAX_KEY_LENGTH", "check_key", "check_ttl", "decode", "decode_value", "encode_value", "seal_text"]

MAX_KEY_LENGTH = 256

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
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not math.isfinite(ttl) or ttl <= 0:
        raise RememberInvalidError(f"ttl is a positive number of seconds (or None to keep the value), not {ttl!r}.")
    return float(ttl)


def encode_value(key: str, value: Any, limit: int) -> str:
    """The value as JSON text, checked against ``limit`` bytes."""
    try:
        text = _ENCODER.encode(value)
    except (TypeError, ValueError) as exc:
        raise RememberInvalidError(
            f"The value for {key!r} is not JSON ({exc}); store strings, numbers, booleans, null, lists and objects."
        ) from None
    size = len(text.encode())
    if size > limit:
        raise RememberInvalidError(
            f"The value for {key!r} is {size:,} bytes as JSON; the limit is {limit:,} bytes (max_value_bytes)."
        )
    return text


def seal_text(identity: str, value_json: str) -> bytes:
    """The plaintext sealed in the store: the owner identity (for rotation), a newline, the value.

    Identities are JSON text, which never holds a raw newline, so the first one separates them.
    """
    return f"{identity}\n{value_json}".encode()


def decode(plaintext: bytes) -> tuple[str, Any]:
    """(identity, value) from a sealed plaintext."""
    identity, _, value = plaintext.partition(b"\n")
    return identity.decode(), pydantic_core.from_json(value)


def decode_value(plaintext: bytes) -> Any:
    """Only the value of a sealed plaintext (the read path needs nothing else)."""
    return pydantic_core.from_json(plaintext[plaintext.index(b"\n") + 1 :])
