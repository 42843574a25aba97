"""Scopes per tool: a token without them gets 403 insufficient_scope naming them (step-up), in both eras;
the tool call itself holds whatever the headers say; static keys and stdio are not limited by scope.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

import anyio
import jwt
import pytest
from mcp.client.auth.utils import extract_resource_metadata_from_www_auth, extract_scope_from_www_auth

import mcpkit.auth._gate as gate
from core._support import (
    ACCEPT,
    JWT_SECRET,
    MODERN,
    NOUR_KEY,
    URL,
    body_of,
    call_legacy,
    call_modern,
    open_legacy_session,
    post_modern,
    running,
    structured,
)
from mcpkit import ConfigurationError, JWTAuth, Server, StaticKeys, ToolContext, app, tool

ISSUER = "http://127.0.0.1:9000/"


@tool(name="list_tickets", description="List the open tickets.")
class ListTickets(ToolContext):
    async def execute(self) -> dict[str, Any]:
        scopes = self.caller.scopes
        return {"tickets": ["T-1"], "scopes": None if scopes is None else sorted(scopes)}


@tool(name="close_ticket", description="Close a ticket.", scopes=["tickets:write"])
class CloseTicket(ToolContext):
    async def execute(self, ticket: str) -> dict[str, str]:
        return {"closed": ticket}


@app(id="tickets", tools=[ListTickets, CloseTicket])
class TicketsApp: ...


def make_server(*, allow_anonymous: bool = False) -> Server:
    auth = [JWTAuth(secret=JWT_SECRET, issuer=ISSUER), StaticKeys({"nour": NOUR_KEY})]
    return Server([TicketsApp], auth=auth, resource_url=URL, allow_anonymous=allow_anonymous)


def token(claims: Mapping[str, Any]) -> str:
    full = {"sub": "sam", "iss": ISSUER, "aud": URL, "exp": int(time.time()) + 600, **claims}
    return jwt.encode(full, JWT_SECRET, algorithm="HS256")


CLOSE = {"ticket": "T-1"}


async def test_a_token_without_the_scope_gets_403_naming_it_and_with_it_the_call_runs() -> None:
    async with running(make_server().http_app()) as http:
        refused = await call_modern(http, "close_ticket", CLOSE, token=token({"scope": "tickets:read"}))
        assert refused.status_code == 403
        challenge = refused.headers["www-authenticate"]
        assert 'error="insufficient_scope"' in challenge
        assert extract_scope_from_www_auth(refused) == "tickets:write"  # what the official client asks for next
        assert extract_resource_metadata_from_www_auth(refused) is not None
        assert refused.json()["error"]["data"]["error"] == "insufficient_scope"
        assert "tickets:write" in refused.json()["error"]["data"]["error_description"]
        closed = await call_modern(http, "close_ticket", CLOSE, token=token({"scope": "tickets:read tickets:write"}))
        assert structured(closed) == {"closed": "T-1"}
        listed = await call_modern(http, "list_tickets", token=token({"scp": ["tickets:write", "profile"]}))
        assert structured(listed)["scopes"] == ["profile", "tickets:write"]  # self.caller.scopes
        by_scp = await call_modern(http, "close_ticket", CLOSE, token=token({"scp": ["tickets:write"]}))
        assert structured(by_scp) == {"closed": "T-1"}


async def test_on_2025_11_25_the_gate_reads_the_tool_from_the_body() -> None:
    async with running(make_server().http_app()) as http:
        without = token({"scope": "tickets:read"})
        session = await open_legacy_session(http, token=without)
        refused = await call_legacy(http, session, "close_ticket", CLOSE, token=without)
        assert refused.status_code == 403
        assert extract_scope_from_www_auth(refused) == "tickets:write"
        allowed = await call_legacy(http, session, "list_tickets", token=without)  # the body was replayed whole
        assert structured(allowed)["tickets"] == ["T-1"]
        granted = token({"scope": "tickets:write"})
        other = await open_legacy_session(http, token=granted)
        assert structured(await call_legacy(http, other, "close_ticket", CLOSE, token=granted)) == {"closed": "T-1"}


@pytest.mark.parametrize(
    "headers",
    [
        {"Mcp-Name": "list_tickets"},  # another tool's name
        {"Mcp-Name": "=?base64?Y2xvc2VfdGlja2V0?="},  # close_ticket, base64 as the SDK allows
        {"Mcp-Method": "tools/list", "Mcp-Name": "list_tickets"},
    ],
)
async def test_headers_never_decide_which_tool_the_gate_checks(headers: dict[str, str]) -> None:
    async with running(make_server().http_app()) as http:
        reader = token({"scope": "tickets:read"})
        params = {"name": "close_ticket", "arguments": CLOSE}
        modern = await post_modern(http, "tools/call", params, token=reader, headers=headers)
        assert modern.status_code == 403, modern.text
        session = await open_legacy_session(http, token=reader)
        message = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params}
        legacy_headers = {**ACCEPT, "Authorization": f"Bearer {reader}", "Mcp-Session-Id": session, **headers}
        legacy = await http.post("/mcp", json=message, headers=legacy_headers)
        assert legacy.status_code == 403, legacy.text


async def test_a_body_the_gate_cannot_read_is_answered_by_the_sdk_not_by_a_crash() -> None:
    async with running(make_server().http_app()) as http:
        reader = token({"scope": "tickets:read"})
        headers = {**ACCEPT, "Content-Type": "application/json", "Authorization": f"Bearer {reader}"}
        for body in (b"[" * 50_000, b"{not json"):
            response = await http.post("/mcp", content=body, headers=headers)
            assert response.status_code in (400, 406, 413), response.text
            assert "Traceback" not in response.text


async def test_a_body_sent_in_chunks_is_checked_and_replayed_whole() -> None:
    asgi = make_server().http_app()
    async with running(asgi):
        for scopes, expected in (("tickets:read", 403), ("tickets:write", 200)):
            session_token = token({"scope": scopes})
            message = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "close_ticket", "arguments": CLOSE, "_meta": MODERN_META},
            }
            status, body = await chunked_post(asgi, json.dumps(message).encode(), session_token)
            assert status == expected, body
            if expected == 200:
                assert b'"closed":"T-1"' in body.replace(b" ", b"")


MODERN_META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


async def chunked_post(asgi: Any, body: bytes, bearer_token: str, size: int = 7) -> tuple[int, bytes]:
    """POST ``body`` to ``/mcp`` straight through ASGI, ``size`` bytes per ``http.request`` message."""
    chunks = [body[at : at + size] for at in range(0, len(body), size)]
    incoming = [
        {"type": "http.request", "body": chunk, "more_body": number < len(chunks) - 1}
        for number, chunk in enumerate(chunks)
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if incoming:
            return incoming.pop(0)
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"authorization", f"Bearer {bearer_token}".encode()),
        (b"mcp-protocol-version", MODERN.encode()),
        (b"mcp-method", b"tools/call"),
        (b"mcp-name", b"close_ticket"),
    ]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }
    with anyio.fail_after(10):
        await asgi(scope, receive, send)
    status = next(message["status"] for message in sent if message["type"] == "http.response.start")
    return status, b"".join(message.get("body", b"") for message in sent if message["type"] == "http.response.body")


async def test_static_keys_are_not_limited_by_scope_and_anonymous_callers_are_asked_to_sign_in() -> None:
    async with running(make_server(allow_anonymous=True).http_app()) as http:
        closed = await call_modern(http, "close_ticket", CLOSE, token=NOUR_KEY)
        assert structured(closed) == {"closed": "T-1"}
        assert structured(await call_modern(http, "list_tickets", token=NOUR_KEY))["scopes"] is None
        anonymous = await call_modern(http, "close_ticket", CLOSE)
        assert anonymous.status_code == 401
        assert extract_scope_from_www_auth(anonymous) == "tickets:write"
        assert structured(await call_modern(http, "list_tickets"))["scopes"] == []
        metadata = (await http.get("/.well-known/oauth-protected-resource/mcp")).json()
        assert metadata["scopes_supported"] == ["tickets:write"]


async def test_a_legacy_body_past_the_limit_is_left_to_the_body_limit() -> None:
    async with running(make_server().http_app(max_body_bytes=4096)) as http:
        granted = token({"scope": "tickets:read"})
        session = await open_legacy_session(http, token=granted)
        big = {"ticket": "T" * 10_000}
        headers = {**ACCEPT, "Authorization": f"Bearer {granted}", "Mcp-Session-Id": session}
        message = {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {"name": "close_ticket", "arguments": big},
        }
        response = await http.post("/mcp", json=message, headers=headers)
        assert response.status_code == 413


@pytest.mark.parametrize(
    ("scopes", "says"),
    [("tickets:write", "a list of strings"), (["tickets write"], "is not an OAuth scope"), ([""], "not an OAuth")],
)
def test_a_scope_that_is_not_one_is_refused_when_the_server_is_built(scopes: Any, says: str) -> None:
    @tool(name="bad", description="Bad.", scopes=scopes)
    class Bad(ToolContext):
        async def execute(self) -> str:
            return "x"

    @app(id="bad", tools=[Bad])
    class BadApp: ...

    with pytest.raises(ConfigurationError, match=says):
        Server([BadApp], auth=StaticKeys({"nour": NOUR_KEY}))


async def test_where_the_gate_cannot_see_the_tool_the_call_itself_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    async def blind(scope: Any, receive: Any, limit: int) -> tuple[None, None, Any]:
        return None, None, receive

    monkeypatch.setattr(gate, "_called", blind)
    async with running(make_server().http_app()) as http:
        response = await call_modern(http, "close_ticket", CLOSE, token=token({"scope": "tickets:read"}))
        result = body_of(response)["result"]
        assert result["isError"] is True
        assert "INSUFFICIENT_SCOPE" in str(result)
        assert "closed" not in str(result.get("structuredContent", ""))


async def test_tools_list_can_show_only_what_the_caller_may_call() -> None:
    auth = [JWTAuth(secret=JWT_SECRET, issuer=ISSUER), StaticKeys({"nour": NOUR_KEY})]
    hiding = Server([TicketsApp], auth=auth, resource_url=URL, allow_anonymous=True, list_permitted_tools_only=True)

    async def names(http: Any, bearer_token: str | None) -> list[str]:
        response = await post_modern(http, "tools/list", {}, token=bearer_token)
        return sorted(tool["name"] for tool in body_of(response)["result"]["tools"])

    async with running(hiding.http_app()) as http:
        assert await names(http, token({"scope": "tickets:read"})) == ["list_tickets"]
        assert await names(http, token({"scope": "tickets:write"})) == ["close_ticket", "list_tickets"]
        assert await names(http, NOUR_KEY) == ["close_ticket", "list_tickets"]  # static keys: not limited
        assert await names(http, None) == ["list_tickets"]
    async with running(make_server().http_app()) as http:  # by default every tool is listed
        assert await names(http, token({"scope": "tickets:read"})) == ["close_ticket", "list_tickets"]
    with pytest.raises(ConfigurationError, match="list_permitted_tools_only is True or False"):
        Server([TicketsApp], auth=auth, resource_url=URL, list_permitted_tools_only="yes")  # type: ignore[arg-type]
