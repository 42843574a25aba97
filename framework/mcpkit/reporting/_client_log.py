"""Talking to the client while a call runs: ``self.log`` (``notifications/message``) and ``self.progress``.

Both eras, one API. On 2025-11-25 a client picks the least severe level it wants with ``logging/setLevel``
(kept per session here; before it asks, every level is sent, as the specification allows). On 2026-07-28
there is no ``logging/setLevel``: a client opts in per request with the ``io.modelcontextprotocol/logLevel``
``_meta`` key, and the SDK drops what that request did not ask for. Progress goes to the request's
``progressToken`` and is dropped when the client gave none. Both ride the response's own stream, which the
SDK opens as SSE for the call that sends them (the JSON response is kept for every other call).
"""

from __future__ import annotations

import logging
import warnings
from collections import OrderedDict
from typing import Any, Protocol, get_args

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPDeprecationWarning

from ..base import local_connection

__all__ = ["LEVELS", "ClientLog", "LogLevels", "Reporting", "report_progress", "session_key"]

_log = logging.getLogger("mcpkit.client_log")

#: The specification's levels, least severe first.
LEVELS: tuple[str, ...] = get_args(types.LoggingLevel)

#: Sessions whose ``logging/setLevel`` is remembered at most (the oldest forgotten first: they log everything).
SESSIONS_KEPT = 10_000


class Reporting(Protocol):
    """What sending a log message or a progress report needs of the call that sends it (a ``Context``)."""

    @property
    def name(self) -> str: ...

    @property
    def request_context(self) -> ServerRequestContext[Any, Any] | None: ...


class LogLevels:
    """The level each 2025-11-25 session asked for with ``logging/setLevel``."""

    def __init__(self) -> None:
        self._levels: OrderedDict[str, int] = OrderedDict()

    async def set_level(
        self, ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        key = session_key(ctx)
        if key is not None:
            self._levels[key] = LEVELS.index(params.level)
            self._levels.move_to_end(key)
            while len(self._levels) > SESSIONS_KEPT:
                self._levels.popitem(last=False)
        return types.EmptyResult()

    def wants(self, ctx: ServerRequestContext[Any, Any], level: str) -> bool:
        key = session_key(ctx)
        least = self._levels.get(key, 0) if key is not None else 0
        return LEVELS.index(level) >= least


def session_key(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The 2025-11-25 session a request belongs to: its ``Mcp-Session-Id`` over HTTP (the SDK checked it belongs
    to this caller), the stdio connection's own id over stdio; None for a 2026-07-28 HTTP request."""
    request = ctx.request
    if request is not None:
        session: object = request.headers.get("mcp-session-id")
        return session if isinstance(session, str) else None
    local = local_connection.get()
    return f"stdio:{local.session_id}" if local is not None else None


class ClientLog:
    """``self.log``: ``await self.log.info("Fetched 3 tickets")`` sends a log message to the client.

    ``data`` is any JSON value (a string, or a dict of details); ``logger`` names the source (default: the tool,
    resource or prompt). Messages the client did not ask for are dropped, never an error: a tool cannot tell
    whether anyone listens, and need not care.
    """

    def __init__(self, context: Reporting, levels: LogLevels | None) -> None:
        self._context = context
        self._levels = levels

    async def send(self, level: str, data: Any, *, logger: str | None = None) -> None:
        if level not in LEVELS:
            raise ValueError(f"log level {level!r} is not one of {', '.join(LEVELS)}")
        ctx = self._context.request_context
        if ctx is None:
            return
        if ctx.protocol_version != "2026-07-28" and self._levels is not None and not self._levels.wants(ctx, level):
            return
        # The SDK warns that logging is deprecated as of 2026-07-28 when the call is made (not awaited): mcpkit
        # sends to 2025-11-25 sessions and to 2026-07-28 requests that opt in, as the specification allows.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            sending = ctx.session.send_log_message(
                level=level,  # type: ignore[arg-type]  # checked against LEVELS above
                data=data,
                logger=logger or self._context.name,
                related_request_id=ctx.request_id,
            )
        try:
            await sending
        except Exception:  # the client went away: the call goes on, as with a message nobody reads
            _log.debug("a log message for %s could not be sent", self._context.name, exc_info=True)

    async def debug(self, data: Any, *, logger: str | None = None) -> None:
        await self.send("debug", data, logger=logger)

    async def info(self, data: Any, *, logger: str | None = None) -> None:
        await self.send("info", data, logger=logger)

    async def notice(self, data: Any, *, logger: str | None = None) -> None:
        await self.send("notice", data, logger=logger)

    async def warning(self, data: Any, *, logger: str | None = None) -> None:
        await self.send("warning", data, logger=logger)

    async def error(self, data: Any, *, logger: str | None = None) -> None:
        await self.send("error", data, logger=logger)

    async def critical(self, data: Any, *, logger: str | None = None) -> None:
        await self.send("critical", data, logger=logger)


async def report_progress(context: Reporting, done: float, total: float | None, message: str | None) -> None:
    """``self.progress``: a ``notifications/progress`` for the request's ``progressToken``, if it has one."""
    if isinstance(done, bool) or not isinstance(done, int | float):
        raise TypeError(f"progress done is a number, not {done!r}")
    if total is not None and (isinstance(total, bool) or not isinstance(total, int | float)):
        raise TypeError(f"progress total is a number or None, not {total!r}")
    ctx = context.request_context
    if ctx is None:
        return
    try:
        await ctx.session.report_progress(done, total, message)
    except Exception:
        _log.debug("a progress notification for %s could not be sent", context.name, exc_info=True)
