"""``server.http_app()``: MCP at /mcp, loopback by default with DNS-rebinding protection, a new app per call."""

from __future__ import annotations

import dataclasses
import inspect
import re
from typing import Any, get_type_hints

import httpx2
import pytest

from core._support import IdentityApp, call_modern, post_modern, running, structured
from mcpkit import ConfigurationError, Server
from mcpkit._cli import parser
from mcpkit.http import HttpOptions


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
    args = parser().parse_args(["run", "x.py:server"])
    assert (args.host, args.port, args.stdio) == ("127.0.0.1", 8000, False)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "mcp.example.com"])
def test_listening_beyond_loopback_without_allowed_hosts_is_refused_saying_what_to_pass(host: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        open_server().http_app(host=host)

    message = str(refused.value)
    assert message.startswith(f"The server would listen on {host!r} (beyond loopback) without checking the Host")
    assert "allowed_hosts=['mcp.example.com']" in message
    assert "--allowed-host" in message


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "127.0.0.2"])
async def test_every_loopback_address_checks_host_and_origin_by_itself(host: str) -> None:
    params = {"name": "whoami", "arguments": {}}
    async with running(open_server().http_app(host=host)) as http:
        own = await post_modern(http, "tools/call", params, name="whoami")
        foreign_page = await post_modern(
            http, "tools/call", params, name="whoami", headers={"Origin": "http://evil.example"}
        )
        foreign_host = await post_modern(http, "tools/call", params, name="whoami", headers={"Host": "evil.example"})

    assert structured(own)["kind"] == "anonymous"
    assert foreign_page.status_code == 403
    assert foreign_host.status_code == 421


async def test_behind_a_real_hostname_a_foreign_browser_origin_gets_403_and_native_clients_pass() -> None:
    asgi = open_server().http_app(host="0.0.0.0", allowed_hosts=["mcp.example.com"])
    params = {"name": "whoami", "arguments": {}}
    async with running(asgi) as http:

        async def post(**headers: str) -> httpx2.Response:
            return await post_modern(
                http, "tools/call", params, name="whoami", headers={"Host": "mcp.example.com", **headers}
            )

        native = await post()
        own_page = await post(Origin="https://mcp.example.com")
        foreign = await post(Origin="https://evil.example")
        wrong_host = await post_modern(http, "tools/call", params, name="whoami", headers={"Host": "127.0.0.1:8000"})

    assert structured(native)["kind"] == "anonymous"
    assert structured(own_page)["kind"] == "anonymous"
    assert foreign.status_code == 403
    assert foreign.json()["error"]["message"].startswith(
        "Requests from the web page origin 'https://evil.example' are refused (DNS-rebinding protection)."
    )
    assert wrong_host.status_code == 421
    assert "does not answer to the Host '127.0.0.1:8000'" in wrong_host.json()["error"]["message"]


async def test_allowed_origins_names_the_browser_pages_that_may_call() -> None:
    asgi = open_server().http_app(allowed_origins=["https://app.example.com"])
    params = {"name": "whoami", "arguments": {}}
    async with running(asgi) as http:
        app_page = await post_modern(
            http, "tools/call", params, name="whoami", headers={"Origin": "https://app.example.com"}
        )
        local_page = await post_modern(
            http, "tools/call", params, name="whoami", headers={"Origin": "http://127.0.0.1:8000"}
        )

    assert structured(app_page)["kind"] == "anonymous"
    assert local_page.status_code == 403


@pytest.mark.parametrize("listed", ["mcp.example.com", "MCP.Example.COM"])
@pytest.mark.parametrize("sent", ["mcp.example.com", "Mcp.Example.com", "MCP.EXAMPLE.COM:443"])
async def test_host_names_compare_whatever_their_case_as_dns_does(listed: str, sent: str) -> None:
    asgi = open_server().http_app(host="0.0.0.0", allowed_hosts=[listed, "mcp.example.com:443"])
    params = {"name": "whoami", "arguments": {}}
    async with running(asgi) as http:
        own_page = await post_modern(
            http, "tools/call", params, name="whoami", headers={"Host": sent, "Origin": "HTTPS://Mcp.Example.COM"}
        )
        dotted = await post_modern(http, "tools/call", params, name="whoami", headers={"Host": "mcp.example.com."})

    assert structured(own_page)["kind"] == "anonymous"
    # a trailing dot names another host, for browsers (another origin) and OAuth clients (another resource) alike
    assert dotted.status_code == 421
    assert "does not answer to the Host 'mcp.example.com.'" in dotted.json()["error"]["message"]


async def test_a_name_in_unicode_is_allowed_as_clients_send_it() -> None:
    asgi = open_server().http_app(
        host="0.0.0.0", allowed_hosts=["Bücher.example"], allowed_origins=["https://bücher.example"]
    )
    params = {"name": "whoami", "arguments": {}}
    async with running(asgi) as http:
        ascii_form = await post_modern(
            http,
            "tools/call",
            params,
            name="whoami",
            headers={"Host": "xn--bcher-kva.example", "Origin": "https://xn--bcher-kva.example"},
        )
        official = await http.post(  # httpx, as the official client, writes the name in its IDNA form
            "http://bücher.example/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"},
        )

    assert structured(ascii_form)["kind"] == "anonymous"
    assert official.request.headers["host"] == "xn--bcher-kva.example"
    assert official.status_code == 400  # past the Host check: told to initialize first
    assert "initialize" in official.json()["error"]["message"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"allowed_hosts": "mcp.example.com"}, "allowed_hosts is a list of strings, not one string"),
        ({"allowed_hosts": []}, "allowed_hosts=[] would refuse every request"),
        ({"allowed_hosts": ["https://mcp.example.com"]}, "allowed_hosts entry 'https://mcp.example.com' is not a host"),
        ({"allowed_origins": ["app.example.com"]}, "allowed_origins entry 'app.example.com' is not an origin"),
        ({"allowed_hosts": ["☃.example"]}, "allowed_hosts entry '☃.example' is not a host name"),
        ({"allowed_origins": ["https://☃.example:*"]}, "allowed_origins entry '☃.example:*' is not a host name"),
    ],
)
def test_unusable_host_and_origin_lists_are_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match="^" + re.escape(message)):
        open_server().http_app(**options)


async def test_a_2025_request_without_a_session_is_told_to_initialize_first_or_how_to_use_2026() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    async with running(open_server().http_app()) as http:
        response = await http.post("/mcp", json=message, headers=headers)

    assert response.status_code == 400
    assert "mcp-session-id" not in response.headers
    text = response.json()["error"]["message"]
    assert text.startswith("No 'Mcp-Session-Id': on protocol 2025-11-25 send 'initialize' first")
    assert "send the header 'MCP-Protocol-Version: 2026-07-28'" in text


def test_run_and_http_app_take_every_http_option_with_the_same_type_and_default() -> None:
    options = {option.name: option for option in dataclasses.fields(HttpOptions)}
    hints = get_type_hints(HttpOptions)
    for method in (Server.http_app, Server.run):
        taken = inspect.signature(method).parameters
        method_hints = get_type_hints(method)
        assert set(options) <= set(taken), f"{method.__name__} lacks {sorted(set(options) - set(taken))}"
        for name, option in options.items():
            assert taken[name].kind is inspect.Parameter.KEYWORD_ONLY, (method.__name__, name)
            assert taken[name].default == option.default, (method.__name__, name)
            assert method_hints[name] == hints[name], (method.__name__, name)
    http_app_takes = set(inspect.signature(Server.http_app).parameters) - {"self"}
    assert http_app_takes == set(options), "an option of http_app that HttpOptions lacks would not reach the app"


def test_run_checks_stream_retry_ms_as_http_app_does_before_it_binds_a_port() -> None:
    with pytest.raises(
        ConfigurationError, match="stream_retry_ms is a whole number of milliseconds from 1 to 600,000; not 0"
    ):
        open_server().run("http", port=0, json_response=False, stream_retry_ms=0)
