"""JWTAuth with a JWKS URL: keys fetched once and cached, rotation, outages, and a loop that never blocks."""

from __future__ import annotations

import asyncio
import socket
import time
from typing import Any

import anyio
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from auth.jwks_server import JWKSServer
from mcpkit.auth._jwt_auth import JWKSUnavailableError, JWTAuth
from mcpkit.base._credentials import InvalidCredentialError


def token(key: Any, kid: str | None, algorithm: str = "RS256", sub: str = "nour") -> str:
    headers = {} if kid is None else {"kid": kid}
    return jwt.encode({"sub": sub, "exp": int(time.time()) + 600}, key, algorithm=algorithm, headers=headers)


async def reason(auth: JWTAuth, presented: str) -> str:
    with pytest.raises(InvalidCredentialError) as caught:
        await auth.authenticate(presented)
    return caught.value.reason


async def test_a_token_signed_with_a_published_key_signs_in(
    jwks_server: JWKSServer, rsa_key: rsa.RSAPrivateKey, ec_key: ec.EllipticCurvePrivateKey
) -> None:
    jwks_server.publish(rsa1=rsa_key, ec1=ec_key)
    auth = JWTAuth(jwks_url=jwks_server.url)

    by_rsa = await auth.authenticate(token(rsa_key, "rsa1", sub="nour"))
    by_ec = await auth.authenticate(token(ec_key, "ec1", "ES256", sub="sam"))

    assert by_rsa is not None
    assert by_ec is not None
    assert (by_rsa.user_id, by_ec.user_id) == ("nour", "sam")


async def test_the_key_set_is_fetched_once_and_cached(jwks_server: JWKSServer, rsa_key: rsa.RSAPrivateKey) -> None:
    jwks_server.publish(rsa1=rsa_key)
    auth = JWTAuth(jwks_url=jwks_server.url)

    assert await auth.authenticate(token(rsa_key, "rsa1")) is not None
    assert await auth.authenticate(token(rsa_key, "rsa1", sub="sam")) is not None

    assert jwks_server.requests == 1


async def test_a_rotated_key_is_picked_up_by_refetching(
    jwks_server: JWKSServer, rsa_key: rsa.RSAPrivateKey, other_rsa_key: rsa.RSAPrivateKey
) -> None:
    jwks_server.publish(old=rsa_key)
    auth = JWTAuth(jwks_url=jwks_server.url, jwks_refresh_cooldown=0)
    assert await auth.authenticate(token(rsa_key, "old")) is not None

    jwks_server.publish(new=other_rsa_key)
    identity = await auth.authenticate(token(other_rsa_key, "new"))

    assert identity is not None
    assert jwks_server.requests == 2


async def test_made_up_kids_do_not_hammer_the_identity_provider(
    jwks_server: JWKSServer, rsa_key: rsa.RSAPrivateKey
) -> None:
    jwks_server.publish(rsa1=rsa_key)
    auth = JWTAuth(jwks_url=jwks_server.url)  # default cooldown: at most one forced refetch per 30 s
    assert await auth.authenticate(token(rsa_key, "rsa1")) is not None

    for attempt in range(3):
        assert await reason(auth, token(rsa_key, f"made-up-{attempt}")) == "token signing key (kid) is not known"

    assert jwks_server.requests == 1


async def test_an_unknown_kid_is_refused_after_one_refetch(
    jwks_server: JWKSServer, rsa_key: rsa.RSAPrivateKey, other_rsa_key: rsa.RSAPrivateKey
) -> None:
    jwks_server.publish(rsa1=rsa_key)
    auth = JWTAuth(jwks_url=jwks_server.url, jwks_refresh_cooldown=0)
    assert await auth.authenticate(token(rsa_key, "rsa1")) is not None

    assert await reason(auth, token(other_rsa_key, "unknown")) == "token signing key (kid) is not known"
    assert jwks_server.requests == 2


async def test_a_key_dropped_upstream_stops_verifying_once_the_cache_expires(
    jwks_server: JWKSServer, rsa_key: rsa.RSAPrivateKey, other_rsa_key: rsa.RSAPrivateKey
) -> None:
    jwks_server.publish(old=rsa_key)
    auth = JWTAuth(jwks_url=jwks_server.url, jwks_cache_seconds=0.05)
    assert await auth.authenticate(token(rsa_key, "old")) is not None

    jwks_server.publish(new=other_rsa_key)
    await asyncio.sleep(0.06)  # PyJWKClient reads time.monotonic itself; there is no clock to move

    assert await reason(auth, token(rsa_key, "old")) == "token signing key (kid) is not known"


async def test_a_kid_is_required(jwks_server: JWKSServer, rsa_key: rsa.RSAPrivateKey) -> None:
    jwks_server.publish(rsa1=rsa_key)
    auth = JWTAuth(jwks_url=jwks_server.url)

    assert await reason(auth, token(rsa_key, None)) == "token has no key id (kid)"
    assert jwks_server.requests == 0


async def test_a_published_key_cannot_sign_for_another_kid(
    jwks_server: JWKSServer, rsa_key: rsa.RSAPrivateKey, other_rsa_key: rsa.RSAPrivateKey
) -> None:
    jwks_server.publish(rsa1=rsa_key, rsa2=other_rsa_key)
    auth = JWTAuth(jwks_url=jwks_server.url)

    assert await reason(auth, token(other_rsa_key, "rsa1")) == "token signature is invalid"


async def test_an_hmac_token_is_refused_without_fetching(jwks_server: JWKSServer) -> None:
    auth = JWTAuth(jwks_url=jwks_server.url)

    assert await reason(auth, token("k" * 32, "rsa1", "HS256")) == "token algorithm is not accepted"
    assert jwks_server.requests == 0


async def test_an_unreachable_jwks_is_an_outage_not_a_bad_credential(rsa_key: rsa.RSAPrivateKey) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    auth = JWTAuth(jwks_url=f"http://127.0.0.1:{closed_port}/jwks")

    with pytest.raises(JWKSUnavailableError, match="could not fetch signing keys"):
        await auth.authenticate(token(rsa_key, "rsa1"))


@pytest.mark.parametrize(("status", "body"), [(500, b'{"keys": []}'), (200, b"<html>"), (200, b'{"keys": []}')])
async def test_a_broken_jwks_is_an_outage_not_a_bad_credential(
    jwks_server: JWKSServer, rsa_key: rsa.RSAPrivateKey, status: int, body: bytes
) -> None:
    jwks_server.status, jwks_server.body = status, body
    auth = JWTAuth(jwks_url=jwks_server.url)

    with pytest.raises(JWKSUnavailableError):
        await auth.authenticate(token(rsa_key, "rsa1"))


async def test_a_slow_fetch_does_not_block_the_event_loop(jwks_server: JWKSServer, rsa_key: rsa.RSAPrivateKey) -> None:
    jwks_server.publish(rsa1=rsa_key)
    jwks_server.hold()
    auth = JWTAuth(jwks_url=jwks_server.url)

    pending = asyncio.create_task(auth.authenticate(token(rsa_key, "rsa1")))
    with anyio.fail_after(5):
        await jwks_server.arrived()
    # Only a running event loop gets here while the fetch is still waiting to be released.
    jwks_server.release()
    identity = await pending

    assert identity is not None
    assert jwks_server.released_in_time == [True]


async def test_concurrent_first_requests_share_one_fetch(jwks_server: JWKSServer, rsa_key: rsa.RSAPrivateKey) -> None:
    jwks_server.publish(rsa1=rsa_key)
    jwks_server.hold()
    auth = JWTAuth(jwks_url=jwks_server.url)

    pending = [asyncio.create_task(auth.authenticate(token(rsa_key, "rsa1", sub=f"u{i}"))) for i in range(5)]
    with anyio.fail_after(5):
        await jwks_server.arrived()
    await asyncio.sleep(0.05)  # give the other four time to (wrongly) start fetches of their own
    jwks_server.release()
    identities = await asyncio.gather(*pending)

    assert [identity.user_id for identity in identities if identity] == [f"u{i}" for i in range(5)]
    assert jwks_server.requests == 1


def test_the_repr_shows_the_jwks_url() -> None:
    auth = JWTAuth(jwks_url="https://id.example/jwks", audience="mcp-notes")

    assert repr(auth) == (
        "JWTAuth(jwks_url='https://id.example/jwks', algorithms=['RS256', 'ES256'], audience='mcp-notes')"
    )
