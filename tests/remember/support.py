"""Shared helpers of the remember tests: secrets, callers, servers and one-line tool calls."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from typing import Any

import httpx2
import jwt

from mcpkit import JWTAuth, Server, StaticKeys, ToolContext
from mcpkit.testing import CallerClient, ToolCallError
from mcpkit_remember import RememberPlugin
from mcpkit_storage.sealing._keyring import Keyring
from mcpkit_storage.stores._store import Address, Store
from remember.tools import TOOLS, make_app

SECRET = "remember-test-secret-A-0123456789"
SECRET_B = "remember-test-secret-B-9876543210"
KEYS = {"nour": "nour-key-0123456789abcdef", "sam": "sam-key-0123456789abcdef"}
JWT_SECRET = "jwt-test-secret-0123456789abcdef-0123456789"
STORES = ("memory", "sqlite", "redis", "redis-cluster")
NEW, OLD = "2026-07-28", "2025-11-25"


def static_user_id(label: str) -> str:
    """The user id StaticKeys gives the caller with ``label``'s key."""
    return "static:" + hashlib.sha256(KEYS[label].encode()).hexdigest()[:32]


def user_identity(user_id: str) -> str:
    """The identity text the plugin hashes into an owner for user scope."""
    return json.dumps(["u", user_id])


def jwt_token(sub: str, **claims: Any) -> str:
    """A JWT the test servers' JWTAuth accepts (signed here with PyJWT)."""
    return jwt.encode(
        {"sub": sub, "aud": "mcpkit-tests", "exp": int(time.time()) + 3600, **claims}, JWT_SECRET, algorithm="HS256"
    )


def build_server(plugin: RememberPlugin, tools: Sequence[type[ToolContext]] = TOOLS, *, name: str = "t") -> Server:
    """A server hosting the test tools with ``plugin``, Nour's and Sam's keys, JWTs and anonymous access."""
    return Server(
        [make_app([plugin], tuple(tools))],
        auth=[StaticKeys(KEYS), JWTAuth(secret=JWT_SECRET, audience="mcpkit-tests")],
        allow_anonymous=True,
        name=name,
    )


def plugin_of(server: Server) -> RememberPlugin:
    """The server's own copy of the plugin (tests reach into it for store-level tampering)."""
    return next(p for p in server._plugins if isinstance(p, RememberPlugin))


def address_of(server: Server, identity: str, bucket: str, key: str) -> Address:
    """Where the server's store keeps ``key`` of ``identity``'s ``bucket`` (hashed, under the primary secret)."""
    return plugin_of(server).keyring.locate(identity, bucket, key)[0]


def store_of(server: Server) -> Store:
    """The store object the server's plugin opened (its memory store, or its handle on SQLite or Redis)."""
    return plugin_of(server)._backing.store


async def mem(client: CallerClient, op: str, **arguments: Any) -> Any:
    """Call the ``mem`` test tool (or ``tool=``) and return its result."""
    name = arguments.pop("tool", "mem")
    return (await client.call(name, {"op": op, **arguments}))["result"]


async def refused(client: CallerClient, op: str, **arguments: Any) -> ToolCallError:
    """Call ``mem`` expecting an error result; return the error (with ``.code`` and ``.message``)."""
    name = arguments.pop("tool", "mem")
    try:
        result = await client.call(name, {"op": op, **arguments})
    except ToolCallError as error:
        return error
    raise AssertionError(f"{name} {op} {arguments} was not refused; it returned {result!r}")


async def post_tool_call(
    app: object, token: str | None, protocol: str, arguments: dict[str, Any], session_id: str | None = None
) -> httpx2.Response:
    """One raw tools/call POST of the ``mem`` tool, for what the SDK client would not send."""
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Mcp-Protocol-Version": protocol,
    }
    if session_id is not None:
        headers["Mcp-Session-Id"] = session_id
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    params: dict[str, Any] = {"name": "mem", "arguments": arguments}
    if protocol == NEW:
        headers |= {"Mcp-Method": "tools/call", "Mcp-Name": "mem"}
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": NEW,
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    transport = httpx2.ASGITransport(app=app)  # type: ignore[arg-type]
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
        # json.dumps escapes what UTF-8 cannot carry (a lone surrogate travels as \ud800, as any client may send)
        return await http.post("/mcp", headers=headers, content=json.dumps(request).encode())


def keyring_for(store_options: dict[str, Any], secrets: list[str]) -> Keyring:
    """A keyring for the store under test: a Redis Cluster store needs a placed one, as the plugin builds it."""
    return Keyring(secrets, placed=store_options["type"] == "redis-cluster")
