"""The 2026-07-28 ``tools/call`` POST as raw bytes, and a blocking one-off caller for checks."""

from __future__ import annotations

import http.client
import json
from typing import Any

__all__ = ["LEGACY", "PROTOCOL", "call_once", "legacy_body", "request_bytes", "result_of", "tool_body"]

PROTOCOL = "2026-07-28"
LEGACY = "2025-11-25"

_META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
    "io.modelcontextprotocol/clientCapabilities": {},
}


#: The envelope of a client that declares the tasks extension (SEP-2663) on its requests.
_META_TASKS = {
    **_META,
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
}


def tool_body(name: str, arguments: dict[str, Any], request_id: int, *, tasks: bool = False) -> bytes:
    """The JSON-RPC body of one ``tools/call`` with the 2026-07-28 ``_meta`` envelope (``tasks``: declaring the
    tasks extension)."""
    payload = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": _META_TASKS if tasks else _META},
    }
    return json.dumps(payload, separators=(",", ":")).encode()


def legacy_body(name: str, arguments: dict[str, Any], request_id: int) -> bytes:
    """The JSON-RPC body of one ``tools/call`` inside a 2025-11-25 session (no envelope: the session holds it)."""
    payload = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    return json.dumps(payload, separators=(",", ":")).encode()


def _headers(host: str, token: str | None, name: str, length: int) -> list[tuple[str, str]]:
    headers = [
        ("Host", host),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", PROTOCOL),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", name),
        ("Content-Length", str(length)),
    ]
    if token is not None:
        headers.insert(1, ("Authorization", f"Bearer {token}"))
    return headers


def request_bytes(port: int, token: str | None, name: str, body: bytes) -> bytes:
    """A complete keep-alive HTTP/1.1 request for ``body``, ready to write to a socket."""
    lines = ["POST /mcp HTTP/1.1"]
    lines += [f"{key}: {value}" for key, value in _headers(f"127.0.0.1:{port}", token, name, len(body))]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def result_of(status: int, content_type: str, body: bytes) -> dict[str, Any] | None:
    """The JSON-RPC ``result`` of a 200 response (JSON or one SSE event), else None."""
    if status != 200:
        return None
    if "text/event-stream" in content_type:
        data = [line[5:].strip() for line in body.split(b"\n") if line.startswith(b"data:")]
        if not data:
            return None
        body = data[-1]
    message = json.loads(body)
    result = message.get("result")
    return result if isinstance(result, dict) else None


def call_once(
    port: int, token: str | None, name: str, arguments: dict[str, Any], request_id: int = 1
) -> tuple[int, dict[str, Any] | None]:
    """One ``tools/call`` on a fresh connection: (HTTP status, result or None)."""
    body = tool_body(name, arguments, request_id)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest("POST", "/mcp", skip_host=True, skip_accept_encoding=True)
        for key, value in _headers(f"127.0.0.1:{port}", token, name, len(body)):
            conn.putheader(key, value)
        conn.endheaders(body)
        response = conn.getresponse()
        raw = response.read()
        return response.status, result_of(response.status, response.getheader("content-type") or "", raw)
    finally:
        conn.close()
