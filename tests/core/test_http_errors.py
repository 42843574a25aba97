"""Every refusal of mcpkit's HTTP layer is one JSON shape, written by one module (``mcpkit/_http_errors.py``).

Each refusal is produced for real through ``server.http_app()``; the connection guard's, written on a socket
before any request is read, is pinned byte for byte.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx2

import mcpkit
from core._support import ACCEPT, LEGACY, MODERN, NOUR_KEY, SAM_KEY, IdentityApp, bearer, running
from mcpkit import Server, StaticKeys
from mcpkit.base._http_errors import raw_response

FRAMEWORK = Path(mcpkit.__file__).parent
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "errors", "version": "1"}},
}
MODERN_LIST = {**ACCEPT, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list", "Content-Type": "application/json"}


def test_no_module_but_http_errors_writes_an_error_body_of_its_own() -> None:
    writers = [
        path.name
        for path in sorted(FRAMEWORK.glob("*.py"))
        if path.name != "_http_errors.py"
        and re.search(r'"jsonrpc": "2\.0", "id": None|\{"type": "http\.response\.start", "status": ', path.read_text())
    ]

    assert writers == []


def rpc_refusal(response: httpx2.Response) -> tuple[int, int, str]:
    """Status, JSON-RPC code and message of a refusal, after checking the shape every one of them has."""
    assert response.headers["content-type"] == "application/json"
    assert int(response.headers["content-length"]) == len(response.content)
    document = json.loads(response.content)
    assert set(document) == {"jsonrpc", "id", "error"}
    assert (document["jsonrpc"], document["id"], set(document["error"])) == ("2.0", None, {"code", "message"})
    return response.status_code, document["error"]["code"], document["error"]["message"]


async def test_each_refusal_is_a_json_rpc_error_with_its_status_and_a_message_saying_what_to_do() -> None:
    keys = StaticKeys({"nour": NOUR_KEY, "sam": SAM_KEY})
    asgi = Server([IdentityApp], auth=keys).http_app(max_sessions=1, sessions_per_caller=1, max_body_bytes=1024)
    async with running(asgi) as http:
        nour, sam = {**ACCEPT, **bearer(NOUR_KEY)}, {**ACCEPT, **bearer(SAM_KEY)}
        modern = {**MODERN_LIST, **bearer(NOUR_KEY)}
        half = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"who\\ud800"}}'
        answers = {
            "too big": await http.post("/mcp", content=b" " * 2048, headers=modern),
            "foreign host": await http.post("/mcp", json={}, headers={**modern, "Host": "evil.example"}),
            "foreign page": await http.post("/mcp", json={}, headers={**modern, "Origin": "https://evil.example"}),
            "lone surrogate": await http.post("/mcp", content=half, headers=modern),
            "no session": await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=nour),
        }
        assert (await http.post("/mcp", json=INITIALIZE, headers=nour)).status_code == 200
        answers["table full"] = await http.post("/mcp", json=INITIALIZE, headers=sam)

    refusals = {name: rpc_refusal(response) for name, response in answers.items()}
    assert {name: (status, code) for name, (status, code, _) in refusals.items()} == {
        "too big": (413, -32600),
        "foreign host": (421, -32600),
        "foreign page": (403, -32600),
        "lone surrogate": (400, -32700),
        "no session": (400, -32600),
        "table full": (503, -32600),
    }
    messages = {name: message for name, (_, _, message) in refusals.items()}
    assert messages["too big"].startswith("The request body is over this server's limit of 1,024 bytes")
    assert messages["foreign host"].startswith("This server does not answer to the Host 'evil.example'")
    assert messages["foreign page"].startswith("Requests from the web page origin 'https://evil.example' are")
    assert messages["lone surrogate"] == (
        "Invalid text: the request holds a lone surrogate (half of a UTF-16 pair) at params.name."
    )
    assert messages["no session"].startswith("This request has no 'MCP-Protocol-Version' header")
    assert messages["table full"].startswith("The server's table of 2025-11-25 sessions is full")
    assert answers["table full"].headers["retry-after"] == "5"


async def test_the_auth_gates_refusals_are_json_too() -> None:
    async with running(Server([IdentityApp], auth=StaticKeys({"nour": NOUR_KEY})).http_app()) as http:
        nobody = await http.post("/mcp", json={}, headers=MODERN_LIST)
        wrong = await http.post("/mcp", json={}, headers={**MODERN_LIST, **bearer("not-a-key-at-all")})

    for response in (nobody, wrong):
        assert response.status_code == 401
        assert response.headers["content-type"] == "application/json"
        assert int(response.headers["content-length"]) == len(response.content)
        document = response.json()
        assert set(document) == {"jsonrpc", "id", "error"}  # a JSON-RPC error: what MCP clients read and show
        oauth = document["error"]["data"]  # RFC 6750's code and description, as in WWW-Authenticate
        assert document["error"]["message"] == f"{oauth['error']}: {oauth['error_description']}"
    assert nobody.headers["www-authenticate"] == 'Bearer realm="mcp"'
    assert nobody.json()["error"]["data"]["error"] == "unauthorized"
    assert wrong.json()["error"]["message"] == (
        "invalid_token: The bearer token is not a key or token this server accepts."
    )


def test_a_refusal_written_before_any_request_was_read_is_a_whole_http_response_that_closes() -> None:
    written = raw_response(503, "Busy. Retry.", [(b"retry-after", b"1")])

    body = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Busy. Retry."}}'
    assert written == (
        b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\nconnection: close\r\nretry-after: 1\r\n\r\n%s" % (len(body), body)
    )
