"""Clear JSON-RPC errors that say what to do, instead of the SDK's leaky or terse HTTP error bodies; each POST body
is read first here, for lone surrogates (docs/errors.md; docs/architecture.md)."""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..base import encode, rpc_error
from ._envelope_errors import envelope_error
from ._lone_surrogates import declared_length, guard_body, is_plain, replaying

__all__ = ["FIRST_BODY_SCOPE_KEY", "ProtocolErrorMask"]

#: The first chunk of a POST body, as the mask read it: middleware inside it looks there instead of reading again.
FIRST_BODY_SCOPE_KEY = "mcpkit.first_body"

#: What the SDK's 400 message starts with, and the text sent instead.
_MASKED = {
    "Parse error:": "Parse error: the request body is not valid JSON, or nests too deeply.",
    "Validation error:": "Invalid request: the body is not a single JSON-RPC request, notification or response object.",
}
_MISSING_SESSION = "Bad Request: Missing session ID"
_NEW_ERA = (
    "For protocol 2026-07-28, which has no sessions, send the header 'MCP-Protocol-Version: 2026-07-28' and put "
    "'io.modelcontextprotocol/protocolVersion' and 'io.modelcontextprotocol/clientCapabilities' in params._meta."
)
_TABLE_FULL = (
    "The server's table of 2025-11-25 sessions is full (max_sessions). Retry later, or use protocol 2026-07-28, "
    "which needs no session."
)

#: Statuses whose response is held and possibly replaced; everything else streams through untouched.
_HELD = frozenset({400, 403, 413, 421, 503})

#: A replacement body, the headers it adds and the names of the SDK's headers it drops.
_Replacement = tuple[bytes, list[tuple[bytes, bytes]], tuple[bytes, ...]]

#: A larger held body is not one of the SDK's short error responses: pass it through untouched.
_MAX_HELD_BYTES = 1 << 20


class ProtocolErrorMask:
    """ASGI middleware: rewrites the SDK's parse, validation, size, Host, Origin, session and header refusals."""

    def __init__(self, app: ASGIApp, *, max_body_bytes: int) -> None:
        self._app = app
        self._max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        limit = self._max_body_bytes
        if scope["method"] == "POST" and (declared_length(scope) or 0) <= limit:
            # Read the body before the SDK: a plain one (whole, no surrogate escape) is handed back as it is,
            # and so is one already over the limit (one that says so in Content-Length is not even read).
            first = await receive()
            scope[FIRST_BODY_SCOPE_KEY] = first.get("body", b"")  # for StreamWhenAsked, inside: no second read
            if len(first.get("body", b"")) > limit or is_plain(first):
                receive = replaying([first], receive)
            else:
                guarded = await guard_body(first, scope, receive, send, limit)
                if guarded is None:
                    return
                receive = guarded
        held: Message | None = None
        held_body = bytearray()

        async def masking_send(message: Message) -> None:
            nonlocal held
            if message["type"] == "http.response.start":
                if message["status"] in _HELD:
                    held = message
                    return
            elif message["type"] == "http.response.body" and held is not None:
                held_body.extend(message.get("body", b""))
                complete = not message.get("more_body", False)
                if not complete and len(held_body) <= _MAX_HELD_BYTES:
                    return
                start, held = held, None
                body = bytes(held_body)
                headers = list(start.get("headers", ()))
                if complete:  # else: too big to be one of the SDK's error bodies, sent on as it is
                    replaced = self._replacement(scope, start["status"], body)
                    dropped = {b"content-length"}
                    added: list[tuple[bytes, bytes]] = []
                    if replaced is not None:
                        body, added, gone = replaced
                        dropped |= {b"content-type", *gone, *(name for name, _ in added)}
                        added.append((b"content-type", b"application/json"))
                    headers = [(k, v) for k, v in headers if k.lower() not in dropped]
                    headers += [*added, (b"content-length", str(len(body)).encode())]
                await send({**start, "headers": headers})
                message = {**message, "body": body}
            await send(message)

        await self._app(scope, receive, masking_send)

    def _replacement(self, scope: Scope, status: int, body: bytes) -> _Replacement | None:
        """The body sent instead of the SDK's, with headers to add and to drop; None keeps the SDK's."""
        if status == 413:
            limit = f"{self._max_body_bytes:,}"
            return _plain(
                f"The request body is over this server's limit of {limit} bytes (max_body_bytes). Send a smaller "
                "request: data that large belongs in a file or a resource, not in a tool argument."
            )
        if status == 421:
            return _plain(
                f"This server does not answer to the Host {_header(scope, b'host')!r}: connect with its own URL. "
                "(Operators: a name clients use belongs in allowed_hosts.)"
            )
        if status == 403:
            return _plain(
                f"Requests from the web page origin {_header(scope, b'origin')!r} are refused (DNS-rebinding "
                "protection). (Operators: an origin whose pages may call this server belongs in allowed_origins.)"
            )
        document = _document(body)
        message = _message(document)
        if document is None or message is None:
            return None
        if status == 503:
            full = message == "Too many open sessions"
            return (rpc_error(_TABLE_FULL), [(b"retry-after", b"5")], ()) if full else None
        if message == _MISSING_SESSION:  # the session the SDK made for this request is gone again: drop its id
            return rpc_error(_missing_session(scope)), [], (b"mcp-session-id",)
        instead = envelope_error(_headers(scope), scope.get(FIRST_BODY_SCOPE_KEY, b""), document["error"])
        if instead is not None:  # a 2026-07-28 request's routing headers or protocol version
            return encode({**document, "error": instead}), [], ()
        masked = _masked(document, message)
        return None if masked is None else (masked, [], ())


def _plain(message: str) -> _Replacement:
    return rpc_error(message), [], ()


def _header(scope: Scope, wanted: bytes) -> str:
    for name, value in scope["headers"]:
        if name == wanted:
            return str(value.decode("latin-1"))[:100]
    return ""


def _missing_session(scope: Scope) -> str:
    version = _header(scope, b"mcp-protocol-version")
    if not version:
        return (
            "This request has no 'MCP-Protocol-Version' header and no 'Mcp-Session-Id', so it was read as protocol "
            "2025-11-25, where a session comes first: send 'initialize', then the Mcp-Session-Id it returns with every "
            f"request. {_NEW_ERA}"
        )
    return (
        f"No 'Mcp-Session-Id': on protocol {version} send 'initialize' first, then the Mcp-Session-Id it returns "
        f"with every request. {_NEW_ERA}"
    )


def _headers(scope: Scope) -> dict[bytes, str]:
    """The request's headers by lower-case name (the first of each), as text."""
    headers: dict[bytes, str] = {}
    for name, value in scope["headers"]:
        headers.setdefault(name.lower(), value.decode("latin-1"))
    return headers


def _document(body: bytes) -> dict[str, Any] | None:
    """``body`` as a JSON-RPC error response, if it is one."""
    try:
        document = json.loads(body)
    except ValueError:
        return None
    if not isinstance(document, dict) or not isinstance(document.get("error"), dict):
        return None
    return document


def _message(document: dict[str, Any] | None) -> str | None:
    """The JSON-RPC error message in ``document``."""
    message = None if document is None else document["error"].get("message")
    return message if isinstance(message, str) else None


def _masked(document: dict[str, Any], message: str) -> bytes | None:
    """``document`` with the SDK's exception text replaced, or None when it holds none."""
    for prefix, replacement in _MASKED.items():
        if message.startswith(prefix):
            document["error"]["message"] = replacement
            document["error"].pop("data", None)
            return encode(document)
    return None
