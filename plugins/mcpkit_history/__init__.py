"""mcpkit_history: durable per-caller conversation history (``self.history``) on the remember store."""

from ._errors import HistoryBusyError, HistoryError, HistoryInvalidError, HistoryNotFoundError, HistoryQuotaError
from ._history import History, HistoryPage, Hit, Hits
from ._messages import MAX_MESSAGE_BYTES, MAX_MESSAGES_PER_SAVE
from ._plugin import HistoryPlugin

__all__ = [
    "MAX_MESSAGES_PER_SAVE",
    "MAX_MESSAGE_BYTES",
    "History",
    "HistoryBusyError",
    "HistoryError",
    "HistoryInvalidError",
    "HistoryNotFoundError",
    "HistoryPage",
    "HistoryPlugin",
    "HistoryQuotaError",
    "Hit",
    "Hits",
]
