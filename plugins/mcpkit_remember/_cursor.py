"""Pages of keys and their sealed cursors for ``Remember.page`` (``list_memories``, ``list_memory_keys``).

A cursor says "continue after this key", sealed (``CursorSeal``) so that it shows a client nothing and a changed or
foreign one is refused.
"""

from __future__ import annotations

from typing import NamedTuple

from mcpkit_storage import CursorSeal, Keyring, RememberInvalidError

__all__ = ["Cursors", "KeyPage"]

#: The purpose the cursors' key is derived for (v3: sealed by ``CursorSeal``; a v2 cursor is refused, and a
#: client lists again from the start).
_PURPOSE = "list_memories cursor v3"


class KeyPage(NamedTuple):
    """One page of keys and the sealed cursor of the next page (None: no more)."""

    keys: list[str]
    next_cursor: str | None


class Cursors:
    """Seals "continue after this key" for one (owner, bucket); refuses tampered or foreign cursors."""

    def __init__(self, keyring: Keyring) -> None:
        self._seal = CursorSeal(keyring, _PURPOSE)

    def make(self, owner: str, bucket: str, after: str) -> str:
        return self._seal.make((owner, bucket, after))

    def read(self, cursor: str, owner: str, bucket: str) -> str:
        """The key to continue after; RememberInvalidError when the cursor is not this caller's for this scope."""
        parts = self._seal.read(cursor, 3)
        if parts is None:
            raise RememberInvalidError(
                "The cursor is not valid (changed, or not a nextCursor of this listing); list again without a cursor."
            )
        if parts[0] != owner or parts[1] != bucket:
            raise RememberInvalidError(
                "The cursor belongs to another caller or scope; list again without a cursor for this scope."
            )
        return parts[2]
