"""Telling the client how a call goes: log messages (``self.log``, ``logging/setLevel``) and progress
(``self.progress``), in both protocol eras."""

from ._client_log import ClientLog, LogLevels, report_progress, session_key

__all__ = [
    "ClientLog",
    "LogLevels",
    "report_progress",
    "session_key",
]
