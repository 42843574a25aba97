"""Who is calling a tool, as the server established it (never as the arguments claim)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from mcp.server import ServerRequestContext

from ..auth import granted_scopes
from ..base import IDENTITY_SCOPE_KEY, Identity, local_connection

__all__ = ["STATELESS_PROTOCOL", "Caller", "CallerKind", "caller_of"]

CallerKind = Literal["user", "static", "local", "anonymous"]

#: The protocol revision without sessions: every request stands on its own.
STATELESS_PROTOCOL = "2026-07-28"

_ANON_NAMESPACE = uuid.UUID("0b4f3c8e-6a43-4c36-9b1e-2d2f6f3f7a10")


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


def caller_of(ctx: ServerRequestContext[Any, Any]) -> Caller:
    """Who sent the request ``ctx`` serves (the gate put the identity in the HTTP scope; stdio's is the local user)."""
    version = ctx.protocol_version
    request = ctx.request
    identity: Identity | None
    session_id: str | None
    if request is not None:
        identity = request.scope.get(IDENTITY_SCOPE_KEY)
        session_id = None if version == STATELESS_PROTOCOL else request.headers.get("mcp-session-id")
    else:
        local = local_connection.get()
        identity = local.identity if local is not None else None
        session_id = local.session_id if local is not None else None
    if session_id is not None:
        anonymous_id = f"anon:{uuid.uuid5(_ANON_NAMESPACE, session_id).hex}"
    else:
        anonymous_id = f"anon:{os.urandom(16).hex()}"
    if identity is None:
        return Caller(None, "anonymous", None, {}, session_id, version, anonymous_id)
    return Caller(identity.user_id, identity.kind, identity.label, identity.claims, session_id, version, anonymous_id)
