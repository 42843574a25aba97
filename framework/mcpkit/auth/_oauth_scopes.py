"""OAuth scopes: what a tool requires (``@tool(scopes=...)``) and what a caller's token grants.

A token grants the scopes in its ``scope`` claim (space-separated, RFC 9068 / RFC 8693) or its ``scp``
claim (a list, as some providers write it). Credentials that carry no scopes at all, static keys and the
local stdio user, are the operator's own and are not limited by scope; an anonymous caller is granted none.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..base import IDENTITY_SCOPE_KEY, ConfigurationError, Identity

__all__ = ["RequiredScopes", "checked_scopes", "granted_scopes", "missing_scopes", "refuse_without_scopes"]

#: A scope token (RFC 6749 section 3.3): printable ASCII but space, '"' and '\\'.
_SCOPE_TOKEN = re.compile(r"^[\x21\x23-\x5b\x5d-\x7e]+$")


def checked_scopes(where: str, scopes: object) -> frozenset[str]:
    """The scopes a tool declares, or a ConfigurationError naming the tool."""
    if isinstance(scopes, str) or not isinstance(scopes, Sequence | frozenset | set):
        raise ConfigurationError(
            f"{where}: scopes is a list of strings, like scopes=['tickets:write'], not {scopes!r}."
        )
    for scope in scopes:
        if not isinstance(scope, str) or not _SCOPE_TOKEN.match(scope):
            raise ConfigurationError(
                f"{where}: scope {scope!r} is not an OAuth scope (printable ASCII without spaces, quotes or "
                "backslashes, RFC 6749 section 3.3), like 'tickets:write'."
            )
    return frozenset(scopes)


def granted_scopes(claims: Mapping[str, Any]) -> frozenset[str]:
    """The scopes a token's claims grant: ``scope`` (space-separated) and ``scp`` (a list, or a string) together."""
    granted: set[str] = set()
    for name in ("scope", "scp"):
        value = claims.get(name)
        if isinstance(value, str):
            granted.update(value.split())
        elif isinstance(value, list):
            granted.update(item for item in value if isinstance(item, str))
    return frozenset(granted)


def missing_scopes(required: frozenset[str], identity: Identity | None) -> frozenset[str]:
    """Which of ``required`` the caller lacks (none for static keys and stdio, all for anonymous callers)."""
    if not required:
        return required
    if identity is None:
        return required
    if identity.kind != "user":
        return frozenset()
    return required - granted_scopes(identity.claims)


def refuse_without_scopes(ctx: Any, required: frozenset[str], what: str) -> None:
    """Raise the JSON-RPC error for a caller whose token lacks ``required`` (wherever the HTTP gate could not see
    the request first, stdio aside: it is not limited by scope). ``what`` starts the message."""
    if not required or ctx.request is None:
        return
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_REQUEST

    lacking = missing_scopes(required, ctx.request.scope.get(IDENTITY_SCOPE_KEY))
    if lacking:
        raise MCPError(
            INVALID_REQUEST,
            f"{what} needs the OAuth scope(s) {' '.join(sorted(lacking))}, which the caller's token does not grant: "
            "sign in again asking for them.",
            data={"code": "INSUFFICIENT_SCOPE"},
        )


@dataclass(frozen=True, slots=True)
class RequiredScopes:
    """What each tool, prompt and resource needs, for the HTTP gate's 403 (step-up) before the request runs."""

    tools: Mapping[str, frozenset[str]]
    prompts: Callable[[str], frozenset[str]]
    resources: Callable[[str], frozenset[str]]
    every: frozenset[str]

    def __bool__(self) -> bool:
        return bool(self.every)

    def of(self, method: str, name: str) -> frozenset[str]:
        if method == "tools/call":
            return self.tools.get(name, frozenset())
        if method == "prompts/get":
            return self.prompts(name)
        if method == "resources/read":
            return self.resources(name)
        return frozenset()
