"""A 2026-07-28 request whose routing headers or protocol version are wrong is told which header, what it said,
what the body says and what to send: never "does not match" for a header it did not send, nor about the ``_meta``
envelope when the version is what the server does not speak (issue 36 item 7). Raw HTTP through the real app."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest

from core._support import ACCEPT, MODERN, IdentityApp, running
from mcpkit import Server

ENVELOPE = {types.PROTOCOL_VERSION_META_KEY: MODERN, types.CLIENT_CAPABILITIES_META_KEY: {}}
SPOKEN = (
    "It speaks 2026-07-28 (send 'MCP-Protocol-Version: 2026-07-28' and the same version in "
    "params._meta['io.modelcontextprotocol/protocolVersion']) and, with an 'initialize' handshake first, "
    "2025-11-25, 2025-06-18, 2025-03-26 and 2024-11-05."
)


def request(method: str, params: dict[str, Any] | None = None, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    sent = {**(params or {}), "_meta": ENVELOPE if meta is None else meta}
    return {"jsonrpc": "2.0", "id": 7, "method": method, "params": sent}


async def refused(body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    """The status and the JSON-RPC error of one POST to an open server (the id is the request's)."""
    async with running(Server([IdentityApp], allow_anonymous=True).http_app()) as http:
        response = await http.post("/mcp", json=body, headers={**ACCEPT, **headers})
    document = response.json()
    assert document["id"] == body.get("id")
    return response.status_code, document["error"]


async def test_a_missing_mcp_method_header_is_called_missing_and_the_method_to_send_named() -> None:
    status, error = await refused(request("tools/list"), {"MCP-Protocol-Version": MODERN})

    assert (status, error["code"]) == (400, -32020)
    assert error["message"] == (
        "This request has no Mcp-Method header, which on protocol 2026-07-28 repeats the body's method: "
        "send 'Mcp-Method: tools/list'."
    )


async def test_an_mcp_method_header_that_differs_names_both_methods() -> None:
    status, error = await refused(request("tools/list"), {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call"})

    assert (status, error["code"]) == (400, -32020)
    assert error["message"] == (
        "The Mcp-Method header says 'tools/call' but the body's method is 'tools/list': send 'Mcp-Method: tools/list'."
    )


@pytest.mark.parametrize(
    ("name", "header", "message"),
    [
        (
            "whoami",
            None,
            "This request has no Mcp-Name header, which on protocol 2026-07-28 repeats params.name: "
            "send 'Mcp-Name: whoami'.",
        ),
        ("whoami", "who", "The Mcp-Name header says 'who' but params.name is 'whoami': send 'Mcp-Name: whoami'."),
        (
            "café",
            None,
            "This request has no Mcp-Name header, which on protocol 2026-07-28 repeats params.name: send "
            "'Mcp-Name: =?base64?Y2Fmw6k=?=' (base64 in '=?base64?...?=', as a value that is not plain ASCII must be).",
        ),
        (
            "x" * 101,
            None,
            "This request has no Mcp-Name header, which on protocol 2026-07-28 repeats params.name: send params.name "
            "in the Mcp-Name header.",
        ),
    ],
)
async def test_an_mcp_name_header_missing_or_differing_says_so_and_what_to_send(
    name: str, header: str | None, message: str
) -> None:
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call"}
    if header is not None:
        headers["Mcp-Name"] = header

    status, error = await refused(request("tools/call", {"name": name, "arguments": {}}), headers)

    assert (status, error["code"], error["message"]) == (400, -32020, message)


async def test_a_version_header_and_envelope_that_differ_are_both_named() -> None:
    meta = {**ENVELOPE, types.PROTOCOL_VERSION_META_KEY: "2025-11-25"}
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"}

    status, error = await refused(request("tools/list", meta=meta), headers)

    assert (status, error["code"]) == (400, -32020)
    assert error["message"] == (
        "The MCP-Protocol-Version header says '2026-07-28' but params._meta['io.modelcontextprotocol/protocolVersion'] "
        "says '2025-11-25': send the same version in both."
    )


@pytest.mark.parametrize(
    "meta",
    [
        pytest.param(None, id="with the envelope of 2026-07-28"),
        pytest.param({}, id="without an envelope"),
        pytest.param({**ENVELOPE, types.PROTOCOL_VERSION_META_KEY: "2027-01-01"}, id="with the same version"),
    ],
)
async def test_a_protocol_version_not_spoken_is_named_with_the_versions_that_are(meta: dict[str, Any] | None) -> None:
    headers = {"MCP-Protocol-Version": "2027-01-01", "Mcp-Method": "tools/list"}

    status, error = await refused(request("tools/list", meta=meta), headers)

    assert (status, error["code"]) == (400, -32022)
    assert error["message"] == (
        f"This request's MCP-Protocol-Version header names '2027-01-01', not a protocol version this server speaks. "
        f"{SPOKEN}"
    )
    assert error["data"] == {"supported": ["2026-07-28"], "requested": "2027-01-01"}  # what negotiating clients read


async def test_an_empty_version_header_on_a_notification_is_called_empty() -> None:
    notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}

    status, error = await refused(notification, {"MCP-Protocol-Version": ""})

    assert (status, error["code"]) == (400, -32022)
    assert error["message"] == (
        f"This request's MCP-Protocol-Version header is empty, not a protocol version this server speaks. {SPOKEN}"
    )


async def test_a_request_with_its_headers_right_is_answered() -> None:
    async with running(Server([IdentityApp], allow_anonymous=True).http_app()) as http:
        headers = {**ACCEPT, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "whoami"}
        response = await http.post("/mcp", json=request("tools/call", {"name": "whoami"}), headers=headers)

    assert response.status_code == 200, response.text
