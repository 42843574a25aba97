"""What the hostile-input tests share: the server under attack, and raw requests in both protocol eras."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import httpx2
from pydantic import Field

from mcpkit import Server, StaticKeys, ToolContext, app, tool
from mcpkit_remember import RememberPlugin
from reliability.callers import LEGACY, MODERN

NOUR_KEY = "nour-input-key-0123456789abcdef"
MAX_VALUE_BYTES = 1024
BODY_LIMIT = 256 * 1024  # what http_app() accepts by default (a server whose plugins need no more)
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
ACCEPT = {"Accept": "application/json, text/event-stream"}
TESTS_DIR = Path(__file__).resolve().parents[1]

#: Text that only an exception, a traceback or pydantic's own error rendering would put in a response.
EXCEPTION_TEXT = (
    "Traceback (most recent call",
    'File "/',
    "validation error for",
    "validation errors for",
    "errors.pydantic.dev",
    "input_value=",
    "input_type=",
    " object at 0x",
    "Error(",
    "Exception:",
    "RecursionError",
    "UnicodeDecodeError",
)


@tool(name="file_ticket", description="Open a support ticket.")
class FileTicket(ToolContext):
    async def execute(
        self,
        subject: Annotated[str, Field(max_length=80)],
        priority: Literal["low", "normal", "urgent"] = "normal",
        count: Annotated[int, Field(ge=1, le=100)] = 1,
        tags: list[str] | None = None,
    ) -> dict[str, Any]:
        return {"subject": subject, "priority": priority, "count": count, "tags": tags or []}


@tool(name="keep", description="Remember a value for the caller.")
class Keep(ToolContext):
    async def execute(self, key: str, value: Any) -> dict[str, Any]:
        await self.remember.set(key, value, scope="user")
        return {"kept": await self.remember.get(key, scope="user")}


TOOLS = ("file_ticket", "keep")


@app(
    id="hostile-input",
    tools=[FileTicket, Keep],
    plugins=[RememberPlugin.init(type="memory", max_value_bytes=MAX_VALUE_BYTES)],
)
class InputApp: ...


def make_server() -> Server:
    return Server([InputApp], auth=StaticKeys({"nour": NOUR_KEY}))


# -- raw requests ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sent:
    """What one request came back with: enough to judge it."""

    status: int
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def document(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    @property
    def code(self) -> str | int | None:
        """The mcpkit error code of an error result, else the JSON-RPC error code, else None."""
        document = self.document
        if not isinstance(document, dict):
            return None
        result = document.get("result")
        if isinstance(result, dict):
            error = (result.get("_meta") or {}).get("mcpkit/error")
            return error.get("code") if isinstance(error, dict) else None
        error = document.get("error")
        return error.get("code") if isinstance(error, dict) else None


def wire_problems(sent: Sent) -> list[str]:
    """Why ``sent`` is not an acceptable answer to hostile input (empty when it is)."""
    problems = []
    if sent.status >= 500:
        problems.append(f"HTTP {sent.status}")
    if sent.code in ("INTERNAL_ERROR", -32603, 0):
        problems.append(f"internal error code {sent.code!r}")
    text = sent.body.decode("utf-8", "replace")
    problems.extend(f"exception text {marker!r}" for marker in EXCEPTION_TEXT if marker in text)
    return problems


def envelope(method: str, params: Any, request_id: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def era_headers(
    era: str, session_id: str | None, method: str = "tools/call", name: str | None = None
) -> dict[str, str]:
    """The headers of one request in ``era`` (2025-11-25: on ``session_id`` when given)."""
    headers = {**ACCEPT, "Content-Type": "application/json", "Authorization": f"Bearer {NOUR_KEY}"}
    if era == MODERN:
        headers |= {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
        if name is not None:
            headers["Mcp-Name"] = name
    elif session_id is not None:
        headers |= {"MCP-Protocol-Version": LEGACY, "Mcp-Session-Id": session_id}
    return headers


def tool_call(era: str, name: Any, arguments: Any) -> bytes:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if era == MODERN:
        params["_meta"] = META
    return json.dumps(envelope("tools/call", params)).encode()


def raw_tool_call(era: str, name: str, arguments_json: str) -> bytes:
    """A tools/call whose arguments are given as JSON text (for what ``json.dumps`` would refuse to write)."""
    meta = f',"_meta":{json.dumps(META)}' if era == MODERN else ""
    params = f'{{"name":"{name}","arguments":{arguments_json}{meta}}}'
    return f'{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}'.encode()


async def chunks(total: int, size: int = 64 * 1024) -> AsyncIterator[bytes]:
    """A body sent in chunks, with no Content-Length (Transfer-Encoding: chunked on a real socket)."""
    for _ in range(total // size):
        yield b" " * size


def wire(headers: Mapping[str, str | bytes]) -> list[tuple[bytes, bytes]]:
    """Headers as the bytes sent (str as Latin-1, bytes as they are: some tests send bytes that are not text)."""
    return [(k.encode(), v if isinstance(v, bytes) else v.encode("latin-1")) for k, v in headers.items()]


async def post(
    http: httpx2.AsyncClient,
    body: bytes | Callable[[], AsyncIterator[bytes]],
    headers: Mapping[str, str | bytes],
) -> Sent:
    content = body() if callable(body) else body
    response = await http.post("/mcp", content=content, headers=wire(headers))
    return Sent(int(response.status_code), response.content, dict(response.headers))


async def open_session(http: httpx2.AsyncClient, authorization: str | bytes = f"Bearer {NOUR_KEY}") -> str:
    """A 2025-11-25 session (``initialize``, then ``notifications/initialized``) opened with ``authorization``."""
    init = envelope(
        "initialize", {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "hostile", "version": "1"}}
    )
    headers: dict[str, str | bytes] = {**era_headers(LEGACY, None), "Authorization": authorization}
    opened = await post(http, json.dumps(init).encode(), headers)
    assert opened.status == 200, opened.body
    session_id = opened.headers["mcp-session-id"]
    headers = {**era_headers(LEGACY, session_id), "Authorization": authorization}
    done = await post(http, b'{"jsonrpc":"2.0","method":"notifications/initialized"}', headers)
    assert done.status == 202, done.body
    return session_id


async def a_normal_call_succeeds(http: httpx2.AsyncClient, era: str, session_id: str | None) -> bool:
    sent = await post(
        http,
        tool_call(era, "file_ticket", {"subject": "still serving"}),
        era_headers(era, session_id, name="file_ticket"),
    )
    document = sent.document
    return (
        sent.status == 200
        and isinstance(document, dict)
        and document.get("result", {}).get("structuredContent", {}).get("subject") == "still serving"
    )


@asynccontextmanager
async def serving_in_process(
    server: Server, base_url: str = "http://127.0.0.1:8000"
) -> AsyncIterator[httpx2.AsyncClient]:
    """The server's real HTTP app with its lifespan running, and a raw client with no default headers."""
    asgi = server.http_app()
    transport = httpx2.ASGITransport(app=asgi)
    async with asgi.router.lifespan_context(asgi), httpx2.AsyncClient(transport=transport, base_url=base_url) as http:
        yield http
