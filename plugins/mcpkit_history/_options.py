"""``HistoryOptions``: what ``HistoryPlugin`` takes besides its store, written once, with defaults and checks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from mcpkit import ConfigurationError, checked_flag, checked_optional_seconds, checked_optional_whole, checked_whole

from ._messages import MAX_MESSAGE_BYTES
from ._policy import MAX_LOAD_BYTES, MAX_SEARCH_BYTES

__all__ = [
    "DEFAULT_MAX_MESSAGES",
    "DEFAULT_MAX_TOTAL_BYTES",
    "DEFAULT_MAX_TOTAL_MESSAGES",
    "DEFAULT_SESSION_TTL",
    "HistoryKeywords",
    "HistoryOptions",
]

#: Defaults: messages per conversation, and what one caller keeps in all conversations together.
DEFAULT_MAX_MESSAGES = 10_000
DEFAULT_MAX_TOTAL_MESSAGES = 100_000
DEFAULT_MAX_TOTAL_BYTES = 256 * 1024 * 1024
#: The longest a message of a session (``scope="session"``) lives: the session is gone by then.
DEFAULT_SESSION_TTL = 86_400.0


class HistoryKeywords(TypedDict, total=False):
    """The keywords of ``HistoryPlugin(...)`` and ``HistoryPlugin.init(...)``: ``HistoryOptions``' fields."""

    secret: str | Sequence[str] | None
    scope: str
    max_message_bytes: int
    max_messages: int
    max_total_messages: int | None
    max_total_bytes: int | None
    tools: bool
    tool_prefix: str
    redis_prefix: str
    session_ttl: float | None
    max_load_bytes: int
    max_search_bytes: int


@dataclass(frozen=True, kw_only=True)
class HistoryOptions:
    """The plugin's options, checked when made: a wrong one is a ``ConfigurationError`` naming it (docs/history.md)."""

    #: The sealing secret, or several (the first encrypts); None: ``REMEMBER_SECRET``, as for ``RememberPlugin``.
    secret: str | Sequence[str] | None = None
    #: Whose conversations: the signed-in user's, across sessions and clients, or the session's.
    scope: str = "user"
    max_message_bytes: int = MAX_MESSAGE_BYTES
    #: Messages in one conversation (summaries not counted).
    max_messages: int = DEFAULT_MAX_MESSAGES
    #: What one caller keeps in all conversations together (None: no limit).
    max_total_messages: int | None = DEFAULT_MAX_TOTAL_MESSAGES
    max_total_bytes: int | None = DEFAULT_MAX_TOTAL_BYTES
    #: Offer the six history tools to the model, their names after ``tool_prefix``.
    tools: bool = False
    tool_prefix: str = ""
    redis_prefix: str = "mcpkit:remember:"
    #: In ``scope="session"``, the longest a message lives: nobody can reach it once the session ends.
    session_ttl: float | None = DEFAULT_SESSION_TTL
    #: What one ``load_history`` page returns at most, and what one search within one conversation reads at most.
    max_load_bytes: int = MAX_LOAD_BYTES
    max_search_bytes: int = MAX_SEARCH_BYTES

    def __post_init__(self) -> None:
        if self.scope not in ("user", "session"):
            raise ConfigurationError(
                f"scope is 'user' (a signed-in caller's conversations, across sessions and clients) or 'session', "
                f"not {self.scope!r:.40}."
            )
        checked_whole("max_message_bytes", self.max_message_bytes, unit="bytes")
        checked_whole("max_messages", self.max_messages)
        checked_optional_whole("max_total_messages", self.max_total_messages)
        checked_optional_whole("max_total_bytes", self.max_total_bytes, unit="bytes")
        checked_flag("tools", self.tools)
        prefix = self.tool_prefix
        if not isinstance(prefix, str) or (prefix and not prefix.replace("_", "").isalnum()):
            raise ConfigurationError(f"tool_prefix is letters, digits and '_' (like 'desk_'), not {prefix!r:.40}.")
        checked_whole("max_load_bytes", self.max_load_bytes, unit="bytes")
        checked_whole("max_search_bytes", self.max_search_bytes, unit="bytes")
        object.__setattr__(self, "session_ttl", checked_optional_seconds("session_ttl", self.session_ttl))

    @property
    def secrets(self) -> list[str] | None:
        """``secret`` as a list, or None: ``REMEMBER_SECRET``."""
        secret = self.secret
        return [secret] if isinstance(secret, str) else (list(secret) if secret is not None else None)
