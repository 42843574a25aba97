"""Sealed cursors: "continue from here" that a client carries between calls, shows nothing and cannot steer."""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Sequence

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ._keyring import Keyring

__all__ = ["CursorSeal"]

_NONCE = 12


class CursorSeal:
    """Seals and opens the cursors of one ``purpose`` (like ``"history page v1"``)."""

    def __init__(self, keyring: Keyring, purpose: str) -> None:
        self._aead = AESGCM(keyring.derive_key(f"cursor: {purpose}"))
        self._aad = purpose.encode()

    def make(self, parts: Sequence[str]) -> str:
        nonce = os.urandom(_NONCE)
        plaintext = json.dumps(list(parts), ensure_ascii=False).encode("utf-8", "surrogatepass")
        return base64.urlsafe_b64encode(nonce + self._aead.encrypt(nonce, plaintext, self._aad)).decode().rstrip("=")

    def read(self, cursor: object, count: int) -> list[str] | None:
        """The ``count`` strings sealed in ``cursor``; None when it is not one of these cursors, intact."""
        if not isinstance(cursor, str):
            return None
        try:
            sealed = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
            parts = json.loads(self._aead.decrypt(sealed[:_NONCE], sealed[_NONCE:], self._aad))
        except (binascii.Error, ValueError, InvalidTag):
            return None
        if not (isinstance(parts, list) and len(parts) == count and all(isinstance(part, str) for part in parts)):
            return None
        return parts
