"""What a sealed entry holds: the value and everything about it that must not be visible or changeable."""

from __future__ import annotations

import math
import struct
from functools import lru_cache
from typing import Any, NamedTuple

import pydantic_core

from ._provenance import META_MARK, Provenance, provenance_of

__all__ = ["Payload", "pack", "peek", "unpack", "unpack_legacy", "utf8"]

_HEAD = struct.Struct(">ddI")
_LENGTHS = struct.Struct(">HHH")
VECTOR_LENGTH = struct.Struct(">I")
#: The last bytes of a plaintext whose value has a vector (no JSON text ends with 0xFF).
VECTOR_MARK = b"\xffv"
_TRAILER = VECTOR_LENGTH.size + len(VECTOR_MARK)
_META_TRAILER = VECTOR_LENGTH.size + len(META_MARK)


class Payload(NamedTuple):
    """One opened entry. ``written_at`` is None for entries of mcpkit 0.1, which did not keep it."""

    value_json: bytes
    expires_at: float | None
    written_at: float | None
    names: bytes  # three u16 lengths, then identity, bucket and key as UTF-8
    vector: bytes = b""  # the sealed vector for search by meaning (empty: none)
    meta: bytes = b""  # the sealed provenance section, ``seal_meta``'s (empty: none, as before it was kept)

    @property
    def provenance(self) -> Provenance | None:
        """Where the value came from (None: written before mcpkit kept provenance)."""
        return provenance_of(self.meta, self.written_at) if self.meta else None

    @property
    def identity(self) -> str:
        return self._names()[0]

    @property
    def bucket(self) -> str:
        return self._names()[1]

    @property
    def key(self) -> str:
        return self._names()[2]

    def names_text(self) -> tuple[str, str, str]:
        """The identity, bucket and key at once (each of their properties decodes all three)."""
        return self._names()

    def _names(self) -> tuple[str, str, str]:
        if len(self.names) < _LENGTHS.size:
            raise ValueError("sealed names are truncated")
        at, texts = _LENGTHS.size, []
        for length in _LENGTHS.unpack_from(self.names):
            texts.append(self.names[at : at + length].decode("utf-8", "surrogatepass"))
            at += length
        if at != len(self.names):
            raise ValueError("sealed names do not add up")
        identity, bucket, key = texts
        return identity, bucket, key

    def value(self) -> Any:
        return pydantic_core.from_json(self.value_json)

    def live(self, now: float) -> bool:
        """Whether the sealed deadline is still ahead (what the store says about it does not count)."""
        return self.expires_at is None or self.expires_at > now


def utf8(value: str) -> bytes:
    """Text as UTF-8; a lone surrogate (which a caller's key or id may hold) passes through rather than fail."""
    return value.encode("utf-8", "surrogatepass")


@lru_cache(maxsize=4096)
def names_of(identity: str, bucket: str, key: str) -> bytes:
    """The sealed names of an address (cached: the same callers and keys come back)."""
    parts = [utf8(identity), utf8(bucket), utf8(key)]
    return _LENGTHS.pack(*(len(part) for part in parts)) + b"".join(parts)


def pack(
    identity: str,
    bucket: str,
    key: str,
    value_json: str | bytes,
    expires_at: float | None,
    written_at: float | None,
    vector: bytes = b"",
    meta: bytes = b"",
) -> bytes:
    """The plaintext to seal for a value written now (with its provenance section from ``seal_meta`` and its
    vector, when it has them)."""
    names = names_of(identity, bucket, key)
    value = value_json.encode() if isinstance(value_json, str) else value_json
    deadline = math.inf if expires_at is None else expires_at
    written = math.nan if written_at is None else written_at
    parts = [_HEAD.pack(deadline, written, len(names)), names, value]
    if meta:
        parts.append(meta)  # ``seal_meta``'s section, its length and mark included
    if vector:
        parts += [vector, VECTOR_LENGTH.pack(len(vector)), VECTOR_MARK]
    return b"".join(parts)


def peek(plaintext: bytes) -> tuple[float, float, int, int]:
    """The raw deadline (inf: none), write time (NaN: unknown) and where the value starts and ends: all a read needs."""
    if len(plaintext) < _HEAD.size:
        raise ValueError("sealed payload is too short")
    deadline, written, length = _HEAD.unpack_from(plaintext)
    start = _HEAD.size + length
    end = len(plaintext)
    if plaintext.endswith(VECTOR_MARK):
        if end - _TRAILER < start:
            raise ValueError("sealed payload is truncated")
        end -= _TRAILER + VECTOR_LENGTH.unpack_from(plaintext, end - _TRAILER)[0]
    if plaintext.endswith(META_MARK, start, end):
        if end - _META_TRAILER < start:
            raise ValueError("sealed payload is truncated")
        end -= _META_TRAILER + VECTOR_LENGTH.unpack_from(plaintext, end - _META_TRAILER)[0]
    if start > end:
        raise ValueError("sealed payload is truncated")
    return deadline, written, start, end


def unpack(plaintext: bytes) -> Payload:
    """The payload of a version-2 plaintext; ValueError when it is not one."""
    deadline, written, start, end = peek(plaintext)
    vector = meta = b""
    tail = len(plaintext)
    if plaintext.endswith(VECTOR_MARK):
        at = tail - _TRAILER - VECTOR_LENGTH.unpack_from(plaintext, tail - _TRAILER)[0]
        vector, tail = plaintext[at : tail - _TRAILER], at
    if tail > end:  # a meta section lies between the value and the vector: kept whole, as ``pack`` takes it
        meta = plaintext[end:tail]
    return Payload(
        plaintext[start:end],
        None if deadline == math.inf else deadline,
        None if written != written else written,  # NaN: unknown
        plaintext[_HEAD.size : start],
        vector,
        meta,
    )


def unpack_legacy(plaintext: bytes, bucket: str, key: str, expires_at: float | None) -> Payload:
    """The payload of a version-1 plaintext, with the address and deadline the store kept beside it."""
    identity, newline, value = plaintext.partition(b"\n")
    if not newline:
        raise ValueError("legacy payload has no identity line")
    return Payload(value, expires_at, None, names_of(identity.decode(), bucket, key))
