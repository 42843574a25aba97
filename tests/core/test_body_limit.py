"""The request body limit: 256 KiB by default, what a plugin needs, or ``max_body_bytes``; 413 says what to do.

Bodies are sent as raw bytes through ``server.http_app()``, with ``Content-Length`` and chunked (an
async iterator: no ``Content-Length``), in both protocol eras; and over real sockets to ``mcpkit run``,
where a body arrives in pieces, to see that the 413 comes before the rest of an oversized body is sent.
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest

from core._served import connect, mcpkit_run, read_response
from core._support import ACCEPT, LEGACY, MODERN, NOUR_KEY, bearer, body_of, open_legacy_session, running
from mcpkit import ConfigurationError, Plugin, Server, StaticKeys, ToolContext, app, tool
from mcpkit_remember import RememberPlugin

DEFAULT_LIMIT = 256 * 1024


@tool(name="echo", description="Answers with the length of the text it was given.")
class Echo(ToolContext):
    async def execute(self, text: str) -> dict[str, int]:
        return {"length": len(text)}


@tool(name="keep", description="Remembers a value for the caller.")
class Keep(ToolContext):
    async def execute(self, value: str) -> dict[str, bool]:
        await self.remember.set("kept", value, scope="user")
        return {"kept": await self.remember.get("kept", scope="user") == value}


class Uploads(Plugin):
    """A plugin whose tools take requests of up to 1 MiB."""

    def max_request_bytes(self) -> int:
        return 1024 * 1024


@app(id="echo", tools=[Echo])
class EchoApp: ...


@app(id="keeping", tools=[Keep], plugins=[RememberPlugin.init(type="memory")])
class KeepingApp: ...


def make_server(*plugins: Plugin) -> Server:
    return Server([EchoApp, KeepingApp], auth=StaticKeys({"nour": NOUR_KEY}), plugins=plugins)


def call_body(era: str, size: int) -> bytes:
    """A ``tools/call`` of ``echo``, padded with JSON whitespace to exactly ``size`` bytes."""
    params: dict[str, Any] = {"name": "echo", "arguments": {"text": "x"}}
    if era == MODERN:
        params["_meta"] = {types.PROTOCOL_VERSION_META_KEY: MODERN, types.CLIENT_CAPABILITIES_META_KEY: {}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).encode()
    assert len(body) <= size
    return body + b" " * (size - len(body))


def era_headers(era: str, session_id: str | None) -> dict[str, str]:
    headers = {**ACCEPT, **bearer(NOUR_KEY), "Content-Type": "application/json"}
    if era == MODERN:
        return {**headers, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "echo"}
    assert session_id is not None
    return {**headers, "MCP-Protocol-Version": LEGACY, "Mcp-Session-Id": session_id}


async def in_chunks(body: bytes, size: int = 16 * 1024) -> AsyncIterator[bytes]:
    for start in range(0, len(body), size):
        yield body[start : start + size]


async def send(http: httpx2.AsyncClient, era: str, size: int, chunked: bool) -> httpx2.Response:
    session_id = await open_legacy_session(http, token=NOUR_KEY) if era == LEGACY else None
    body = call_body(era, size)
    content: bytes | AsyncIterator[bytes] = in_chunks(body) if chunked else body
    return await http.post("/mcp", content=content, headers=era_headers(era, session_id))


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
@pytest.mark.parametrize("era", [MODERN, LEGACY])
async def test_a_body_at_the_default_limit_is_served_and_one_byte_more_gets_413(era: str, chunked: bool) -> None:
    async with running(make_server().http_app()) as http:
        at_limit = await send(http, era, DEFAULT_LIMIT, chunked)
        over = await send(http, era, DEFAULT_LIMIT + 1, chunked)

    assert at_limit.status_code == 200, at_limit.text
    assert body_of(at_limit)["result"]["structuredContent"] == {"length": 1}
    assert over.status_code == 413
    assert over.headers["content-type"] == "application/json"
    message = over.json()["error"]["message"]
    assert message.startswith("The request body is over this server's limit of 262,144 bytes (max_body_bytes).")


async def test_max_body_bytes_sets_the_limit() -> None:
    async with running(make_server().http_app(max_body_bytes=4096)) as http:
        at_limit = await send(http, MODERN, 4096, chunked=False)
        over = await send(http, MODERN, 4097, chunked=True)

    assert at_limit.status_code == 200
    assert over.status_code == 413
    assert "limit of 4,096 bytes" in over.json()["error"]["message"]


async def test_a_plugin_that_needs_more_raises_the_default_limit() -> None:
    async with running(make_server(Uploads()).http_app()) as http:
        large = await send(http, MODERN, 1024 * 1024, chunked=True)
        over = await send(http, MODERN, 1024 * 1024 + 1, chunked=False)

    assert large.status_code == 200
    assert over.status_code == 413


def test_max_body_bytes_below_what_a_plugin_needs_is_refused_when_the_app_is_built() -> None:
    with pytest.raises(ConfigurationError, match=r"^max_body_bytes=300,000 is below the 1,048,576 bytes Uploads"):
        make_server(Uploads()).http_app(max_body_bytes=300_000)


async def test_the_largest_value_remember_stores_by_default_fits_even_with_every_character_escaped() -> None:
    value = "é😀" * (64 * 1024 // 6)  # 6 bytes as UTF-8, 18 as JSON escapes
    assert 64 * 1024 - 6 < len(json.dumps(value, ensure_ascii=False).encode()) <= 64 * 1024  # max_value_bytes
    params = {
        "name": "keep",
        "arguments": {"value": value},
        "_meta": {types.PROTOCOL_VERSION_META_KEY: MODERN, types.CLIENT_CAPABILITIES_META_KEY: {}},
    }
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).encode()  # ASCII
    headers = {**era_headers(MODERN, None), "Mcp-Name": "keep"}
    async with running(make_server().http_app()) as http:
        response = await http.post("/mcp", content=body, headers=headers)

    assert len(body) > 3 * 64 * 1024 - 100
    assert body_of(response)["result"]["structuredContent"] == {"kept": True}


# -- over real sockets: an oversized body is refused before it has arrived ---------------------------------

#: The start of a call whose text holds a lone surrogate escape: a body the lone-surrogate guard would examine.
SURROGATE_CALL = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"\\ud800'
POST_HEAD = (
    "POST /mcp HTTP/1.1",
    "Host: 127.0.0.1",
    "Content-Type: application/json",
    "Accept: application/json, text/event-stream",
    "MCP-Protocol-Version: 2026-07-28",
    "Mcp-Method: tools/call",
    "Mcp-Name: echo",
)


def answer_to_a_part(sock: socket.socket, head: list[str], sent: bytes) -> bytes:
    """Send ``head`` and the ``sent`` part of a body whose rest never comes; the response, if any comes."""
    sock.sendall("\r\n".join([*head, "", ""]).encode() + sent)
    try:
        return read_response(sock)
    except TimeoutError:
        return b"<no answer: the server is still reading the body>"


def chunked(body: bytes, size: int = 16 * 1024) -> bytes:
    parts = [body[start : start + size] for start in range(0, len(body), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in parts)


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
def test_a_body_over_the_limit_gets_413_before_it_has_arrived_even_with_a_lone_surrogate(
    tmp_path: Path, framing: str
) -> None:
    part = SURROGATE_CALL + b"x" * (DEFAULT_LIMIT + 16 * 1024)  # over the limit, and the rest never sent
    with mcpkit_run(tmp_path, "--read-timeout", "60") as port, connect(port) as sock:
        if framing == "content-length":  # says it is 1 MiB: refused on its head
            answer = answer_to_a_part(sock, [*POST_HEAD, f"Content-Length: {1024 * 1024}"], part[: 16 * 1024])
        else:  # says nothing: refused once the limit is passed
            answer = answer_to_a_part(sock, [*POST_HEAD, "Transfer-Encoding: chunked"], chunked(part))

    assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]
    message = json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"]["message"]
    assert message.startswith("The request body is over this server's limit of 262,144 bytes (max_body_bytes).")
