"""The errors of stored data, whichever plugin keeps it (remember, history, context): each reaches the client as
an error result with its code. They keep the names and ``REMEMBER_*`` codes they had before the storage layer was
its own package, so clients and ``except RememberQuotaError`` see one error whichever plugin wrote."""

from __future__ import annotations

from collections.abc import Sequence

from mcpkit import ToolError

from ..stores import INDEX_BYTES_PER_WORD

__all__ = [
    "RememberConflictError",
    "RememberError",
    "RememberIdentityError",
    "RememberInvalidError",
    "RememberQuotaError",
    "RememberStoreUnavailableError",
]


_SHARED = " if the value really is shared by every caller"


class RememberError(ToolError):
    """Base class of every remember error."""


class RememberIdentityError(RememberError):
    """The scope needs a caller identity this request does not have (code ``REMEMBER_IDENTITY_REQUIRED``).

    ``instead``: the scopes the message suggests besides signing in (by default global, for any other scope), so
    that a caller is never sent to a scope it would be refused too.
    """

    def __init__(self, scope: str, why: str, *, instead: Sequence[str] | None = None) -> None:
        if instead is None:
            instead = () if scope == "global" else ("global",)
        ways = [f"{other} scope" + (_SHARED if other == "global" else "") for other in instead]
        otherwise = f", or use {' or '.join(ways)}" if ways else ""
        super().__init__(
            f"Cannot use {scope} scope: {why}. Authenticate the request (a bearer token or key){otherwise}.",
            code="REMEMBER_IDENTITY_REQUIRED",
            refusal=True,
        )
        self.scope = scope


class RememberInvalidError(RememberError):
    """A key, value, scope, ttl or cursor breaks a rule (``REMEMBER_INVALID``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="REMEMBER_INVALID")


class RememberStoreUnavailableError(RememberError):
    """The store cannot be reached right now (``REMEMBER_STORE_UNAVAILABLE``); the server keeps serving.

    ``maybe_applied``: a write timed out after it was sent, so the store may still have made the change.
    """

    def __init__(self, *, maybe_applied: bool = False) -> None:
        super().__init__(
            "The memory store is unavailable right now: it did not answer in time, so this change may or may not "
            "have been made. Check before trying again if making it twice would matter (an increment would count "
            "twice)."
            if maybe_applied
            else "The memory store is unavailable right now, so nothing was read or changed. Try again in a moment.",
            code="REMEMBER_STORE_UNAVAILABLE",
        )
        self.maybe_applied = maybe_applied


class RememberConflictError(RememberError):
    """An atomic update lost every retry to concurrent writers (``REMEMBER_CONFLICT``)."""

    def __init__(self, key: str, attempts: int, waited: float | None = None) -> None:
        message = f"The value {key!r} changed under {attempts} attempts to update it; too many writers at once."
        if waited is not None:
            message = f"The update of {key!r} waited {waited:g} seconds for its turn behind other writers of it."
        super().__init__(f"{message} Try again.", code="REMEMBER_CONFLICT")


class RememberQuotaError(RememberError):
    """A write would take the caller past a quota of its scope (``REMEMBER_QUOTA_EXCEEDED``); nothing was written.

    ``limit`` is ``"values"`` (``max_values``) or ``"bytes"`` (``max_bytes``); ``allowed`` is the limit;
    ``sharded``: the scope keeps vector shards, which count too; ``versioned``: its keys have change histories, which
    count too.
    """

    def __init__(
        self, key: str, scope: str, limit: str, allowed: int, *, sharded: bool = False, versioned: bool = False
    ) -> None:
        whose = "every caller together keeps" if scope == "global" else "this caller keeps"
        if limit == "values":
            counted = ["values", *(["their change histories"] if versioned else [])]
            counted += ["the vector shards of search by meaning"] if sharded else []
            kept = "values" if len(counted) == 1 else f"entries ({', '.join(counted[:-1])} and {counted[-1]})"
            problem = f"{whose} {allowed:,} {kept} in {scope} scope already, the most this server allows (max_values)"
        else:
            also = "; a key's change history counts by its size" if versioned else ""
            also += "; with search by meaning, vectors count again in their shards" if sharded else ""
            problem = (
                f"it would take what {whose} in {scope} scope past {allowed:,} bytes, the most this server allows "
                f"(max_bytes; a searchable value's indexed words count {INDEX_BYTES_PER_WORD} bytes each{also})"
            )
        super().__init__(
            f"Cannot keep {key!r}: {problem}. Forget values that are no longer needed (forget, forget_all) "
            "and try again, or ask the server's operator to raise the limit.",
            code="REMEMBER_QUOTA_EXCEEDED",
        )
        self.scope = scope
        self.limit = limit
        self.allowed = allowed
