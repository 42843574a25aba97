"""``StorageErrors``: storage's low-level errors become the errors a client of the history sees, in one place."""

from __future__ import annotations

import logging
from types import TracebackType

from mcpkit_storage import QuotaExceededError, RememberStoreUnavailableError, StoreUnavailableError

from ._errors import HistoryQuotaError

__all__ = ["STORE_ERRORS", "StorageErrors"]

logger = logging.getLogger("mcpkit.history")


class StorageErrors:
    """``with StorageErrors(conversation, scope):`` turns an unreachable store and a quota into
    ``REMEMBER_STORE_UNAVAILABLE`` and ``HistoryQuotaError`` (``REMEMBER_QUOTA_EXCEEDED``, naming ``conversation``)."""

    __slots__ = ("conversation", "scope")

    def __init__(self, conversation: str = "", scope: str = "") -> None:
        self.conversation = conversation
        self.scope = scope

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if exc is None:
            return
        if isinstance(exc, QuotaExceededError):
            raise HistoryQuotaError(self.conversation, self.scope, exc.limit, exc.allowed) from None
        if isinstance(exc, StoreUnavailableError):
            logger.warning("history store unavailable: %s", exc)  # the store's own message, for the operator
            raise RememberStoreUnavailableError(maybe_applied=exc.maybe_applied) from None


#: The mapping of a call that writes nothing (reads, searches): one, shared, as it keeps no state.
STORE_ERRORS = StorageErrors()
