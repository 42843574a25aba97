"""The stdio connection being served: one local person (or nobody) and one session for its lifetime."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

from ._credentials import Identity

__all__ = ["LocalConnection", "local_connection"]


@dataclass(frozen=True, slots=True)
class LocalConnection:
    """A stdio connection: one local person (or nobody) and one session for its lifetime."""

    identity: Identity | None
    session_id: str


#: Set while serving stdio; HTTP requests carry their caller in the ASGI scope instead.
local_connection: ContextVar[LocalConnection | None] = ContextVar("mcpkit_local_connection", default=None)
