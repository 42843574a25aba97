"""What an authenticator concluded about a token, kept for a while by a hash of it (never the token itself).

``IntrospectionAuth`` keeps its provider's answers so that a burst of calls costs one request; ``JWTAuth``
keeps the identities of tokens whose signature it verified, so that the next call with the same token does
not verify it again (a time claim is still checked on every call). Bounded: the least recently used entry
goes first, so a flood of made-up tokens cannot grow it without end.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Generic, TypeVar

__all__ = ["TokenCache", "token_key"]

T = TypeVar("T")


def token_key(token: str) -> bytes:
    """The key a token is kept under: its SHA-256 (a lone surrogate in it is hashed as it came)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


class TokenCache(Generic[T]):
    """``token_key(token)`` -> a value until a time on the monotonic clock, at most ``size`` of them."""

    def __init__(self, size: int) -> None:
        self._entries: OrderedDict[bytes, tuple[float, T]] = OrderedDict()
        self._size = size

    def get(self, key: bytes, now: float) -> T | None:
        """The value kept under ``key`` if it is still good at ``now``."""
        entry = self._entries.get(key)
        if entry is None or entry[0] <= now:
            return None
        self._entries.move_to_end(key)
        return entry[1]

    def put(self, key: bytes, value: T, until: float) -> None:
        if self._size <= 0:
            return
        self._entries[key] = (until, value)
        self._entries.move_to_end(key)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)
