"""Opaque, signed paging cursors for ``list_memories``, bound to one caller and scope."""

from __future__ import annotations

from itsdangerous import BadSignature, URLSafeSerializer

from ._errors import RememberInvalidError

__all__ = ["Cursors"]


class Cursors:
    """Signs "continue after this key" for one (owner, bucket); refuses tampered or foreign cursors."""

    def __init__(self, signing_key: bytes) -> None:
        self._serializer = URLSafeSerializer(signing_key, salt="mcpkit.remember.list_memories")

    def make(self, owner: str, bucket: str, after: str) -> str:
        return str(self._serializer.dumps([owner, bucket, after]))

    def read(self, cursor: str, owner: str, bucket: str) -> str:
        """The key to continue after; RememberInvalidError when the cursor is not this caller's for this scope."""
        try:
            data = self._serializer.loads(cursor)
        except BadSignature:
            raise RememberInvalidError(
                "The cursor is not valid (changed, or not from list_memories); call list_memories without a cursor."
            ) from None
        if not (isinstance(data, list) and len(data) == 3 and all(isinstance(part, str) for part in data)):
            raise RememberInvalidError("The cursor is malformed; call list_memories without a cursor.")
        if data[0] != owner or data[1] != bucket:
            raise RememberInvalidError(
                "The cursor belongs to another caller or scope; call list_memories without a cursor for this scope."
            )
        return str(data[2])
