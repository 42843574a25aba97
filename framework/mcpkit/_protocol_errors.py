"""Keeps parser and validator text out of HTTP error bodies.

The SDK's 2025-11-25 transport answers a body it cannot parse or validate with HTTP 400 and
``str(exc)`` of the pydantic error as the JSON-RPC message: the offending input echoed back,
pydantic's type names and documentation links. This ASGI middleware replaces those two
messages with fixed text; the code, the id and every other response pass through unchanged.
The mask also reads each POST body first, for the other difference between the two eras' body
parsers: lone surrogates (``_lone_surrogates``).
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ._lone_surrogates import guard_body, is_plain, replaying

__all__ = ["ProtocolErrorMask"]

#: What the SDK's message starts with, and the text sent instead.
_MASKED = {
    "Parse error:": "Parse error: the request body is not valid JSON, or nests too deeply.",
    "Validation error:": "Invalid request: the body is not a single JSON-RPC request, notification or response object.",
}

#: A larger 400 body is not one of the SDK's short error responses: pass it through untouched.
_MAX_HELD_BYTES = 1 << 20


class ProtocolErrorMask:
    """ASGI middleware: rewrites the message of the SDK's JSON-RPC parse and validation errors."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        if scope["method"] == "POST":
            # Read the body before the SDK: a plain one (whole, no surrogate escape) is handed back as it is.
            first = await receive()
            if is_plain(first):
                receive = replaying([first], receive)
            else:
                guarded = await guard_body(first, scope, receive, send)
                if guarded is None:
                    return
                receive = guarded
        held: Message | None = None
        held_body = bytearray()

        async def masking_send(message: Message) -> None:
            nonlocal held
            if message["type"] == "http.response.start":
                if message["status"] == 400 and _is_json(message.get("headers", ())):
                    held = message
                    return
            elif message["type"] == "http.response.body" and held is not None:
                held_body.extend(message.get("body", b""))
                complete = not message.get("more_body", False)
                if not complete and len(held_body) <= _MAX_HELD_BYTES:
                    return
                start, held = held, None
                body = bytes(held_body)
                headers = [(k, v) for k, v in start.get("headers", ()) if k.lower() != b"content-length"]
                if complete:  # else: too big to be one of the SDK's error bodies, sent on as it is
                    body = _masked(body)
                    headers.append((b"content-length", str(len(body)).encode()))
                await send({**start, "headers": headers})
                message = {**message, "body": body}
            await send(message)

        await self._app(scope, receive, masking_send)


def _is_json(headers: Any) -> bool:
    return any(k.lower() == b"content-type" and v.startswith(b"application/json") for k, v in headers)


def _masked(body: bytes) -> bytes:
    """``body`` with the SDK's exception text replaced, or unchanged when it holds none."""
    try:
        document = json.loads(body)
    except ValueError:
        return body
    error = document.get("error") if isinstance(document, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("message"), str):
        return body
    message: str = error["message"]
    for prefix, replacement in _MASKED.items():
        if message.startswith(prefix):
            error["message"] = replacement
            error.pop("data", None)
            return json.dumps(document, separators=(",", ":")).encode()
    return body
