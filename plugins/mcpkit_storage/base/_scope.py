"""Scopes: which identity owns a value, from the server-verified caller — never from tool arguments."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Literal, NamedTuple, get_args

from mcpkit import Caller

from ._errors import RememberIdentityError, RememberInvalidError

__all__ = ["SCOPES", "Place", "Scope", "check_scope", "place_for", "usable"]

Scope = Literal["user", "session", "tool", "global"]
SCOPES: tuple[Scope, ...] = get_args(Scope)

_GLOBAL_IDENTITY = json.dumps(["g"])


class Place(NamedTuple):
    """Where a scope's values live for one caller: the owning identity and the bucket.

    ``identity`` is JSON text (``["u", user_id]``, ``["s", session_id]`` or ``["g"]``),
    so no user id, session id or ':' inside one can make two identities equal.
    ``session``: the identity is a session, whose values nobody can reach once it ends.
    """

    identity: str
    bucket: str
    session: bool = False


@lru_cache(maxsize=4096)
def _identity(kind: str, value: str) -> str:
    """JSON text of an identity; cached, since the same callers come back call after call."""
    return json.dumps([kind, value])


def usable(scope: Scope, caller: Caller) -> bool:
    """Whether this caller has the identity ``scope`` needs."""
    if scope == "global" or caller.user_id is not None:
        return True
    return scope != "user" and caller.session_id is not None


def check_scope(scope: object) -> Scope:
    if scope not in SCOPES:
        raise RememberInvalidError(f"Unknown scope {scope!r}; use one of {', '.join(SCOPES)}.")
    return scope


def place_for(scope: Scope, caller: Caller, tool_name: str | None, namespace: str = "") -> Place:
    """The place of ``scope`` for this caller and tool, or RememberIdentityError.

    ``tool_name`` None gives one tool bucket for the namespace (the memory tools share it);
    ``namespace`` keeps a family of buckets apart (a plugin's own, registered with ``register_namespace``).
    """
    if scope == "global":
        return Place(_GLOBAL_IDENTITY, namespace + "global")
    if scope == "user":
        if caller.user_id is None:
            raise RememberIdentityError("user", "the caller is anonymous, so there is no user to keep values for")
        return Place(_identity("u", caller.user_id), namespace + "user")
    base = "session" if scope == "session" else ("tool" if tool_name is None else f"tool.{tool_name}")
    bucket = namespace + base
    if caller.session_id is not None:
        return Place(_identity("s", caller.session_id), bucket, session=True)
    if caller.user_id is not None:
        return Place(_identity("u", caller.user_id), bucket)
    raise RememberIdentityError(
        scope,
        f"the caller is anonymous and this {caller.protocol_version} request has no session "
        "(2026-07-28 requests have none; session and tool values follow the signed-in caller)",
    )
