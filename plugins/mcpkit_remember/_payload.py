"""What a sealed entry holds: the value and everything about it that must not be visible or changeable.

Version 2 (written now) seals, beside the value's JSON text, the owning
identity and the plain bucket and key (so a rotation can re-hash the address,
and a listing can name keys the store only knows as hashes), the deadline (so
whoever can write the store cannot make a value outlive it) and when it was
written. Layout: ``deadline (f64, inf: none) | written (f64, nan: unknown) |
three u16 lengths | identity | bucket | key | value JSON``.

Version 1 (mcpkit 0.1) sealed ``identity + "\\n" + value JSON``; its bucket,
key and deadline lived in the store, in plain text.
"""

from __future__ import annotations

import math
import struct
from typing import Any, NamedTuple

import pydantic_core

__all__ = ["Payload", "pack", "unpack", "unpack_legacy", "utf8"]

_HEAD = struct.Struct(">ddHHH")


class Payload(NamedTuple):
    """One opened entry. ``written_at`` is None for entries of mcpkit 0.1, which did not keep it."""

    identity: str
    bucket: str
    key: str
    value_json: bytes
    expires_at: float | None
    written_at: float | None

    def value(self) -> Any:
        return pydantic_core.from_json(self.value_json)

    def live(self, now: float) -> bool:
        """Whether the sealed deadline is still ahead (what the store says about it does not count)."""
        return self.expires_at is None or self.expires_at > now


def utf8(value: str) -> bytes:
    """Text as UTF-8; a lone surrogate (which a caller's key or id may hold) passes through rather than fail."""
    return value.encode("utf-8", "surrogatepass")


def pack(
    identity: str, bucket: str, key: str, value_json: str | bytes, expires_at: float | None, written_at: float | None
) -> bytes:
    """The plaintext to seal for a value written now."""
    parts = [utf8(identity), utf8(bucket), utf8(key)]
    value = value_json.encode() if isinstance(value_json, str) else value_json
    head = _HEAD.pack(
        math.inf if expires_at is None else expires_at,
        math.nan if written_at is None else written_at,
        *(len(part) for part in parts),
    )
    return b"".join((head, *parts, value))


def unpack(plaintext: bytes) -> Payload:
    """The payload of a version-2 plaintext; ValueError when it is not one."""
    if len(plaintext) < _HEAD.size:
        raise ValueError("sealed payload is too short")
    deadline, written, *lengths = _HEAD.unpack_from(plaintext)
    at = _HEAD.size
    texts = []
    for length in lengths:
        texts.append(plaintext[at : at + length].decode("utf-8", "surrogatepass"))
        at += length
    if at > len(plaintext):
        raise ValueError("sealed payload is truncated")
    identity, bucket, key = texts
    return Payload(
        identity,
        bucket,
        key,
        plaintext[at:],
        None if deadline == math.inf else deadline,
        None if math.isnan(written) else written,
    )


def unpack_legacy(plaintext: bytes, bucket: str, key: str, expires_at: float | None) -> Payload:
    """The payload of a version-1 plaintext, with the address and deadline the store kept beside it."""
    identity, newline, value = plaintext.partition(b"\n")
    if not newline:
        raise ValueError("legacy payload has no identity line")
    return Payload(identity.decode(), bucket, key, value, expires_at, None)
