"""Who is calling a tool, as the server established it (never as the arguments claim)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ._oauth_scopes import granted_scopes

__all__ = ["Caller", "CallerKind"]

CallerKind = Literal["user", "static", "local", "anonymous"]

#: The protocol revision without sessions: every request stands on its own.
STATELESS_PROTOCOL = "2026-07-28"


@dataclass(frozen=True, slots=True)
class Caller:
    """The caller of the current tool call.

    ``user_id`` is None for anonymous callers. ``session_id`` is the
    server-verified session (``Mcp-Session-Id`` on 2025-11-25 HTTP, the
    connection on stdio) and None on 2026-07-28 HTTP, which has no sessions.
    ``anonymous_id`` is fresh on every 2026-07-28 request and stable within a
    session otherwise.
    """

    user_id: str | None
    kind: CallerKind
    label: str | None
    claims: Mapping[str, Any] = field(repr=False)
    session_id: str | None
    protocol_version: str
    anonymous_id: str

    @property
    def scopes(self) -> frozenset[str] | None:
        """The OAuth scopes the caller's token grants; None for static keys and stdio, which scopes do not limit."""
        if self.kind == "anonymous":
            return frozenset()
        if self.kind != "user":
            return None
        return granted_scopes(self.claims)

    @property
    def is_anonymous(self) -> bool:
        """True when nobody signed in."""
        return self.user_id is None

    @property
    def stateless(self) -> bool:
        """True on 2026-07-28 requests, which carry no session."""
        return self.session_id is None
