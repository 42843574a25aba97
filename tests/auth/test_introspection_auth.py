"""IntrospectionAuth: opaque tokens checked with the provider (RFC 7662), cached briefly, 503 when it is down."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from auth.introspection_server import CLIENT, IntrospectionServer
from core._support import URL, IdentityApp, call_modern, running, structured
from mcpkit import (
    AuthUnavailableError,
    ConfigurationError,
    IntrospectionAuth,
    InvalidCredentialError,
    ManualClock,
    Server,
    StaticKeys,
)

ISSUER = "http://127.0.0.1:9000/"


@pytest.fixture
def provider() -> Iterator[IntrospectionServer]:
    server = IntrospectionServer()
    yield server
    server.close()


def introspection(provider: IntrospectionServer, **options: Any) -> IntrospectionAuth:
    return IntrospectionAuth(provider.url, client_id=CLIENT[0], client_secret=CLIENT[1], **options)


def active(sub: str, **claims: Any) -> dict[str, Any]:
    return {"active": True, "sub": sub, "exp": int(time.time()) + 3600, "iss": ISSUER, **claims}


async def test_an_active_token_names_its_user_and_an_inactive_one_is_refused(provider: IntrospectionServer) -> None:
    provider.answers["opaque-nour"] = active("nour", scope="tickets:read", username="Nour")
    auth = introspection(provider, issuer=ISSUER)
    identity = await auth.authenticate("opaque-nour")
    assert (identity.user_id, identity.kind, identity.label) == ("nour", "user", "Nour")
    assert identity.claims["scope"] == "tickets:read"
    with pytest.raises(InvalidCredentialError, match="not active"):
        await auth.authenticate("opaque-unknown")
    assert provider.requests[0]["token"] == ["opaque-nour"]
    assert provider.requests[0]["token_type_hint"] == ["access_token"]


async def test_answers_are_cached_briefly_and_a_revoked_token_stops_working_when_its_answer_ends(
    provider: IntrospectionServer,
) -> None:
    provider.answers["opaque-sam"] = active("sam")
    clock = ManualClock()
    auth = introspection(provider, cache_seconds=30, clock=clock)
    for _ in range(5):
        assert (await auth.authenticate("opaque-sam")).user_id == "sam"
    assert len(provider.requests) == 1
    provider.answers["opaque-sam"] = {"active": False}  # revoked at the provider
    assert (await auth.authenticate("opaque-sam")).user_id == "sam"  # the cached answer, for cache_seconds
    clock.advance(31)
    with pytest.raises(InvalidCredentialError, match="not active"):
        await auth.authenticate("opaque-sam")


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (active("nour", iss="https://other.example/"), "issuer"),
        (active("nour", aud="https://other.example/mcp"), "audience"),
        (active("nour", exp=int(time.time()) - 5), "expired"),
        (active("nour", exp="soon"), "exp is not a number"),
        ({"active": True, "iss": ISSUER, "aud": URL}, "no subject"),
        (active("static:abc", aud=URL), "reserved"),
    ],
)
async def test_what_an_answer_must_say(provider: IntrospectionServer, answer: dict[str, Any], reason: str) -> None:
    provider.answers["opaque"] = answer
    auth = introspection(provider, issuer=ISSUER, audience=URL)
    with pytest.raises(InvalidCredentialError, match=reason):
        await auth.authenticate("opaque")


async def test_a_provider_that_is_down_or_refuses_the_servers_credentials_is_an_outage(
    provider: IntrospectionServer, caplog: pytest.LogCaptureFixture
) -> None:
    wrong = IntrospectionAuth(provider.url, client_id=CLIENT[0], client_secret="wrong")
    with pytest.raises(AuthUnavailableError, match="client credentials"):
        await wrong.authenticate("opaque")
    assert "check client_id and client_secret" in caplog.text
    provider.status = 500
    with pytest.raises(AuthUnavailableError, match="HTTP 500"):
        await introspection(provider).authenticate("opaque")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}/introspect"
    down = IntrospectionAuth(closed, client_id="a", client_secret="b", timeout=2)
    with pytest.raises(AuthUnavailableError, match="cannot be reached"):
        await down.authenticate("opaque")


async def test_through_the_http_stack_bound_to_the_resource_with_503_when_the_provider_is_down(
    provider: IntrospectionServer,
) -> None:
    provider.answers["opaque-nour"] = active("nour", aud=URL)
    provider.answers["opaque-elsewhere"] = active("nour", aud="https://other.example/mcp")
    server = Server([IdentityApp], auth=introspection(provider, issuer=ISSUER), resource_url=URL)
    async with running(server.http_app()) as http:
        assert structured(await call_modern(http, "whoami", token="opaque-nour"))["user_id"] == "nour"
        refused = await call_modern(http, "whoami", token="opaque-elsewhere")
        assert refused.status_code == 401
        assert (
            refused.json()["error"]["data"]["error_description"]
            == "The bearer token was refused: token audience is not accepted"
        )
        metadata = (await http.get("/.well-known/oauth-protected-resource/mcp")).json()
        assert metadata["authorization_servers"] == [ISSUER]
        provider.status = 503
        outage = await call_modern(http, "whoami", token="opaque-new")
        assert outage.status_code == 503
        assert outage.headers["retry-after"]


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"url": "http://idp.example.com/introspect"}, "uses http beyond loopback"),
        ({"url": "idp/introspect"}, "absolute URL"),
        ({"client_secret": ""}, "client credential"),
        ({"cache_size": -1}, "cache_size"),
        ({"audience": []}, "audience"),
    ],
)
def test_a_configuration_that_cannot_work_is_refused(options: dict[str, Any], says: str) -> None:
    given = {"url": "https://idp.example.com/introspect", "client_id": "a", "client_secret": "b", **options}
    with pytest.raises(ConfigurationError, match=says):
        IntrospectionAuth(given.pop("url"), **given)
    assert "zzz-secret" not in repr(
        IntrospectionAuth("https://idp.example.com/i", client_id="a", client_secret="zzz-secret")
    )


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (active("nour", aud=["https://other.example/mcp", URL]), None),  # a list naming it
        (active("nour"), "audience"),  # none at all, with an audience configured
        (active("nour", aud=URL, token_type="refresh_token"), "not an access token"),
        (active("nour", aud=URL, token_type="Bearer"), None),
        # a day ahead: the list is made when pytest collects, and a whole run can take longer than minutes
        (active("nour", aud=URL, nbf=int(time.time()) + 86_400), "not valid yet"),
        (active("nour", aud=URL, exp=float("nan")), "exp is not a number"),
        (active("nour", aud=URL, exp=10**400), "exp is not a number"),
        ({"active": "true", "sub": "nour"}, "outage"),  # not a boolean: not an introspection answer
    ],
)
async def test_more_of_what_an_answer_must_say(
    provider: IntrospectionServer, answer: dict[str, Any], reason: str | None
) -> None:
    provider.answers["opaque"] = answer
    auth = introspection(provider, audience=URL)
    if reason is None:
        assert (await auth.authenticate("opaque")).user_id == "nour"
    elif reason == "outage":
        with pytest.raises(AuthUnavailableError, match="boolean 'active'"):
            await auth.authenticate("opaque")
    else:
        with pytest.raises(InvalidCredentialError, match=reason):
            await auth.authenticate("opaque")


async def test_the_cache_is_bounded_ends_with_exp_and_keeps_refusals_apart(provider: IntrospectionServer) -> None:
    clock = ManualClock()
    soon = int(clock.now()) + 10
    provider.answers.update({f"t{n}": active(f"user{n}") for n in range(3)})
    provider.answers["short"] = active("sam", exp=soon)
    auth = introspection(provider, cache_size=2, cache_seconds=3600, clock=clock)
    for name in ("t0", "t1", "t0", "t2"):  # t1 is the least recently used when t2 comes: it goes
        await auth.authenticate(name)
    asked = len(provider.requests)
    await auth.authenticate("t0")
    assert len(provider.requests) == asked  # still cached
    await auth.authenticate("t1")
    assert len(provider.requests) == asked + 1  # evicted, asked again
    for n in range(50):  # made-up tokens are refused and cached apart: the real answers stay
        with pytest.raises(InvalidCredentialError):
            await auth.authenticate(f"junk{n}")
    asked = len(provider.requests)
    await auth.authenticate("t1")
    assert len(provider.requests) == asked
    assert (await auth.authenticate("short")).user_id == "sam"
    provider.answers["short"] = {"active": False}
    clock.advance(11)  # the answer ends with the token's exp, long before cache_seconds
    with pytest.raises(InvalidCredentialError, match="not active"):
        await auth.authenticate("short")


async def test_a_bound_copy_judges_afresh_and_errors_never_carry_the_secret(provider: IntrospectionServer) -> None:
    provider.answers["opaque"] = active("nour")  # no aud
    plain = introspection(provider)
    assert (await plain.authenticate("opaque")).user_id == "nour"
    bound = plain.bound_to(URL)
    with pytest.raises(InvalidCredentialError, match="audience"):
        await bound.authenticate("opaque")  # not the plain copy's cached answer
    wrong = IntrospectionAuth(provider.url, client_id=CLIENT[0], client_secret="zzz-very-secret")
    with pytest.raises(AuthUnavailableError) as caught:
        await wrong.authenticate("opaque")
    assert "zzz-very-secret" not in str(caught.value)


def test_static_keys_must_come_before_introspection_and_urls_carry_no_credentials(
    provider: IntrospectionServer,
) -> None:
    keys = StaticKeys({"ops": "ops-key-0123456789abcdef"})
    with pytest.raises(ConfigurationError, match="put StaticKeys first"):
        Server([IdentityApp], auth=[introspection(provider), keys])
    Server([IdentityApp], auth=[keys, introspection(provider, audience="mcpkit-tests")])
    with pytest.raises(ConfigurationError, match="credentials in it"):
        IntrospectionAuth("https://user:pw@idp.example.com/i", client_id="a", client_secret="b")


async def test_calls_that_arrive_together_with_one_token_share_one_request(provider: IntrospectionServer) -> None:
    provider.answers["busy"] = active("nour")
    provider.delay = 0.2
    auth = introspection(provider)
    identities: list[Any] = []

    async def ask() -> None:
        identities.append(await auth.authenticate("busy"))

    async with anyio.create_task_group() as group:
        for _ in range(20):
            group.start_soon(ask)
    assert len(provider.requests) == 1
    assert {identity.user_id for identity in identities} == {"nour"}
    assert len(identities) == 20

    provider.status = 500  # an outage reaches every waiting call, from one request
    failures: list[BaseException] = []

    async def ask_down() -> None:
        try:
            await auth.authenticate("other")
        except AuthUnavailableError as exc:
            failures.append(exc)

    async with anyio.create_task_group() as group:
        for _ in range(5):
            group.start_soon(ask_down)
    assert len(provider.requests) == 2
    assert len(failures) == 5


async def test_a_cancelled_request_leaves_the_calls_waiting_on_it_to_ask_again(provider: IntrospectionServer) -> None:
    provider.answers["slow"] = active("sam")
    provider.delay = 0.3
    auth = introspection(provider)
    found: list[Any] = []

    async def follower() -> None:
        await anyio.sleep(0.05)  # arrives while the first request is out
        found.append(await auth.authenticate("slow"))

    async with anyio.create_task_group() as group:
        group.start_soon(follower)
        with anyio.move_on_after(0.1):  # the first caller gives up (a client that went away)
            await auth.authenticate("slow")
    assert [identity.user_id for identity in found] == ["sam"]
    assert len(provider.requests) == 2
