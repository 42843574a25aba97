"""mcpkit as an OAuth protected resource: Protected Resource Metadata (RFC 9728), 401s that point at it,
and tokens bound to the server's URL (RFC 8707), checked with the official client's own discovery code.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import jwt
import pytest
from mcp.client.auth.utils import (
    build_protected_resource_metadata_discovery_urls,
    extract_resource_metadata_from_www_auth,
    handle_protected_resource_response,
)

from core._support import (
    ACCEPT,
    JWT_SECRET,
    LEGACY,
    MODERN,
    NOUR_KEY,
    URL,
    IdentityApp,
    bearer,
    call_modern,
    official_client,
    running,
    structured,
)
from mcpkit import ConfigurationError, JWTAuth, Server, StaticKeys

ISSUER = "http://127.0.0.1:9000/"
METADATA_URL = "http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def resource_server(*, audience: str | None = None, **options: Any) -> Server:
    auth = [JWTAuth(secret=JWT_SECRET, issuer=ISSUER, audience=audience), StaticKeys({"nour": NOUR_KEY})]
    return Server([IdentityApp], auth=auth, resource_url=URL, **options)


def token(claims: Mapping[str, Any]) -> str:
    return jwt.encode({"exp": int(time.time()) + 600, "iss": ISSUER, **claims}, JWT_SECRET, algorithm="HS256")


async def test_the_metadata_is_served_at_both_well_known_paths_to_anyone() -> None:
    async with running(resource_server().http_app()) as http:
        for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
            response = await http.get(path, headers={"Origin": "https://inspector.example"})
            assert response.status_code == 200, response.text
            assert response.json() == {
                "resource": URL,
                "authorization_servers": [ISSUER],
                "bearer_methods_supported": ["header"],
            }
            assert response.headers["access-control-allow-origin"] == "*"  # browser clients read it too
        preflight = await http.options(METADATA_URL, headers={"Origin": "https://inspector.example"})
        assert preflight.status_code == 204
        assert "GET" in preflight.headers["access-control-allow-methods"]
        assert "mcp-protocol-version" in preflight.headers["access-control-allow-headers"]
        assert "content-length" not in preflight.headers
        refused = await http.post(METADATA_URL, json={})
        assert refused.status_code == 405
        assert refused.json()["error"] == "method_not_allowed"


async def test_the_official_clients_discovery_finds_and_reads_it_from_a_401() -> None:
    async with running(resource_server().http_app()) as http:
        unauthorized = await call_modern(http, "whoami")
        assert unauthorized.status_code == 401
        pointed = extract_resource_metadata_from_www_auth(unauthorized)
        assert pointed == METADATA_URL
        assert build_protected_resource_metadata_discovery_urls(pointed, URL)[0] == METADATA_URL
        assert build_protected_resource_metadata_discovery_urls(None, URL)[0] == METADATA_URL  # no header: same
        metadata = await handle_protected_resource_response(await http.get(METADATA_URL))
        assert metadata is not None
        assert str(metadata.resource) == URL
        assert [str(server) for server in metadata.authorization_servers] == [ISSUER]
        bad = await call_modern(http, "whoami", token="not-a-known-key")
        assert bad.status_code == 401
        assert extract_resource_metadata_from_www_auth(bad) == METADATA_URL
        assert 'error="invalid_token"' in bad.headers["www-authenticate"]


async def test_without_resource_url_there_is_no_metadata_and_the_401_names_none() -> None:
    server = Server([IdentityApp], auth=JWTAuth(secret=JWT_SECRET, audience="mcpkit-tests"), allow_anonymous=True)
    async with running(server.http_app()) as http:
        assert (await http.get("/.well-known/oauth-protected-resource")).status_code == 404
        unauthorized = await call_modern(http, "whoami", token="not-a-known-key")
        assert unauthorized.headers["www-authenticate"].startswith('Bearer realm="mcp", error="invalid_token"')
        assert "resource_metadata" not in unauthorized.headers["www-authenticate"]


@pytest.mark.parametrize("era", [MODERN, LEGACY])
async def test_a_token_is_accepted_only_when_its_audience_is_this_server(era: str) -> None:
    asgi = resource_server().http_app()
    async with running(asgi) as http:
        for claims in ({"sub": "nour", "aud": "https://other.example/mcp"}, {"sub": "nour"}):
            if era == MODERN:
                refused = await call_modern(http, "whoami", token=token(claims))
            else:
                refused = await http.post("/mcp", json=INITIALIZE, headers={**ACCEPT, **bearer(token(claims))})
            assert refused.status_code == 401, claims
            assert refused.json()["error"]["data"]["error"] == "invalid_token"
            assert (
                "aud" in refused.json()["error"]["data"]["error_description"]
                or "audience" in refused.json()["error"]["data"]["error_description"]
            )
        async with official_client(asgi, era, token({"sub": "sam", "aud": [URL, "https://other.example"]})) as client:
            result = await client.call_tool("whoami", {})
            assert result.structured_content is not None
            assert result.structured_content["user_id"] == "sam"
        bound = resource_server().authenticators[0]
        assert isinstance(bound, JWTAuth)
        async with official_client(asgi, era, bound.issue_token("nour")) as client:  # the bound copy names it
            result = await client.call_tool("whoami", {})
            assert result.structured_content is not None
            assert result.structured_content["user_id"] == "nour"


def test_the_resource_is_served_and_bound_as_the_official_client_writes_it() -> None:
    server = Server(
        [IdentityApp], auth=JWTAuth(secret=JWT_SECRET, issuer=ISSUER), resource_url="https://MCP.Example.com:443/mcp"
    )
    assert server.resource_metadata is not None
    assert server.resource_metadata.resource == "https://mcp.example.com/mcp"
    assert server.resource_metadata.url == "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
    bound = server.authenticators[0]
    assert isinstance(bound, JWTAuth)
    assert jwt.decode(bound.issue_token("nour"), options={"verify_signature": False})["aud"] == (
        "https://mcp.example.com/mcp"
    )
    bare = Server([IdentityApp], auth=JWTAuth(secret=JWT_SECRET, issuer=ISSUER), resource_url="https://mcp.example.com")
    assert bare.resource_metadata is not None
    assert bare.resource_metadata.paths == ("/.well-known/oauth-protected-resource",)


async def test_an_explicit_audience_is_kept_and_authorization_servers_can_be_given() -> None:
    server = resource_server(
        audience="api://helpdesk",
        authorization_servers=["https://login.example.com/tenant"],
        resource_documentation="https://docs.example.com/mcp",
    )
    async with running(server.http_app()) as http:
        document = (await http.get(METADATA_URL)).json()
        assert document["authorization_servers"] == ["https://login.example.com/tenant"]
        assert document["resource_documentation"] == "https://docs.example.com/mcp"
        accepted = await call_modern(http, "whoami", token=token({"sub": "nour", "aud": "api://helpdesk"}))
        assert structured(accepted)["user_id"] == "nour"
        assert (await call_modern(http, "whoami", token=token({"sub": "nour", "aud": URL}))).status_code == 401


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"resource_url": "https://mcp.example.com/mcp", "auth": StaticKeys({"nour": NOUR_KEY})}, "no authenticator"),
        ({"resource_url": "http://mcp.example.com/mcp"}, "uses http beyond loopback"),
        ({"resource_url": "mcp.example.com/mcp"}, "not an absolute URL"),
        ({"resource_url": "https://mcp.example.com/mcp#x"}, "query or fragment"),
        ({"authorization_servers": ["https://login.example.com"]}, "needs its URL"),
        ({"resource_url": URL, "authorization_servers": "https://login.example.com"}, "not one string"),
        ({"resource_url": URL, "authorization_servers": []}, "names no authorization server"),
    ],
)
def test_what_cannot_be_published_is_refused_when_the_server_is_built(options: dict[str, Any], says: str) -> None:
    options.setdefault("auth", JWTAuth(secret=JWT_SECRET, issuer=ISSUER))
    with pytest.raises(ConfigurationError, match=says):
        Server([IdentityApp], **options)
