"""The error only the memory tools raise; the others are the storage layer's (``mcpkit_storage``)."""

from __future__ import annotations

from mcpkit_storage import RememberError

__all__ = ["RememberScopeNotAllowedError"]


class RememberScopeNotAllowedError(RememberError):
    """A memory tool was asked for a scope its configuration does not allow (``REMEMBER_SCOPE_NOT_ALLOWED``)."""

    def __init__(self, scope: str, allowed: tuple[str, ...]) -> None:
        names = ", ".join(repr(s) for s in allowed)
        super().__init__(
            f"This server does not allow scope {scope!r} for memory tools. Allowed scopes: {names}. "
            f"Call again with scope set to one of them, for example scope={allowed[0]!r}.",
            code="REMEMBER_SCOPE_NOT_ALLOWED",
        )
        self.allowed = allowed
