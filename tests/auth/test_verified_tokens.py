"""A JWT verified once is not verified again on the caller's next call (its signature check is most of a call's
cost), while its expiry still is; the cache is bounded, per authenticator copy, and keyed by a hash of the token."""

from __future__ import annotations

import time
from typing import Any

import jwt
import pytest

import mcpkit.auth._jwt_auth as jwt_auth
from mcpkit.auth._jwt_auth import JWTAuth
from mcpkit.auth._token_cache import TokenCache, token_key
from mcpkit.base._credentials import InvalidCredentialError

SECRET = "a-shared-secret-of-at-least-32-bytes!"
AUDIENCE = "mcpkit-tests"


def token(**claims: Any) -> str:
    return jwt.encode({"sub": "nour", "aud": AUDIENCE, "exp": int(time.time()) + 600, **claims}, SECRET, "HS256")


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every token PyJWT is asked to verify, in order."""
    seen: list[str] = []
    real = jwt.decode

    def counting(presented: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(presented)
        return real(presented, *args, **kwargs)

    monkeypatch.setattr(jwt_auth.jwt, "decode", counting)
    return seen


async def test_a_token_is_verified_once_then_known(decodes: list[str]) -> None:
    auth = JWTAuth(secret=SECRET, audience=AUDIENCE)
    presented = token()
    first, second = await auth.authenticate(presented), await auth.authenticate(presented)
    assert first is second
    assert first is not None
    assert first.user_id == "nour"
    assert decodes == [presented]
    other = token(sub="sam")
    assert (await auth.authenticate(other)) is not None
    assert decodes == [presented, other]


async def test_a_known_token_that_expired_is_refused(decodes: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    auth = JWTAuth(secret=SECRET, audience=AUDIENCE)
    presented = token(exp=int(time.time()) + 5)
    assert await auth.authenticate(presented) is not None
    later = time.time() + 60
    monkeypatch.setattr(jwt_auth.time, "time", lambda: later)
    with pytest.raises(InvalidCredentialError, match="expired"):
        await auth.authenticate(presented)
    assert len(decodes) == 1  # refused from what was kept, its time claims checked again


async def test_a_refused_token_is_not_kept(decodes: list[str]) -> None:
    auth = JWTAuth(secret=SECRET, audience=AUDIENCE)
    wrong = token(aud="another-server")
    for _ in range(2):
        with pytest.raises(InvalidCredentialError):
            await auth.authenticate(wrong)
    assert decodes == [wrong, wrong]


async def test_copies_for_another_audience_or_namespace_judge_again(decodes: list[str]) -> None:
    auth = JWTAuth(secret=SECRET, issuer="https://a.example/", allow_no_audience=True)
    presented = token(iss="https://a.example/", aud="https://mcp.example.com/mcp")
    bound = auth.bound_to("https://mcp.example.com/mcp")
    assert (await bound.authenticate(presented)) is not None
    namespaced = bound.namespaced("iss:https://a.example/#")
    known = await namespaced.authenticate(presented)
    assert known is not None
    assert known.user_id == "iss:https://a.example/#nour"
    with pytest.raises(InvalidCredentialError):
        await auth.bound_to("https://other.example.com/mcp").authenticate(presented)
    assert len(decodes) == 3


async def test_with_a_jwks_url_a_verification_lasts_no_longer_than_the_key_set() -> None:
    auth = JWTAuth(jwks_url="https://login.example.com/jwks", jwks_cache_seconds=20, audience=AUDIENCE)
    assert auth._verified_seconds == 20
    assert JWTAuth(secret=SECRET, audience=AUDIENCE)._verified_seconds == jwt_auth.VERIFIED_SECONDS


def test_the_cache_is_bounded_least_recently_used_first_and_expires() -> None:
    cache: TokenCache[str] = TokenCache(2)
    a, b, c = (token_key(name) for name in ("a", "b", "c"))
    cache.put(a, "A", until=10)
    cache.put(b, "B", until=10)
    assert cache.get(a, now=1) == "A"  # now b is the least recently used
    cache.put(c, "C", until=10)
    assert (cache.get(a, 1), cache.get(b, 1), cache.get(c, 1)) == ("A", None, "C")
    assert cache.get(a, now=10) is None  # good until 10, not at it
    assert len(cache) == 2
    empty: TokenCache[str] = TokenCache(0)
    empty.put(a, "A", until=10)
    assert empty.get(a, 1) is None


def test_the_key_is_a_hash_of_the_token_and_takes_lone_surrogates() -> None:
    assert len(token_key("x" * 5000)) == 32
    assert token_key("\ud800") != token_key("\ud801")
