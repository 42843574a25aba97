"""``server.http_app()``: MCP at /mcp, loopback by default with DNS-rebinding protection, a new app per call."""

from __future__ import annotations

import inspect

from core._support import IdentityApp, call_modern, post_modern, running, structured
from mcpkit import Server
from mcpkit._cli import _parser


def open_server() -> Server:
    return Server([IdentityApp], allow_anonymous=True)


async def test_mcp_is_served_at_slash_mcp_and_nothing_else() -> None:
    async with running(open_server().http_app()) as http:
        served = await call_modern(http, "whoami")
        elsewhere = await http.post("/other", json={})

    assert structured(served)["kind"] == "anonymous"
    assert elsewhere.status_code == 404


async def test_on_loopback_a_foreign_host_header_is_refused() -> None:
    async with running(open_server().http_app()) as http:
        response = await post_modern(
            http, "tools/call", {"name": "whoami", "arguments": {}}, name="whoami", headers={"Host": "evil.example"}
        )

    assert response.status_code == 421
    assert "whoami" not in response.text


async def test_on_loopback_a_foreign_origin_is_refused() -> None:
    async with running(open_server().http_app()) as http:
        response = await post_modern(
            http,
            "tools/call",
            {"name": "whoami", "arguments": {}},
            name="whoami",
            headers={"Origin": "http://evil.example"},
        )

    assert response.status_code == 403


async def test_allowed_hosts_admits_a_real_hostname_and_only_it() -> None:
    async with running(open_server().http_app(allowed_hosts=["mcp.example.com"])) as http:
        params = {"name": "whoami", "arguments": {}}
        ours = await post_modern(http, "tools/call", params, name="whoami", headers={"Host": "mcp.example.com"})
        theirs = await post_modern(http, "tools/call", params, name="whoami", headers={"Host": "evil.example"})

    assert structured(ours)["kind"] == "anonymous"
    assert theirs.status_code == 421


async def test_each_http_app_call_builds_a_new_app_that_runs_on_its_own() -> None:
    server = open_server()
    first, second = server.http_app(), server.http_app()

    assert first is not second
    async with running(first) as http:
        assert structured(await call_modern(http, "whoami"))["kind"] == "anonymous"
    async with running(second) as http:
        assert structured(await call_modern(http, "whoami"))["kind"] == "anonymous"


def test_serving_defaults_to_loopback() -> None:
    assert inspect.signature(Server.run).parameters["host"].default == "127.0.0.1"
    assert inspect.signature(Server.http_app).parameters["host"].default == "127.0.0.1"
    args = _parser().parse_args(["run", "x.py:server"])
    assert (args.host, args.port, args.stdio) == ("127.0.0.1", 8000, False)
