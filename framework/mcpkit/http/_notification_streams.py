"""Which 2026-07-28 requests get an SSE response: the ones that ask for notifications (a ``progressToken`` or a log
level in ``_meta``), so that plain JSON stays the cheap default (docs/architecture.md)."""

from __future__ import annotations

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import ASGIApp, Receive, Scope, Send

from ._protocol_errors import FIRST_BODY_SCOPE_KEY

__all__ = ["StreamWhenAsked"]

_MODERN = b"2026-07-28"
_PROGRESS, _LOG_LEVEL = b'"progressToken"', b'"io.modelcontextprotocol/logLevel"'


class StreamWhenAsked:
    """ASGI middleware in front of the SDK's routes: 2026-07-28 POSTs asking for notifications go to ``streaming``."""

    def __init__(self, app: ASGIApp, *, streaming: StreamableHTTPSessionManager, path: str) -> None:
        self._app = app
        self._streaming = streaming
        self._path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = scope.get(FIRST_BODY_SCOPE_KEY)  # read by the ProtocolErrorMask around this, for POSTs only
        asks = body is not None and (_PROGRESS in body or _LOG_LEVEL in body)
        if asks and scope["path"] == self._path and _modern(scope):
            await self._streaming.handle_request(scope, receive, send)
            return
        await self._app(scope, receive, send)


def _modern(scope: Scope) -> bool:
    for name, value in scope["headers"]:
        if name == b"mcp-protocol-version":
            return bool(value == _MODERN)
    return False
