"""The keys that seal 2026-07-28 ``requestState`` (``Server(state_secrets=...)`` or ``MCPKIT_STATE_SECRETS``, else
one of this process's own), so that a multi-round call may come back to any instance (docs/elicitation.md)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from mcp.server import ServerRequestContext
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity

from ..base import IDENTITY_SCOPE_KEY, ConfigurationError

__all__ = ["MIN_SECRET_BYTES", "SECRETS_VARIABLE", "STATE_SECONDS", "request_state_boundary"]

SECRETS_VARIABLE = "MCPKIT_STATE_SECRETS"
MIN_SECRET_BYTES = 32
#: How long a sealed round stays good.
STATE_SECONDS = 600.0


def _caller(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """Whose round it is: the signed-in user id (an anonymous caller's rounds are bound to no one)."""
    request = ctx.request
    identity = request.scope.get(IDENTITY_SCOPE_KEY) if request is not None else None
    return identity.user_id if identity is not None else None


def request_state_boundary(secrets: Sequence[str | bytes] | None, server_name: str) -> RequestStateBoundary:
    given: Sequence[str | bytes] | None = secrets
    where = "Server(state_secrets=...)"
    if given is None and os.environ.get(SECRETS_VARIABLE, "").strip():
        given = [part.strip() for part in os.environ[SECRETS_VARIABLE].split(",") if part.strip()]
        where = SECRETS_VARIABLE
    if given is None:
        security = RequestStateSecurity.ephemeral(ttl=STATE_SECONDS)
        security.bind_principal = _caller
    else:
        if isinstance(given, str | bytes) or not given:
            raise ConfigurationError(f"{where} is a list of secrets, the first sealing, like [os.environ['...']].")
        for secret in given:
            size = len(secret.encode() if isinstance(secret, str) else secret)
            if size < MIN_SECRET_BYTES:
                raise ConfigurationError(
                    f"{where}: a secret of {size} bytes is too short; use at least {MIN_SECRET_BYTES} random bytes "
                    "(python -c 'import secrets; print(secrets.token_urlsafe(32))')."
                )
        security = RequestStateSecurity(keys=list(given), ttl=STATE_SECONDS, bind_principal=_caller)
    return RequestStateBoundary(security, default_audience=server_name)
