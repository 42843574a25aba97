"""How callers reach the reliability tests' servers: the two protocol eras, and the user id a static key gives."""

from __future__ import annotations

import hashlib

__all__ = ["LEGACY", "MODERN", "static_user_id"]

#: 2026-07-28: every request stands alone (``_meta`` and headers); 2025-11-25: ``initialize``, then a session.
MODERN, LEGACY = "2026-07-28", "2025-11-25"


def static_user_id(key: str) -> str:
    """The user id ``StaticKeys`` gives whoever holds ``key``: ``static:`` + 32 hex digits of its SHA-256."""
    return "static:" + hashlib.sha256(key.encode()).hexdigest()[:32]
