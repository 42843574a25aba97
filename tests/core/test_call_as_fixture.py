"""The ``call_as`` fixture: static-key, raw-token and JWT callers through the real stack."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import MCPError

from core._support import JWT_SECRET, NOUR_KEY, IdentityApp, static_user_id
from mcpkit import JWTAuth, Server, StaticKeys
from mcpkit.testing import CallAs, HTTPRefusedError, running


@pytest.fixture
def mcpkit_server() -> Server:
    return Server(
        [IdentityApp], auth=[StaticKeys({"nour": NOUR_KEY}), JWTAuth(secret=JWT_SECRET, audience="mcpkit-tests")]
    )


async def test_a_jwt_caller_is_a_user_whose_id_is_the_sub_with_its_claims(call_as: CallAs, mcp_protocol: str) -> None:
    caller: dict[str, Any] = await call_as.jwt("user-42", {"name": "Nour H.", "team": "support"}).call("whoami")

    assert caller["user_id"] == "user-42"
    assert caller["kind"] == "user"
    assert caller["label"] == "Nour H."
    assert caller["claims"]["team"] == "support"
    assert caller["claims"]["sub"] == "user-42"
    assert caller["protocol_version"] == mcp_protocol


async def test_jwt_and_static_key_callers_are_different_users_on_one_server(call_as: CallAs) -> None:
    by_jwt = await call_as.jwt("user-42").call("whoami")
    by_key = await call_as("nour").call("whoami")

    assert by_jwt["user_id"] == "user-42"
    assert by_key["user_id"] == static_user_id(NOUR_KEY)


async def test_a_raw_token_caller_sends_exactly_that_token(call_as: CallAs) -> None:
    caller = await call_as.token(NOUR_KEY).call("whoami")

    assert caller["label"] == "nour"


async def test_a_wrong_key_is_an_http_refusal_with_its_status_and_reason_in_both_eras(call_as: CallAs) -> None:
    with pytest.raises(MCPError) as refused:  # what docs/testing.md promises, whatever the era
        await call_as.token("not-a-key-anyone-has").call("whoami")

    assert isinstance(refused.value, HTTPRefusedError)
    assert refused.value.status == 401
    assert refused.value.description == "The bearer token is not a key or token this server accepts."
    assert refused.value.headers["www-authenticate"].startswith('Bearer realm="mcp", error="invalid_token"')
    assert str(refused.value) == "HTTP 401: The bearer token is not a key or token this server accepts."


async def test_an_expired_jwt_is_an_http_refusal_that_says_so(call_as: CallAs) -> None:
    expired = JWTAuth(secret=JWT_SECRET, audience="mcpkit-tests").issue_token("user-42", expires_in=-60)

    with pytest.raises(HTTPRefusedError) as refused:
        await call_as.token(expired).list_tools()

    assert (refused.value.status, refused.value.description) == (401, "The bearer token was refused: token has expired")


async def test_an_anonymous_caller_on_a_server_without_anonymous_access_is_refused(call_as: CallAs) -> None:
    with pytest.raises(HTTPRefusedError) as refused:
        await call_as(None).call_tool("whoami")

    assert refused.value.status == 401
    assert refused.value.description == "This server needs a bearer token: send 'Authorization: Bearer <token>'."
    assert refused.value.headers["www-authenticate"] == 'Bearer realm="mcp"'


async def test_a_refused_caller_does_not_spoil_the_next_call(call_as: CallAs) -> None:
    with pytest.raises(HTTPRefusedError):
        await call_as.token("not-a-key-anyone-has").call("whoami")

    assert (await call_as("nour").call("whoami"))["label"] == "nour"


def test_issue_token_makes_tokens_the_same_auth_accepts_with_its_issuer_and_audience() -> None:
    import jwt

    auth = JWTAuth(secret=JWT_SECRET, issuer="https://idp.example", audience="mcpkit-tests")

    claims = jwt.decode(
        auth.issue_token("user-1", {"role": "agent"}),
        JWT_SECRET,
        algorithms=["HS256"],
        audience="mcpkit-tests",
        issuer="https://idp.example",
    )

    assert (claims["sub"], claims["role"]) == ("user-1", "agent")
    assert claims["exp"] > claims["iat"]


async def test_an_unknown_label_says_which_labels_exist(call_as: CallAs) -> None:
    with pytest.raises(LookupError, match=r"no StaticKeys label 'zoe' on this server \(labels: \['nour'\]\)"):
        call_as("zoe")


async def test_the_same_label_is_the_same_client_and_fresh_opens_another(call_as: CallAs) -> None:
    assert call_as("nour") is call_as("nour")
    assert call_as("nour", fresh=True) is not call_as("nour")


async def test_jwt_callers_need_a_jwt_auth_on_the_server() -> None:
    server = Server([IdentityApp], auth=StaticKeys({"nour": NOUR_KEY}))

    async with running(server) as callers:
        with pytest.raises(LookupError, match=r"call_as.jwt\(\) needs a JWTAuth"):
            callers.jwt("user-42")
