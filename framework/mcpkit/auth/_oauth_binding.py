"""How a ``Server`` adopts its OAuth authenticators (``JWTAuth``, ``IntrospectionAuth``) once, when it is built:
each bound to an audience, and every issuer after the first given its own user ids (docs/architecture.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from ..base import Authenticator, ConfigurationError, issuer_namespace

__all__ = ["adopt", "issuers_of"]


def issuers_of(authenticators: Sequence[Authenticator]) -> list[str]:
    """The issuers the OAuth authenticators name, in order (a server's default authorization servers)."""
    return [issuer for a in authenticators if isinstance(issuer := getattr(a, "issuer", None), str)]


def adopt(authenticators: Sequence[Authenticator], resource: str | None) -> tuple[Authenticator, ...]:
    """The authenticators as the server uses them: bound to ``resource`` and namespaced per issuer."""
    adopted = tuple(_namespaced(authenticators))
    if resource is not None:
        adopted = tuple(_bound(a, resource) for a in adopted)
    for authenticator in adopted:
        if getattr(authenticator, "needs_audience", False):
            name = type(authenticator).__name__
            raise ConfigurationError(
                f"{authenticator!r} would accept tokens meant for any server: say which audience (aud) tokens "
                f"for this one carry, with Server(resource_url='https://mcp.example.com/mcp') (the URL clients "
                f"connect to; it also serves the OAuth metadata they sign in with) or {name}(audience='...'). "
                f"For an identity provider that cannot set an audience: {name}(..., allow_no_audience=True)."
            )
    return adopted


def _namespaced(authenticators: Sequence[Authenticator]) -> list[Authenticator]:
    oauth = [a for a in authenticators if callable(getattr(a, "namespaced", None))]
    if len(oauth) < 2:
        return list(authenticators)
    for authenticator in oauth:
        issuer = getattr(authenticator, "issuer", None)
        if issuer is None:
            raise ConfigurationError(
                f"auth=[...] has {len(oauth)} OAuth authenticators, and {authenticator!r} names no issuer: give "
                "each one issuer= (the 'iss' its tokens carry), so that the same 'sub' from two identity "
                "providers is never taken for one user."
            )
        if "#" in issuer:
            raise ConfigurationError(f"{authenticator!r}: an issuer holds no '#' (RFC 8414); got {issuer!r}.")
    first = getattr(oauth[0], "issuer", None)
    adopted = []
    for authenticator in authenticators:
        issuer = getattr(authenticator, "issuer", None)
        if authenticator in oauth and isinstance(issuer, str):
            prefix = "" if issuer == first else issuer_namespace(issuer)
            authenticator = cast(Authenticator, authenticator.namespaced(prefix))  # type: ignore[attr-defined]
        adopted.append(authenticator)
    return adopted


def _bound(authenticator: Authenticator, resource: str) -> Authenticator:
    """The authenticator's copy for a server at ``resource`` (audience binding), when it has one."""
    bound_to = getattr(authenticator, "bound_to", None)
    return authenticator if bound_to is None else cast(Authenticator, bound_to(resource))
