"""2025-11-25 answers that stay plain JSON until the call has something else to send (lazy SSE), so progress,
logs and questions reach a client that accepts SSE without every call paying for a stream (docs/architecture.md)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from functools import partial
from http import HTTPStatus
from typing import Any, cast

import anyio
import pydantic_core
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.streamable_http import (
    CONTENT_TYPE_SSE,
    MCP_SESSION_ID_HEADER,
    REQUEST_STREAM_BUFFER_SIZE,
    EventMessage,
    SSEEvent,
    StreamableHTTPServerTransport,
    check_accept_headers,
)
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.message import ServerMessageMetadata
from mcp_types import (
    DEFAULT_NEGOTIATED_VERSION,
    INTERNAL_ERROR,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from sse_starlette import EventSourceResponse
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

__all__ = ["SILENT_SECONDS", "LazySSETransport"]

_log = logging.getLogger("mcpkit.http")

#: A call that has sent nothing for this long is answered with SSE, so keep-alive comments hold the connection
#: open (the SDK's 2026-07-28 transport waits as long before it commits to SSE).
SILENT_SECONDS = 15.0

#: Put in a request's stream by its timer when the call stayed silent for ``SILENT_SECONDS``; never sent.
_SILENCE = EventMessage(JSONRPCNotification(jsonrpc="2.0", method="mcpkit/silence"))
#: Where ``_plain_request`` leaves, in the ASGI scope, whether the request's client takes an event stream.
_STREAMS = "mcpkit.accepts_sse"


class LazySSETransport(StreamableHTTPServerTransport):
    """The SDK's 2025-11-25 session transport, answering each request with JSON unless it needs a stream."""

    def __init__(self, mcp_session_id: str, **options: Any) -> None:
        # The SDK's SSE mode underneath: its router then hands this transport every message related to a request
        # (JSON mode drops them before anyone could use them), and stores them when streams are resumable.
        super().__init__(mcp_session_id, is_json_response_enabled=False, **options)
        # The requests waiting for their first message, with when they began (for the silence sweep below).
        self._waiting: dict[str, tuple[float, MemoryObjectSendStream[EventMessage]]] = {}
        self._sweep: asyncio.TimerHandle | None = None

    async def _validate_accept_header(self, request: Request, scope: Scope, send: Send) -> bool:
        """JSON is what any answer can be; SSE is used only when the client takes it too."""
        if check_accept_headers(request)[0]:
            return True
        response = self._create_error_response(
            "Not Acceptable: Client must accept application/json", HTTPStatus.NOT_ACCEPTABLE
        )
        await response(scope, request.receive, send)
        return False

    async def _handle_post_request(self, scope: Scope, request: Request, receive: Receive, send: Send) -> None:
        message = await self._plain_request(request)
        if message is None:  # a notification, a response, or a body the SDK refuses: the SDK's own handling
            await super()._handle_post_request(scope, request, receive, send)
            return
        writer = self._read_stream_writer
        if writer is None:  # pragma: no cover - connect() runs before any request is handed over
            raise RuntimeError("the transport is not connected")
        try:
            if message.method == "initialize":
                session = request.headers.get(MCP_SESSION_ID_HEADER)
                if session is not None and session != self.mcp_session_id:
                    refused = self._create_error_response(
                        "Not Found: Invalid or expired session ID", HTTPStatus.NOT_FOUND
                    )
                    await refused(scope, receive, send)
                    return
            elif not await self._validate_request_headers(request, send):
                return
            await self._answer(message, scope, request, receive, send)
        except Exception as exc:
            _log.exception("Error handling a POST request")
            failed = self._create_error_response(
                "Error handling POST request", HTTPStatus.INTERNAL_SERVER_ERROR, INTERNAL_ERROR
            )
            await failed(scope, receive, send)
            await writer.send(exc)

    async def _plain_request(self, request: Request) -> JSONRPCRequest | None:
        """The JSON-RPC request in a POST this transport answers itself, or None to leave it to the SDK."""
        takes_json, takes_sse = check_accept_headers(request)
        if not takes_json or not self._check_content_type(request):
            return None
        request.scope[_STREAMS] = takes_sse
        try:
            message = jsonrpc_message_adapter.validate_python(pydantic_core.from_json(await request.body()))
        except ValueError:  # unparsable or invalid: the SDK parses it again and answers as it always has
            return None
        return message if isinstance(message, JSONRPCRequest) else None

    async def _answer(
        self, message: JSONRPCRequest, scope: Scope, request: Request, receive: Receive, send: Send
    ) -> None:
        """Dispatch the request, then answer with JSON or SSE, as its first message decides."""
        assert self._read_stream_writer is not None
        request_id = str(message.id)
        version = (
            str(message.params.get("protocolVersion", DEFAULT_NEGOTIATED_VERSION))
            if message.method == "initialize" and message.params
            else request.headers.get(MCP_PROTOCOL_VERSION_HEADER, DEFAULT_NEGOTIATED_VERSION)
        )
        streams = anyio.create_memory_object_stream[EventMessage](REQUEST_STREAM_BUFFER_SIZE)
        self._request_streams[request_id] = streams
        reader = streams[1]
        # Minted before dispatch, as the SDK does, so that it is stored before anything sent for this request;
        # sent only if the answer becomes a stream with nothing else to start it. None unless resumable.
        priming = None if self._event_store is None else await self._mint_priming_event(request_id, version)
        can_stream: bool = request.scope[_STREAMS]
        dispatched = self._create_session_message(message, request, request_id, version)
        assert isinstance(dispatched.metadata, ServerMessageMetadata)
        dispatched.metadata.can_send_request = can_stream  # a question needs a stream to ride
        await self._read_stream_writer.send(dispatched)
        try:
            if can_stream:
                self._waiting[request_id] = (time.monotonic(), streams[0])
                if self._sweep is None:
                    self._sweep = asyncio.get_running_loop().call_later(SILENT_SECONDS, self._nudge_silent)
                try:
                    first = await reader.receive()
                finally:
                    self._waiting.pop(request_id, None)
            else:  # nothing but the response has anywhere to go
                first = await reader.receive()
                while not isinstance(first.message, JSONRPCResponse | JSONRPCError):
                    first = await reader.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            await self._cleanup_and_answer_closed(request_id, priming, scope, receive, send)
            return
        if isinstance(first.message, JSONRPCResponse | JSONRPCError):
            await self._clean_up_memory_streams(request_id)
            await self._create_json_response(first.message)(scope, receive, send)
            return
        opening = priming if first is _SILENCE else self._create_event_data(first)
        await self._stream(request_id, reader, opening, scope, receive, send)

    def _nudge_silent(self) -> None:
        """Wake the requests silent for ``SILENT_SECONDS`` to switch to SSE; look again when the next one is due.

        One timer per session, not one per request: a timer per call costs the plain call a timer handle and the
        loop's heap a cancelled entry (measured: 2 % of a 2025-11-25 call); a dict entry costs next to nothing.
        """
        self._sweep = None
        due = time.monotonic() - SILENT_SECONDS
        for request_id, (began, stream) in list(self._waiting.items()):
            if began <= due:
                del self._waiting[request_id]
                with contextlib.suppress(anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    stream.send_nowait(_SILENCE)
        if self._waiting:
            oldest = min(began for began, _ in self._waiting.values())
            delay = max(oldest - due, 0.0)
            self._sweep = asyncio.get_running_loop().call_later(delay, self._nudge_silent)

    async def _cleanup_and_answer_closed(
        self, request_id: str, priming: SSEEvent | None, scope: Scope, receive: Receive, send: Send
    ) -> None:
        """The request's stream was closed before it sent anything: the session ended, or the call closed its stream
        for the client to poll (``close_stream``), which a resumable session answers with a primed, ended stream."""
        await self._clean_up_memory_streams(request_id)
        if self._terminated or priming is None:
            _log.debug("session ended with request %s in flight; no response to send", request_id)
            ended = self._create_error_response(
                "Session terminated before the request completed", HTTPStatus.INTERNAL_SERVER_ERROR, INTERNAL_ERROR
            )
            await ended(scope, receive, send)
            return
        closed = anyio.create_memory_object_stream[EventMessage](0)
        await closed[0].aclose()  # nothing follows the priming event: the client reconnects with Last-Event-ID
        await self._stream(request_id, closed[1], priming, scope, receive, send)

    async def _stream(
        self,
        request_id: str,
        reader: MemoryObjectReceiveStream[EventMessage],
        opening: SSEEvent | None,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        """Answer with SSE: ``opening``, then what the request sends until its response (the SDK's own writer)."""
        sse_writer, sse_reader = anyio.create_memory_object_stream[SSEEvent](0)
        self._sse_stream_writers[request_id] = sse_writer
        headers = {
            "Cache-Control": "no-cache, no-transform",
            "Connection": "keep-alive",
            "Content-Type": CONTENT_TYPE_SSE,
            MCP_SESSION_ID_HEADER: self.mcp_session_id or "",
        }
        response = EventSourceResponse(
            content=sse_reader,
            data_sender_callable=partial(self._run_sse_writer, request_id, sse_writer, _heard(reader), opening),
            headers=headers,
        )
        try:
            await response(scope, receive, send)
        finally:
            await sse_writer.aclose()
            await sse_reader.aclose()
            await self._clean_up_memory_streams(request_id)


def _heard(reader: MemoryObjectReceiveStream[EventMessage]) -> MemoryObjectReceiveStream[EventMessage]:
    """The request's stream as the SDK's SSE writer reads it, without the silence marker (a timer that fired as the
    first message arrived leaves one behind it)."""
    return cast(MemoryObjectReceiveStream[EventMessage], _Heard(reader))


class _Heard:
    """What ``_run_sse_writer`` uses of a receive stream: ``async with`` and ``async for``."""

    def __init__(self, reader: MemoryObjectReceiveStream[EventMessage]) -> None:
        self._reader = reader

    async def __aenter__(self) -> _Heard:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._reader.aclose()

    def __aiter__(self) -> AsyncIterator[EventMessage]:
        return self._messages()

    async def _messages(self) -> AsyncIterator[EventMessage]:
        async for message in self._reader:
            if message is not _SILENCE:
                yield message
