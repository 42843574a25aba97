"""The 64 bearer tokens every benchmark server accepts, and one that none accepts."""

from __future__ import annotations

import hashlib

__all__ = ["BAD_TOKEN", "LABELS", "REMEMBER_SECRET", "TOKENS", "USERS"]

USERS = 64

#: ``u00`` .. ``u63``: the label each server uses for the user behind a token.
LABELS: tuple[str, ...] = tuple(f"u{i:02d}" for i in range(USERS))

#: label -> token; deterministic so every process derives the same set without passing secrets around.
TOKENS: dict[str, str] = {
    label: f"bench-{label}-{hashlib.sha256(f'mcpkit-bench/{label}'.encode()).hexdigest()[:32]}" for label in LABELS
}

#: token -> label, for the servers that look callers up themselves.
BY_TOKEN: dict[str, str] = {token: label for label, token in TOKENS.items()}

#: Well-formed, long enough for every verifier, and accepted by none.
BAD_TOKEN = "bench-bad-" + "0" * 32

#: The remember secret of every mcpkit server (encryption on).
REMEMBER_SECRET = "bench-remember-secret-" + hashlib.sha256(b"mcpkit-bench/secret").hexdigest()[:32]
