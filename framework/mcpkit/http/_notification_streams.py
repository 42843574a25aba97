"""Which 2026-07-28 requests get an SSE response: the ones that ask for notifications.

mcpkit answers with plain JSON by default (``json_response=True``): it is the cheaper wire, and most calls
send nothing but their result. But the SDK's JSON wire has nowhere to put a notification, so a tool's
``self.progress`` and ``self.log`` would be dropped. On 2026-07-28 a request says it wants them: a
``progressToken`` or the ``io.modelcontextprotocol/logLevel`` key in its ``_meta``. ``StreamWhenAsked``
sends exactly those requests to a second SDK session manager that answers with SSE, and every other request
to the JSON one. It looks for the two keys as bytes in the body's first chunk, the one ``ProtocolErrorMask``
read (a request naming them elsewhere, in an argument, only risks an SSE response it did not need; the SDK's
SSE mode stays JSON for a call that sends nothing). 2026-07-28 requests carry no session, so either manager can
serve any of them. 2025-11-25 sessions get lazy SSE from their own transport (``_lazy_sse``).
"""

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
