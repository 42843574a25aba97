"""The JSON error responses mcpkit's HTTP layer sends: one body format, one way to send it.

Every refusal of ours (the auth gate, the session guard, the protocol-error mask and the lone-surrogate
guard inside it, the connection guard) goes through here, so they cannot drift apart: a JSON-RPC error
object with ``"id": null`` (there is no request to answer yet) whose message says what to do, always
``application/json`` with its length. The auth gate's refusals add the OAuth error code and description
(RFC 6750) as the error's ``data``; their ``WWW-Authenticate`` header says the same.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from http import HTTPStatus
from typing import Any

from mcp_types import INVALID_REQUEST
from starlette.types import Send

__all__ = ["encode", "json_headers", "raw_response", "rpc_error", "send_empty", "send_json", "send_rpc_error"]

#: A header as ASGI carries it.
Header = tuple[bytes, bytes]


def encode(document: Mapping[str, Any]) -> bytes:
    """``document`` as compact JSON, the way the SDK writes its own JSON-RPC messages."""
    return json.dumps(document, separators=(",", ":")).encode()


def rpc_error(message: str, code: int = INVALID_REQUEST, data: Mapping[str, Any] | None = None) -> bytes:
    """A JSON-RPC error object for a request that gets no answer of its own (``"id": null``)."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return encode({"jsonrpc": "2.0", "id": None, "error": error})


def json_headers(body: bytes, extra: Iterable[Header] = ()) -> list[Header]:
    """``content-type`` and ``content-length`` for ``body``, then ``extra``."""
    return [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *extra]


async def send_json(send: Send, status: int, body: bytes, extra: Iterable[Header] = ()) -> None:
    """Send a whole JSON response over ASGI."""
    await send({"type": "http.response.start", "status": status, "headers": json_headers(body, extra)})
    await send({"type": "http.response.body", "body": body})


async def send_empty(send: Send, status: int, extra: Iterable[Header] = ()) -> None:
    """Send a response without a body (a CORS preflight's 204)."""
    await send({"type": "http.response.start", "status": status, "headers": list(extra)})
    await send({"type": "http.response.body", "body": b""})


async def send_rpc_error(
    send: Send, status: int, message: str, *, code: int = INVALID_REQUEST, extra: Iterable[Header] = ()
) -> None:
    """Send ``status`` with a JSON-RPC error whose message is ``message``."""
    await send_json(send, status, rpc_error(message, code), extra)


def raw_response(status: int, message: str, extra: Iterable[Header] = ()) -> bytes:
    """A whole HTTP/1.1 response with a JSON-RPC error, closing the connection: for when no request was read."""
    body = rpc_error(message)
    headers = [*json_headers(body), (b"connection", b"close"), *extra]
    head = [
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}".encode(),
        *(name + b": " + value for name, value in headers),
    ]
    return b"\r\n".join([*head, b"", body])
