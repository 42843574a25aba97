"""The floor: a plain Starlette route, stdlib json, no MCP library — the least any server can cost."""

from __future__ import annotations

import json
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from bench.tokens import BY_TOKEN

__all__ = ["build"]

_PROTOCOL = "2026-07-28"
_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
_SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "bench-floor", "version": "0"}}
_TOOL = {
    "name": "increment",
    "description": "Add one to the caller's counter and return it.",
    "inputSchema": {"type": "object", "properties": {}},
    "outputSchema": {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]},
}
_UNAUTHORIZED = Response(
    b'{"error":"invalid_token"}', 401, {"WWW-Authenticate": 'Bearer realm="mcp"'}, "application/json"
)


def _reply(message_id: Any, result: dict[str, Any]) -> Response:
    result["resultType"] = "complete"
    result["_meta"] = _SERVER_INFO
    body = json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result}, separators=(",", ":"))
    return Response(body, media_type="application/json")


def _error(status: int, message_id: Any, code: int, text: str) -> Response:
    body = json.dumps({"jsonrpc": "2.0", "id": message_id, "error": {"code": code, "message": text}})
    return Response(body, status, media_type="application/json")


def build(options: dict[str, Any]) -> Starlette:
    counts: dict[str, int] = {}

    async def mcp(request: Request) -> Response:
        header = request.headers.get("authorization", "")
        user = BY_TOKEN.get(header[7:]) if header.startswith("Bearer ") else None
        if user is None:
            return _UNAUTHORIZED
        message = json.loads(await request.body())
        message_id, method = message.get("id"), message.get("method")
        params = message.get("params") or {}
        if params.get("_meta", {}).get(_VERSION_KEY) != _PROTOCOL or request.headers.get("mcp-protocol-version") != (
            _PROTOCOL
        ):
            return _error(400, message_id, -32022, "Unsupported protocol version")
        if request.headers.get("mcp-method") != method:
            return _error(400, message_id, -32020, "Mcp-Method does not match the body")
        if method == "tools/call":
            if request.headers.get("mcp-name") != params.get("name"):
                return _error(400, message_id, -32020, "Mcp-Name does not match the body")
            if params.get("name") != "increment":
                text = [{"type": "text", "text": "Unknown tool"}]
                return _reply(message_id, {"content": text, "isError": True})
            count = counts.get(user, 0) + 1
            counts[user] = count
            content = [{"type": "text", "text": json.dumps({"count": count})}]
            return _reply(message_id, {"content": content, "structuredContent": {"count": count}, "isError": False})
        if method == "tools/list":
            return _reply(message_id, {"tools": [_TOOL], "ttlMs": 0, "cacheScope": "private"})
        if method == "server/discover":
            return _reply(message_id, {"supportedVersions": [_PROTOCOL], "capabilities": {"tools": {}}})
        return _error(404, message_id, -32601, "Method not found")

    return Starlette(routes=[Route("/mcp", mcp, methods=["POST"])])
