"""Opaque, sealed paging cursors for ``Remember.page`` (``list_memories``), bound to one caller and scope.

A cursor says "continue after this key". It is encrypted and authenticated
(AES-256-GCM under a key derived from the primary secret), so it shows a client
neither the key it continues after nor the owner hash a store files values
under, and a changed, truncated or foreign cursor is refused.
"""

from __future__ import annotations

import base64
import binascii
import json
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mcpkit_storage import RememberInvalidError

__all__ = ["Cursors"]

_NONCE = 12
_AAD = b"mcpkit.remember.list_memories cursor v2"


class Cursors:
    """Seals "continue after this key" for one (owner, bucket); refuses tampered or foreign cursors."""

    def __init__(self, key: bytes) -> None:
        self._aead = AESGCM(key)

    def make(self, owner: str, bucket: str, after: str) -> str:
        nonce = os.urandom(_NONCE)
        plaintext = json.dumps([owner, bucket, after], ensure_ascii=False).encode("utf-8", "surrogatepass")
        sealed = nonce + self._aead.encrypt(nonce, plaintext, _AAD)
        return base64.urlsafe_b64encode(sealed).decode().rstrip("=")

    def read(self, cursor: str, owner: str, bucket: str) -> str:
        """The key to continue after; RememberInvalidError when the cursor is not this caller's for this scope."""
        try:
            sealed = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
            plaintext = self._aead.decrypt(sealed[:_NONCE], sealed[_NONCE:], _AAD)
            data = json.loads(plaintext.decode("utf-8", "surrogatepass"))
        except (binascii.Error, ValueError, InvalidTag):
            raise RememberInvalidError(
                "The cursor is not valid (changed, or not a nextCursor of this listing); list again without a cursor."
            ) from None
        if not (isinstance(data, list) and len(data) == 3 and all(isinstance(part, str) for part in data)):
            raise RememberInvalidError("The cursor is malformed; list again without a cursor.")
        if data[0] != owner or data[1] != bucket:
            raise RememberInvalidError(
                "The cursor belongs to another caller or scope; list again without a cursor for this scope."
            )
        return str(data[2])
