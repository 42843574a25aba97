"""One server, several names: the metadata names the address the client used, and a token is good only there.

A server configured as ``http://127.0.0.1:8000/mcp`` is also reached as ``http://localhost:8000/mcp`` and
``http://[::1]:8000/mcp`` (the names its Host check allows on loopback). The official client refuses metadata
whose ``resource`` is not the URL it used, and asks tokens for that URL; so the server reflects the name, never
one the Host check refuses, never at another port, and checks a token's ``aud`` against the name it arrived at.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import jwt
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth_utils import check_resource_allowed, resource_url_from_server_url
from starlette.types import ASGIApp

from core._support import ACCEPT, JWT_SECRET, LEGACY, MODERN, URL, IdentityApp, bearer
from mcpkit import JWTAuth, Server
from mcpkit.auth import ResourceMetadata
from mcpkit.auth._resource_names import resource_names

ISSUER = "http://127.0.0.1:9000/"
LOOPBACK_NAMES = ("127.0.0.1:8000", "localhost:8000", "[::1]:8000")
WELL_KNOWN = "/.well-known/oauth-protected-resource/mcp"


def oauth_server() -> Server:
    return Server([IdentityApp], auth=JWTAuth(secret=JWT_SECRET, issuer=ISSUER), resource_url=URL)


def token_for(audience: str, sub: str = "nour") -> str:
    claims = {"sub": sub, "iss": ISSUER, "aud": audience, "exp": int(time.time()) + 600}
    return jwt.encode(claims, JWT_SECRET, algorithm="HS256")


@asynccontextmanager
async def serving(asgi: ASGIApp) -> AsyncIterator[ASGIApp]:
    async with asgi.router.lifespan_context(asgi):  # type: ignore[attr-defined]
        yield asgi


def raw(asgi: ASGIApp, host: str, token: str | None = None) -> httpx2.AsyncClient:
    """A plain HTTP client that reaches ``asgi`` as ``http://{host}`` (that is its Host header)."""
    transport = httpx2.ASGITransport(app=asgi)
    return httpx2.AsyncClient(transport=transport, base_url=f"http://{host}", headers=bearer(token))


@asynccontextmanager
async def client_at(asgi: ASGIApp, host: str, token: str, era: str) -> AsyncIterator[Client]:
    """The official client connected to ``http://{host}/mcp``."""
    http = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=asgi), headers=bearer(token), timeout=30)
    mode = MODERN if era == MODERN else "legacy"
    async with http, Client(streamable_http_client(f"http://{host}/mcp", http_client=http), mode=mode) as client:
        yield client


@pytest.mark.parametrize("host", LOOPBACK_NAMES)
async def test_the_metadata_and_the_401_name_the_address_the_client_used(host: str) -> None:
    async with serving(oauth_server().http_app()) as asgi, raw(asgi, host) as http:
        refused = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=ACCEPT)
        metadata = (await http.get(WELL_KNOWN)).json()

    assert refused.status_code == 401
    assert f'resource_metadata="http://{host}{WELL_KNOWN}"' in refused.headers["www-authenticate"]
    assert metadata["resource"] == f"http://{host}/mcp"
    assert metadata["authorization_servers"] == [ISSUER]
    # the official client's own check (RFC 8707) passes for the URL it used
    used = resource_url_from_server_url(f"http://{host}/mcp")
    assert check_resource_allowed(requested_resource=used, configured_resource=metadata["resource"])


@pytest.mark.parametrize("host", ["evil.example:8000", "localhost:9999", "localhost", "localhost.:8000"])
async def test_a_host_not_allowed_at_this_port_gets_the_configured_resource(host: str) -> None:
    async with serving(oauth_server().http_app()) as asgi, raw(asgi, host) as http:
        metadata = (await http.get(WELL_KNOWN)).json()
        refused = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=ACCEPT)

    # never reflected: another port could be another server on this machine, and an unknown name is DNS rebinding
    assert metadata["resource"] == URL
    assert f'resource_metadata="http://127.0.0.1:8000{WELL_KNOWN}"' in refused.headers["www-authenticate"]


@pytest.mark.parametrize("era", [MODERN, LEGACY])
@pytest.mark.parametrize("host", ["LOCALHOST:8000", "LocalHost:8000"])
async def test_a_name_in_capitals_is_answered_as_its_lower_case_name(host: str, era: str) -> None:
    as_sent = {"Host": host}  # httpx would lower-case a URL's host: the header is set as a client might send it
    localhost_token, other_token = token_for("http://localhost:8000/mcp"), token_for(URL)
    async with serving(oauth_server().http_app()) as asgi, raw(asgi, "127.0.0.1:8000") as http:
        refused = await http.post(
            "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers={**ACCEPT, **as_sent}
        )
        metadata = (await http.get(WELL_KNOWN, headers=as_sent)).json()
        wrong_audience = await http.get("/mcp", headers={**ACCEPT, **as_sent, **bearer(other_token)})
        signed_in = httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=asgi), headers={**as_sent, **bearer(localhost_token)}, timeout=30
        )
        mode = MODERN if era == MODERN else "legacy"
        async with signed_in, Client(streamable_http_client(URL, http_client=signed_in), mode=mode) as client:
            result = await client.call_tool("whoami", {})

    assert metadata["resource"] == "http://localhost:8000/mcp"
    assert f'resource_metadata="http://localhost:8000{WELL_KNOWN}"' in refused.headers["www-authenticate"]
    assert wrong_audience.status_code == 401
    assert wrong_audience.json()["error"]["data"]["error_description"].endswith(
        "tokens here must be for http://localhost:8000/mcp"
    )
    assert result.structured_content is not None
    assert result.structured_content["user_id"] == "nour"


async def test_an_unknown_host_is_still_refused_even_with_a_good_token() -> None:
    async with serving(oauth_server().http_app()) as asgi, raw(asgi, "evil.example:8000", token_for(URL)) as http:
        refused = await http.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={**ACCEPT, "MCP-Protocol-Version": MODERN},
        )
    assert refused.status_code == 421  # the Host check (DNS-rebinding protection), as before


@pytest.mark.parametrize("era", [MODERN, LEGACY])
@pytest.mark.parametrize("host", LOOPBACK_NAMES)
async def test_a_token_asked_for_the_address_used_signs_in_there(era: str, host: str) -> None:
    async with (
        serving(oauth_server().http_app()) as asgi,
        client_at(asgi, host, token_for(f"http://{host}/mcp"), era) as c,
    ):
        result = await c.call_tool("whoami", {})
    assert result.structured_content is not None
    assert result.structured_content["user_id"] == "nour"


@pytest.mark.parametrize("era", [MODERN, LEGACY])
async def test_a_token_for_localhost_is_refused_at_127_0_0_1_saying_which_resource_this_is(era: str) -> None:
    localhost_token = token_for("http://localhost:8000/mcp")
    async with serving(oauth_server().http_app()) as asgi:
        async with raw(asgi, "127.0.0.1:8000", localhost_token) as http:
            refused = await http.get(WELL_KNOWN.replace(WELL_KNOWN, "/mcp"), headers=ACCEPT)
        with pytest.raises(ExceptionGroup) as raised:
            async with client_at(asgi, "127.0.0.1:8000", localhost_token, era) as client:
                await client.call_tool("whoami", {})

    why = "The bearer token was refused: token audience is not accepted: tokens here must be for " + URL
    assert refused.status_code == 401
    assert refused.json()["error"]["data"] == {"error": "invalid_token", "error_description": why}
    assert refused.headers["www-authenticate"].startswith(
        f'Bearer realm="mcp", resource_metadata="http://127.0.0.1:8000{WELL_KNOWN}", error="invalid_token"'
    )
    assert raised.group_contains(MCPError, match=f"^invalid_token: {why}$")


async def test_a_token_for_127_0_0_1_is_refused_at_localhost() -> None:
    async with serving(oauth_server().http_app()) as asgi, raw(asgi, "localhost:8000", token_for(URL)) as http:
        refused = await http.get("/mcp", headers=ACCEPT)
    assert refused.status_code == 401
    assert refused.json()["error"]["data"]["error_description"].endswith(
        "tokens here must be for http://localhost:8000/mcp"
    )


async def test_an_authenticator_with_its_own_audience_keeps_it_at_every_name() -> None:
    audience = "https://helpdesk.example/api"
    auth = JWTAuth(secret=JWT_SECRET, issuer=ISSUER, audience=audience)
    server = Server([IdentityApp], auth=auth, resource_url=URL)
    async with serving(server.http_app()) as asgi:
        for host in LOOPBACK_NAMES:
            async with client_at(asgi, host, token_for(audience), MODERN) as client:
                result = await client.call_tool("whoami", {})
                assert result.structured_content is not None
                assert result.structured_content["user_id"] == "nour"


def metadata(resource: str) -> ResourceMetadata:
    return ResourceMetadata(resource, ("https://login.example.com",))


@pytest.mark.parametrize(
    ("resource", "allowed", "expected"),
    [
        # a name with any port: at the configured one only
        ("http://127.0.0.1:8000/mcp", ["127.0.0.1:*", "localhost:*"], {"localhost:8000": "http://localhost:8000/mcp"}),
        # a name with a port: when it is the configured one
        ("https://mcp.example.com:8443/mcp", ["mcp.example.com:8443", "api.example.com:9443"], {}),
        (
            "https://mcp.example.com:8443/mcp",
            ["api.example.com:8443"],
            {"api.example.com:8443": "https://api.example.com:8443/mcp"},
        ),
        # a name without a port: at the scheme's default port
        (
            "https://mcp.example.com/mcp",
            ["mcp.example.com", "api.example.com"],
            {"api.example.com": "https://api.example.com/mcp"},
        ),
        ("https://mcp.example.com/mcp", ["api.example.com:*"], {"api.example.com:443": "https://api.example.com/mcp"}),
        # http beyond loopback is no OAuth resource; an entry that is no host is skipped
        ("http://127.0.0.1:8000/mcp", ["lan-box.example:*", "a b:*", "x:notaport"], {}),
    ],
)
def test_the_names_reflected_are_the_allowed_hosts_at_the_configured_port(
    resource: str, allowed: list[str], expected: dict[str, Any]
) -> None:
    names = resource_names(metadata(resource), allowed)
    others = {host: m.resource for host, m in names.by_host.items() if m.resource != resource}
    assert others == expected
    assert names.at("evil.example") is names.configured
    for host, named in names.by_host.items():
        assert names.at(host.upper()) is named
    assert names.at(None) is names.configured
    assert names.resources[0] == resource
