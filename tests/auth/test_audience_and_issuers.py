"""Audience binding is required, and several identity providers never share a user (issue 11).

Through the real HTTP app in both eras: a server refuses an OAuth authenticator that would accept tokens
for any audience (unless it opts out, explicitly); the first provider keeps plain ``sub`` ids, every other
issuer's users are ``iss:<issuer>#<sub>``, so the same ``sub`` from two providers never meets in memory.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import jwt
import pytest

from auth.introspection_server import CLIENT, IntrospectionServer
from core._support import (
    URL,
    IdentityApp,
    body_of,
    call_legacy,
    call_modern,
    open_legacy_session,
    running,
    structured,
)
from mcpkit import ConfigurationError, IntrospectionAuth, JWTAuth, Server, StaticKeys, ToolContext, app, tool
from mcpkit_remember import RememberPlugin

STAFF, PARTNERS = "https://staff.example.com", "https://partners.example.com"
STAFF_SECRET, PARTNER_SECRET = "staff-signing-secret-of-32-bytes-or-more", "partner-signing-secret-of-32-bytes-or-more"


@tool(name="keep", description="Keep a note for you.")
class Keep(ToolContext):
    async def execute(self, note: str) -> dict[str, str | None]:
        await self.remember.set("note", note, scope="user")
        return {"user_id": self.caller.user_id}


@tool(name="fetch", description="Your note.")
class Fetch(ToolContext):
    async def execute(self) -> dict[str, str | None]:
        return {"note": await self.remember.get("note", scope="user"), "user_id": self.caller.user_id}


@app(id="notes", tools=[Keep, Fetch], plugins=[RememberPlugin.init(type="memory")])
class NotesApp: ...


def signed(secret: str, **claims: Any) -> str:
    return jwt.encode({"exp": int(time.time()) + 600, **claims}, secret, algorithm="HS256")


@pytest.fixture
def provider() -> Iterator[IntrospectionServer]:
    server = IntrospectionServer()
    yield server
    server.close()


def test_a_server_refuses_an_authenticator_that_names_no_audience(provider: IntrospectionServer) -> None:
    introspection = IntrospectionAuth(provider.url, client_id=CLIENT[0], client_secret=CLIENT[1], issuer=STAFF)
    for authenticator in (JWTAuth(secret=STAFF_SECRET, issuer=STAFF), introspection):
        name = type(authenticator).__name__
        with pytest.raises(ConfigurationError) as refused:
            Server([IdentityApp], auth=authenticator)
        message = str(refused.value)
        assert "would accept tokens meant for any server" in message
        assert "resource_url=" in message
        assert f"{name}(audience=" in message
        assert "allow_no_audience=True" in message
        Server([IdentityApp], auth=authenticator, resource_url=URL)  # bound to the resource: fine
    Server([IdentityApp], auth=StaticKeys({"ops": "ops-key-0123456789abcdef"}))  # static keys need no audience


def test_allow_no_audience_is_checked() -> None:
    with pytest.raises(ConfigurationError, match="allow_no_audience is True or False"):
        JWTAuth(secret=STAFF_SECRET, allow_no_audience="yes")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="allow_no_audience is True or False"):
        IntrospectionAuth("https://idp.example.com/i", client_id="a", client_secret="b", allow_no_audience=1)  # type: ignore[arg-type]
    assert "allow_no_audience=True" in repr(JWTAuth(secret=STAFF_SECRET, allow_no_audience=True))


async def test_with_a_resource_allow_no_audience_still_refuses_a_token_for_another_one() -> None:
    lenient = JWTAuth(secret=STAFF_SECRET, issuer=STAFF, allow_no_audience=True)
    async with running(Server([IdentityApp], auth=lenient, resource_url=URL).http_app()) as http:
        for claims in ({"aud": URL}, {}, {"aud": [URL, "https://billing"]}):
            token = signed(STAFF_SECRET, sub="nour", iss=STAFF, **claims)
            assert structured(await call_modern(http, "whoami", token=token))["user_id"] == "nour"
        refused = await call_modern(
            http, "whoami", token=signed(STAFF_SECRET, sub="nour", iss=STAFF, aud="https://billing")
        )
        assert refused.status_code == 401
        assert "token audience is not accepted" in refused.headers["www-authenticate"]


async def test_allow_no_audience_takes_tokens_without_one_and_still_refuses_a_token_for_someone_else() -> None:
    server = Server([IdentityApp], auth=JWTAuth(secret=STAFF_SECRET, allow_no_audience=True))
    async with running(server.http_app()) as http:
        assert (
            structured(await call_modern(http, "whoami", token=signed(STAFF_SECRET, sub="nour")))["user_id"] == "nour"
        )
        refused = await call_modern(http, "whoami", token=signed(STAFF_SECRET, sub="nour", aud="https://billing"))
        assert refused.status_code == 401
        assert "token names an audience (aud)" in refused.headers["www-authenticate"]


async def test_introspection_with_allow_no_audience_refuses_an_answer_that_names_one(
    provider: IntrospectionServer,
) -> None:
    provider.answers["plain"] = {"active": True, "sub": "nour", "exp": int(time.time()) + 600}
    provider.answers["elsewhere"] = {**provider.answers["plain"], "aud": "https://billing"}
    auth = IntrospectionAuth(provider.url, client_id=CLIENT[0], client_secret=CLIENT[1], allow_no_audience=True)
    async with running(Server([IdentityApp], auth=auth).http_app()) as http:
        assert structured(await call_modern(http, "whoami", token="plain"))["user_id"] == "nour"
        refused = await call_modern(http, "whoami", token="elsewhere")
        assert refused.status_code == 401
        assert "token names an audience (aud)" in refused.headers["www-authenticate"]
    provider.answers["ours"] = {**provider.answers["plain"], "aud": URL, "iss": STAFF}
    provider.answers["plain-staff"] = {**provider.answers["plain"], "iss": STAFF}
    provider.answers["elsewhere-staff"] = {**provider.answers["elsewhere"], "iss": STAFF}
    bound = IntrospectionAuth(
        provider.url, client_id=CLIENT[0], client_secret=CLIENT[1], issuer=STAFF, allow_no_audience=True
    )
    async with running(Server([IdentityApp], auth=bound, resource_url=URL).http_app()) as http:
        for token in ("ours", "plain-staff"):
            assert structured(await call_modern(http, "whoami", token=token))["user_id"] == "nour"
        refused = await call_modern(http, "whoami", token="elsewhere-staff")
        assert "token audience is not accepted" in refused.headers["www-authenticate"]


def two_providers(*extra: Any) -> Server:
    staff = JWTAuth(secret=STAFF_SECRET, issuer=STAFF)
    partners = JWTAuth(secret=PARTNER_SECRET, issuer=PARTNERS)
    return Server([NotesApp], auth=[staff, partners, *extra], resource_url=URL)


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
async def test_the_same_sub_from_two_providers_is_two_users_with_two_memories(era: str) -> None:
    staff_token = signed(STAFF_SECRET, sub="42", iss=STAFF, aud=URL)
    partner_token = signed(PARTNER_SECRET, sub="42", iss=PARTNERS, aud=URL)
    async with running(two_providers().http_app()) as http:

        async def call(token: str, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
            if era == "2026-07-28":
                return structured(await call_modern(http, name, arguments, token=token))
            session = await open_legacy_session(http, token=token)
            return structured(await call_legacy(http, session, name, arguments, token=token))

        assert (await call(staff_token, "keep", {"note": "staff plan"}))["user_id"] == "42"
        partner = await call(partner_token, "fetch")
        assert partner == {"note": None, "user_id": f"iss:{PARTNERS}#42"}
        await call(partner_token, "keep", {"note": "partner plan"})
        assert (await call(staff_token, "fetch"))["note"] == "staff plan"
        assert (await call(partner_token, "fetch"))["note"] == "partner plan"


async def test_opaque_tokens_of_the_first_issuer_share_its_users_and_another_issuers_are_namespaced(
    provider: IntrospectionServer,
) -> None:
    expires = int(time.time()) + 600
    provider.answers["staff-opaque"] = {"active": True, "sub": "42", "iss": STAFF, "aud": URL, "exp": expires}
    staff_opaque = IntrospectionAuth(provider.url, client_id=CLIENT[0], client_secret=CLIENT[1], issuer=STAFF)
    async with running(two_providers(staff_opaque).http_app()) as http:
        await call_modern(http, "keep", {"note": "mine"}, token=signed(STAFF_SECRET, sub="42", iss=STAFF, aud=URL))
        assert structured(await call_modern(http, "fetch", token="staff-opaque")) == {"note": "mine", "user_id": "42"}
    provider.answers["partner-opaque"] = {**provider.answers["staff-opaque"], "iss": PARTNERS}
    partner_opaque = IntrospectionAuth(provider.url, client_id=CLIENT[0], client_secret=CLIENT[1], issuer=PARTNERS)
    staff = JWTAuth(secret=STAFF_SECRET, issuer=STAFF)
    async with running(Server([NotesApp], auth=[staff, partner_opaque], resource_url=URL).http_app()) as http:
        opaque = structured(await call_modern(http, "fetch", token="partner-opaque"))
        assert opaque == {"note": None, "user_id": f"iss:{PARTNERS}#42"}


async def test_a_jwt_of_an_issuer_the_server_does_not_know_is_refused() -> None:
    async with running(two_providers().http_app()) as http:
        stranger = signed(STAFF_SECRET, sub="42", iss="https://elsewhere.example.com", aud=URL)
        refused = await call_modern(http, "fetch", token=stranger)
        assert refused.status_code == 401
        assert "not a key or token this server accepts" in refused.headers["www-authenticate"]


async def test_a_sub_that_claims_a_namespace_is_refused() -> None:
    async with running(two_providers().http_app()) as http:
        forged = signed(STAFF_SECRET, sub=f"iss:{PARTNERS}#42", iss=STAFF, aud=URL)
        refused = await call_modern(http, "fetch", token=forged)
        assert refused.status_code == 401
        assert "prefix reserved by the server" in refused.headers["www-authenticate"]
        assert "error" in body_of(refused)


def test_several_providers_must_each_name_an_issuer_without_a_hash() -> None:
    anonymous_issuer = JWTAuth(secret=PARTNER_SECRET)
    with pytest.raises(ConfigurationError, match="give each one issuer="):
        Server([NotesApp], auth=[JWTAuth(secret=STAFF_SECRET, issuer=STAFF), anonymous_issuer], resource_url=URL)
    hashed = JWTAuth(secret=PARTNER_SECRET, issuer="partners#x", audience="api://notes")
    with pytest.raises(ConfigurationError, match="an issuer holds no '#'"):
        Server([NotesApp], auth=[JWTAuth(secret=STAFF_SECRET, issuer=STAFF, audience="api://notes"), hashed])
    single = Server([NotesApp], auth=[JWTAuth(secret=STAFF_SECRET, audience="api://notes")])  # one needs no issuer
    assert single.authenticators[0].issuer is None  # type: ignore[attr-defined]
