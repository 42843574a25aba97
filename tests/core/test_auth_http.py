"""The HTTP auth gate: who is calling, or 401 with WWW-Authenticate; never a silent downgrade to anonymous.

These tests send raw requests to ``server.http_app()`` (inside its lifespan) so that status codes and
headers are visible, in both protocol eras.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from typing import Any

import httpx2
import jwt
import pytest
from mcp import MCPError

from core._support import (
    ACCEPT,
    JWT_SECRET,
    LEGACY,
    MODERN,
    NOUR_KEY,
    SAM_KEY,
    IdentityApp,
    call_legacy,
    call_modern,
    official_client,
    open_legacy_session,
    post_modern,
    running,
    static_user_id,
    structured,
)
from mcpkit import Authenticator, AuthUnavailableError, Identity, JWTAuth, Server, StaticKeys

ERAS = [MODERN, LEGACY]


def make_server(*, allow_anonymous: bool = False, auth: Any = "both") -> Server:
    if auth == "both":
        auth = [StaticKeys({"nour": NOUR_KEY, "sam": SAM_KEY}), JWTAuth(secret=JWT_SECRET, audience="mcpkit-tests")]
    return Server([IdentityApp], auth=auth, allow_anonymous=allow_anonymous)


def make_jwt(claims: Mapping[str, Any], secret: str = JWT_SECRET, algorithm: str = "HS256") -> str:
    """A token with ``claims``, for the tests' audience, expiring in ten minutes unless ``claims`` say otherwise."""
    return jwt.encode({"exp": int(time.time()) + 600, "aud": "mcpkit-tests", **claims}, secret, algorithm=algorithm)


async def whoami(http: httpx2.AsyncClient, era: str, token: str | None) -> httpx2.Response:
    """Call ``whoami`` in ``era``; on 2025-11-25 the handshake is sent with the same token."""
    if era == MODERN:
        return await call_modern(http, "whoami", token=token)
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    headers = {**ACCEPT, **({} if token is None else {"Authorization": f"Bearer {token}"})}
    response = await http.post("/mcp", json=init, headers=headers)
    if response.status_code != 200:
        return response
    return await call_legacy(http, response.headers["mcp-session-id"], "whoami", token=token)


async def raw(http: httpx2.AsyncClient, era: str, headers: Mapping[str, str]) -> httpx2.Response:
    """The first request of ``era`` with exactly these extra headers (for malformed Authorization headers)."""
    if era == MODERN:
        params = {"name": "whoami", "arguments": {}}
        return await post_modern(http, "tools/call", params, name="whoami", headers=dict(headers))
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    return await http.post("/mcp", json=init, headers={**ACCEPT, **headers})


def assert_401(response: httpx2.Response, error: str | None) -> None:
    assert response.status_code == 401, response.text
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith('Bearer realm="mcp"')
    if error is not None:
        assert f'error="{error}"' in challenge
        assert response.json()["error"]["data"]["error"] == error


# -- no credentials -------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_no_credentials_without_anonymous_access_gets_401_with_www_authenticate(era: str) -> None:
    async with running(make_server().http_app()) as http:
        response = await whoami(http, era, None)

    assert_401(response, None)
    assert response.headers["www-authenticate"] == 'Bearer realm="mcp"'
    assert response.json()["error"]["data"]["error"] == "unauthorized"


@pytest.mark.parametrize("era", ERAS)
async def test_no_credentials_with_anonymous_access_is_an_anonymous_caller(era: str) -> None:
    async with running(make_server(allow_anonymous=True).http_app()) as http:
        caller = structured(await whoami(http, era, None))

    assert caller["user_id"] is None
    assert caller["kind"] == "anonymous"
    assert caller["label"] is None
    assert caller["anonymous_id"].startswith("anon:")


# -- invalid credentials ----------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("allow_anonymous", [False, True])
async def test_an_invalid_key_gets_401_with_www_authenticate_never_anonymous(era: str, allow_anonymous: bool) -> None:
    wrong = "not-a-key-anyone-configured-42"
    async with running(make_server(allow_anonymous=allow_anonymous).http_app()) as http:
        response = await whoami(http, era, wrong)

    assert_401(response, "invalid_token")
    assert wrong not in response.text
    assert wrong not in response.headers["www-authenticate"]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    "header",
    ["Basic bm91cjpzZWNyZXQ=", "Bearer", "Bearer    ", "Token " + NOUR_KEY, NOUR_KEY, ""],
)
async def test_a_malformed_authorization_header_gets_401_even_with_anonymous_access(era: str, header: str) -> None:
    async with running(make_server(allow_anonymous=True).http_app()) as http:
        response = await raw(http, era, {"Authorization": header})

    assert_401(response, "invalid_request")


async def test_an_authenticator_that_crashes_gives_500_with_an_error_id_and_no_details(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Broken:
        async def authenticate(self, token: str) -> Identity | None:
            raise RuntimeError("ldap://admin:hunter2@directory is down")

    assert isinstance(Broken(), Authenticator)
    async with running(make_server(auth=Broken()).http_app()) as http:
        response = await call_modern(http, "whoami", token="some-token-value")

    assert response.status_code == 500
    assert "hunter2" not in response.text
    description = response.json()["error"]["data"]["error_description"]
    assert "error id" in description
    error_id = description.split("error id ")[1].rstrip(").")
    assert any(error_id in r.getMessage() and r.exc_info for r in caplog.records)


async def test_an_identity_provider_outage_gives_503_with_retry_after_not_401() -> None:
    class Down:
        async def authenticate(self, token: str) -> Identity | None:
            raise AuthUnavailableError("https://idp.internal/jwks timed out")

    async with running(make_server(auth=Down(), allow_anonymous=True).http_app()) as http:
        response = await call_modern(http, "whoami", token="some-token-value")

    assert response.status_code == 503
    assert response.headers["retry-after"] == "5"
    assert response.json()["error"]["data"]["error"] == "temporarily_unavailable"
    assert "idp.internal" not in response.text


# -- static keys ------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_a_static_key_signs_in_as_static_sha256_of_the_key_with_its_label(era: str) -> None:
    async with running(make_server().http_app()) as http:
        nour = structured(await whoami(http, era, NOUR_KEY))
        sam = structured(await whoami(http, era, SAM_KEY))

    assert nour["user_id"] == static_user_id(NOUR_KEY)
    assert len(nour["user_id"]) == len("static:") + 32
    assert nour["kind"] == "static"
    assert nour["label"] == "nour"
    assert nour["claims"] == {}
    assert sam["user_id"] == static_user_id(SAM_KEY)
    assert sam["label"] == "sam"


async def test_the_user_id_of_a_key_does_not_contain_the_key() -> None:
    async with running(make_server().http_app()) as http:
        nour = structured(await call_modern(http, "whoami", token=NOUR_KEY))

    assert NOUR_KEY not in nour["user_id"]


# -- JWT ----------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_a_jwt_sub_becomes_the_user_id_of_a_user_caller_with_its_claims(era: str) -> None:
    token = make_jwt({"sub": "user-42", "name": "Nour", "role": "agent", "exp": int(time.time()) + 600})

    async with running(make_server().http_app()) as http:
        caller = structured(await whoami(http, era, token))

    assert caller["user_id"] == "user-42"
    assert caller["kind"] == "user"
    assert caller["label"] == "Nour"
    assert caller["claims"]["role"] == "agent"
    assert caller["claims"]["sub"] == "user-42"


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    ("what", "token"),
    [
        ("expired", make_jwt({"sub": "user-42", "exp": int(time.time()) - 60})),
        ("bad signature", make_jwt({"sub": "user-42"}, secret="another-secret-that-is-long-enough-00")),
        ("no sub", make_jwt({"name": "Nobody"})),
        ("sub static:", make_jwt({"sub": static_user_id(NOUR_KEY)})),
        ("sub anon:", make_jwt({"sub": "anon:0b4f3c8e6a434c369b1e2d2f6f3f7a10"})),
        ("sub local:", make_jwt({"sub": "local:nour"})),
        ("sub LOCAL:", make_jwt({"sub": "LOCAL:nour"})),
        ("alg none", jwt.encode({"sub": "user-42"}, "", algorithm="none")),
        # made when pytest collects: a day ahead, so a long run still finds it not valid yet
        ("not yet valid", make_jwt({"sub": "user-42", "nbf": int(time.time()) + 86_400})),
    ],
)
async def test_an_invalid_jwt_gets_401_even_with_anonymous_access(era: str, what: str, token: str) -> None:
    async with running(make_server(allow_anonymous=True).http_app()) as http:
        response = await whoami(http, era, token)

    assert_401(response, "invalid_token")
    assert token not in response.text


async def test_combined_auth_accepts_a_static_key_and_a_jwt_on_one_server() -> None:
    async with running(make_server().http_app()) as http:
        by_key = structured(await call_modern(http, "whoami", token=NOUR_KEY))
        by_jwt = structured(await call_modern(http, "whoami", token=make_jwt({"sub": "user-7"})))

    assert (by_key["kind"], by_key["user_id"]) == ("static", static_user_id(NOUR_KEY))
    assert (by_jwt["kind"], by_jwt["user_id"]) == ("user", "user-7")


async def test_combined_auth_in_the_other_order_still_accepts_both() -> None:
    server = make_server(auth=[JWTAuth(secret=JWT_SECRET, audience="mcpkit-tests"), StaticKeys({"nour": NOUR_KEY})])
    async with running(server.http_app()) as http:
        by_key = structured(await call_modern(http, "whoami", token=NOUR_KEY))
        by_jwt = structured(await call_modern(http, "whoami", token=make_jwt({"sub": "user-7"})))

    assert by_key["label"] == "nour"
    assert by_jwt["user_id"] == "user-7"


# -- sessions are bound to their credential (2025-11-25) ------------------------------


async def test_a_session_is_usable_with_the_credential_that_opened_it() -> None:
    async with running(make_server(allow_anonymous=True).http_app()) as http:
        session = await open_legacy_session(http, token=NOUR_KEY)
        response = await call_legacy(http, session, "whoami", token=NOUR_KEY)

    assert structured(response)["session_id"] == session


@pytest.mark.parametrize(
    ("opened_with", "reused_with"),
    [
        (NOUR_KEY, SAM_KEY),
        (NOUR_KEY, None),
        (None, NOUR_KEY),
        (NOUR_KEY, "jwt"),
    ],
    ids=["nour-then-sam", "nour-then-nobody", "nobody-then-nour", "nour-then-jwt"],
)
async def test_a_session_reused_with_another_credential_or_none_is_refused_with_404(
    opened_with: str | None, reused_with: str | None
) -> None:
    if reused_with == "jwt":
        reused_with = make_jwt({"sub": "user-42"})
    async with running(make_server(allow_anonymous=True).http_app()) as http:
        session = await open_legacy_session(http, token=opened_with)
        response = await call_legacy(http, session, "whoami", token=reused_with)
        still_theirs = await call_legacy(http, session, "whoami", token=opened_with)

    assert response.status_code == 404
    assert "whoami" not in response.text
    assert structured(still_theirs)["session_id"] == session


async def test_a_session_reused_without_credentials_on_a_closed_server_gets_401() -> None:
    async with running(make_server().http_app()) as http:
        session = await open_legacy_session(http, token=NOUR_KEY)
        response = await call_legacy(http, session, "whoami", token=None)

    assert_401(response, None)


async def test_two_jwts_for_the_same_sub_share_a_session() -> None:
    first = make_jwt({"sub": "user-42", "jti": "a"})
    second = make_jwt({"sub": "user-42", "jti": "b"})
    async with running(make_server().http_app()) as http:
        session = await open_legacy_session(http, token=first)
        response = await call_legacy(http, session, "whoami", token=second)

    assert structured(response)["user_id"] == "user-42"


# -- through the official client --------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_the_official_client_with_a_bearer_key_is_the_static_caller(era: str) -> None:
    asgi = make_server().http_app()
    async with asgi.router.lifespan_context(asgi), official_client(asgi, era, NOUR_KEY) as client:
        result = await client.call_tool("whoami", {})

    assert result.structured_content is not None
    assert result.structured_content["user_id"] == static_user_id(NOUR_KEY)
    assert result.structured_content["protocol_version"] == era


@pytest.mark.parametrize("era", ERAS)
async def test_the_official_client_with_a_wrong_key_shows_invalid_token_and_why(era: str) -> None:
    asgi = make_server(allow_anonymous=True).http_app()
    async with asgi.router.lifespan_context(asgi):
        with pytest.raises(ExceptionGroup) as raised:
            async with official_client(asgi, era, "wrong-key-0123456789") as client:
                await client.call_tool("whoami", {})

    # not the SDK's stand-in "Server returned an error response": the 401's JSON-RPC error, which it shows
    shown = "invalid_token: The bearer token is not a key or token this server accepts."
    assert raised.group_contains(MCPError, match=f"^{re.escape(shown)}$")
