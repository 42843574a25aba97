"""Checks and encoding for keys, values and ttls; every failure is a ``RememberInvalidError``."""

from __future__ import annotations

import json
import math
from typing import Any

from ._errors import RememberInvalidError

__all__ = ["MAX_KEY_LENGTH", "check_key", "check_ttl", "decode", "encode_value", "seal_text"]

MAX_KEY_LENGTH = 256


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
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
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
    """The plaintext sealed in the store: the owner identity (for rotation) and the value."""
    return f"[{identity},{value_json}]".encode()


def decode(plaintext: bytes) -> tuple[str, Any]:
    """(identity, value) from a sealed plaintext."""
    identity, value = json.loads(plaintext)
    return json.dumps(identity), value
