"""The errors ``self.history`` raises; each reaches the client as an error result with its code."""

from __future__ import annotations

from mcpkit import ToolError
from mcpkit_storage import INDEX_BYTES_PER_WORD, RememberQuotaError

__all__ = ["HistoryBusyError", "HistoryError", "HistoryInvalidError", "HistoryNotFoundError", "HistoryQuotaError"]


class HistoryError(ToolError):
    """Base class of the history errors (a caller without the identity its scope needs gets the remember
    plugin's ``REMEMBER_IDENTITY_REQUIRED``, and an unreachable store ``REMEMBER_STORE_UNAVAILABLE``, as there)."""


class HistoryInvalidError(HistoryError):
    """A conversation name, message, id, limit or ttl breaks a rule (``HISTORY_INVALID``); nothing was written."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="HISTORY_INVALID")


class HistoryNotFoundError(HistoryError):
    """A message id that is not in this caller's conversation (``HISTORY_NOT_FOUND``).

    Another caller's message, or another conversation's, is not found either: ids never reach across.
    """

    def __init__(self, conversation: str, message_id: str, what: str = "message") -> None:
        super().__init__(
            f"There is no {what} {message_id[:80]!r} in your conversation {conversation!r}; load_history lists its "
            "messages and their ids.",
            code="HISTORY_NOT_FOUND",
        )
        self.conversation = conversation
        self.message_id = message_id


class HistoryBusyError(HistoryError):
    """A heavy read (a page, a search) waited ``turn_timeout`` seconds behind the caller's own earlier ones
    (``HISTORY_BUSY``); nothing was read."""

    def __init__(self, timeout: float) -> None:
        super().__init__(
            "Your earlier reads of your conversations are still running (they take turns, one at a time), and this "
            f"one waited {timeout:g} seconds for its turn. Wait for them to finish, then try again.",
            code="HISTORY_BUSY",
        )
        self.timeout = timeout


class HistoryQuotaError(HistoryError, RememberQuotaError):
    """A save would take the caller past ``max_total_messages`` or ``max_total_bytes`` (``REMEMBER_QUOTA_EXCEEDED``,
    the code of every quota); nothing was saved. A ``RememberQuotaError`` too, as history raised before."""

    def __init__(self, conversation: str, scope: str, limit: str, allowed: int) -> None:
        if limit == "values":
            problem = (
                f"you keep {allowed:,} messages or conversations in {scope} scope already, the most this server "
                "allows (max_total_messages)"
            )
        else:
            problem = (
                f"it would take what you keep in {scope} scope past {allowed:,} bytes, the most this server allows "
                f"(max_total_bytes; each indexed word of a message counts {INDEX_BYTES_PER_WORD} bytes too)"
            )
        ToolError.__init__(
            self,
            f"Cannot save to the conversation {conversation!r}: {problem}. Clear conversations that are no longer "
            "needed (clear_history) and try again, or ask the server's operator to raise the limit.",
            code="REMEMBER_QUOTA_EXCEEDED",
        )
        self.scope = scope
        self.limit = limit
        self.allowed = allowed
