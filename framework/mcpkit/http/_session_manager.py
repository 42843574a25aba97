"""The SDK's session manager with mcpkit's 2025-11-25 transports: lazy SSE answers, and each session's own events.

The SDK's manager builds every session's transport the same way, in ``_admit_session``, with the manager's one
event store. mcpkit keeps the SDK's admission (its session limit, the credential a session is bound to) and then
puts its own transport in that session's place: a ``LazySSETransport`` when answers are JSON until a call needs a
stream, and, when streams are resumable, a ``SessionEvents`` view of one ``EventLog`` for that session alone (a
shared store would replay one session's events to another; ``_event_log``). This is the one place mcpkit reaches
into SDK internals; ``supported`` checks what it relies on when the app is built, so a different SDK is a clear
``ConfigurationError``, not a silent leak.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from ._event_log import EventLog, SessionEvents
from ._lazy_sse import LazySSETransport

__all__ = ["SessionManager"]

#: What ``LazySSETransport`` and ``SessionManager`` use of the SDK's transport beyond its public methods.
_TRANSPORT_PARTS = (
    "_event_store",
    "_request_streams",
    "_sse_stream_writers",
    "_read_stream_writer",
    "_terminated",
    "_message_metadata",
    "_validate_accept_header",
    "_handle_post_request",
    "_check_content_type",
    "_validate_request_headers",
    "_mint_priming_event",
    "_create_session_message",
    "_run_sse_writer",
    "_clean_up_memory_streams",
    "_create_json_response",
    "_create_error_response",
    "_create_event_data",
)


class SessionManager(StreamableHTTPSessionManager):
    """``StreamableHTTPSessionManager`` whose 2025-11-25 sessions get lazy SSE answers and/or their own events."""

    def __init__(
        self,
        app: Any,
        *,
        lazy: bool,
        log: EventLog | None,
        ended: Callable[[str], None] = lambda session: None,
        **options: Any,
    ) -> None:
        # The manager's own store is never used by a session (each gets its own below); it turns resumability on.
        super().__init__(app, event_store=None if log is None else SessionEvents(log, ""), **options)
        self._lazy = lazy
        self._log = log
        self._ended = ended

    @staticmethod
    def supported() -> bool:
        """Whether this SDK has the parts mcpkit replaces and reuses (it is the one mcpkit was written against)."""
        probe = StreamableHTTPServerTransport(mcp_session_id="probe")
        return (
            callable(getattr(StreamableHTTPSessionManager, "_admit_session", None))
            and callable(getattr(StreamableHTTPSessionManager, "_discard_session", None))
            and all(hasattr(probe, part) for part in _TRANSPORT_PARTS)
            and hasattr(StreamableHTTPSessionManager(app=None), "_server_instances")  # type: ignore[arg-type]
        )

    def _admit_session(self, requestor: Any) -> StreamableHTTPServerTransport | None:
        admitted = super()._admit_session(requestor)
        if admitted is None or admitted.mcp_session_id is None:
            return admitted
        session = admitted.mcp_session_id
        events = None if self._log is None else SessionEvents(self._log, session)
        if not self._lazy:
            admitted._event_store = events
            return admitted
        transport = LazySSETransport(
            session,
            event_store=events,
            security_settings=self.security_settings,
            retry_interval=self.retry_interval,
            idle_timeout=self.session_idle_timeout,
        )
        self._server_instances[session] = transport  # the SDK's registration, with mcpkit's transport in it
        return transport

    async def _discard_session(self, session_id: str, transport: StreamableHTTPServerTransport) -> None:
        """The SDK forgets a session that ended (DELETE, idle, crash); mcpkit forgets what it kept for it too."""
        try:
            self._ended(session_id)
        finally:
            await super()._discard_session(session_id, transport)
