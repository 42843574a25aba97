"""What an authenticator hands back: who signed in, or why the credential was refused."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = [
    "IDENTITY_SCOPE_KEY",
    "ISSUER_PREFIX",
    "RESERVED_PREFIXES",
    "AuthUnavailableError",
    "Authenticator",
    "Identity",
    "InvalidCredentialError",
    "issuer_namespace",
]

#: Where the HTTP gate leaves the caller's Identity (or None) in the ASGI scope, for everything behind it.
IDENTITY_SCOPE_KEY = "mcpkit.identity"

#: Before the user ids of a second identity provider: ``iss:<issuer>#<sub>`` (see ``issuer_namespace``).
ISSUER_PREFIX = "iss:"

#: User ids with these prefixes are minted by mcpkit itself; no token may claim one.
RESERVED_PREFIXES = ("static:", "anon:", "local:", ISSUER_PREFIX)


def issuer_namespace(issuer: str) -> str:
    """What goes before the ``sub`` of an issuer whose users must not meet the first issuer's.

    No token's ``sub`` may start with ``iss:`` and no issuer may hold a ``#``, so ids of two issuers never meet.
    """
    return f"{ISSUER_PREFIX}{issuer}#"


@dataclass(frozen=True, slots=True)
class Identity:
    """A signed-in caller as an authenticator established it."""

    user_id: str
    kind: Literal["user", "static", "local"]
    label: str | None = None
    claims: Mapping[str, Any] = field(default_factory=dict)


class InvalidCredentialError(Exception):
    """A credential was presented but is not valid; the request gets HTTP 401.

    ``reason`` is short and safe to send to the client (it never echoes the token).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class AuthUnavailableError(Exception):
    """The authenticator cannot decide right now (its identity provider is unreachable): HTTP 503."""


@runtime_checkable
class Authenticator(Protocol):
    """Turns a bearer token into an :class:`Identity`.

    Return ``None`` when the token is not of this authenticator's kind (another
    one may accept it); raise :class:`InvalidCredentialError` when it is of this
    kind but invalid (bad signature, expired, ...).
    """

    async def authenticate(self, token: str) -> Identity | None: ...
