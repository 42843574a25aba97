"""``Heard``: what the server sent a ``call_as`` client besides results (progress, log messages, every notification),
kept in the order it arrived, for a test's assertions."""

from __future__ import annotations

from typing import Any, NamedTuple

import mcp_types as types

__all__ = ["Heard", "LogMessage", "Progress"]


class Progress(NamedTuple):
    """One ``notifications/progress``: ``(progress, total, message)``, so ``== (1, 2, "half")`` reads naturally."""

    progress: float
    total: float | None
    message: str | None


class LogMessage(NamedTuple):
    """One ``notifications/message``: ``(level, data, logger)``."""

    level: str
    data: Any
    logger: str | None


class Heard:
    """The callbacks that record what a client heard: ``progress``, ``logs``, and every server ``notifications``."""

    def __init__(self) -> None:
        self.progress: list[Progress] = []
        self.logs: list[LogMessage] = []
        self.notifications: list[types.ServerNotification] = []

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append(Progress(progress, total, message))

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(LogMessage(params.level, params.data, params.logger))

    async def on_message(self, message: Any) -> None:
        if not isinstance(message, Exception):  # transport faults surface as the call's own error
            self.notifications.append(message)
