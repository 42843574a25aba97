"""JWTAuth with a shared secret or a public key: what signs a caller in, and every way a token is refused."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from mcpkit.auth._jwt_auth import JWTAuth
from mcpkit.base._credentials import RESERVED_PREFIXES, Authenticator, InvalidCredentialError

SECRET = "s" * 32 + "-and-a-bit-more-for-good-measure"
NOW = int(time.time())


@pytest.fixture(autouse=True)
def _now() -> None:
    """``NOW`` is read again as each test starts: claims a minute away stay so however long a run takes."""
    global NOW
    NOW = int(time.time())


def public_pem(
    private_key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey,
) -> str:
    """The PEM a server is configured with: the public half of the signing key."""
    return (
        private_key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def token(key: Any = SECRET, algorithm: str = "HS256", **claims: Any) -> str:
    """A token signed by ``key``; ``sub`` is "nour" and ``exp`` ten minutes away unless given (None leaves one out)."""
    payload = {"sub": "nour", "exp": NOW + 600, **claims}
    return jwt.encode({k: v for k, v in payload.items() if v is not None}, key, algorithm=algorithm)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def forge(header: dict[str, Any], payload: dict[str, Any], hmac_key: bytes | None = None) -> str:
    """A hand-built token: unsigned when ``hmac_key`` is None, else HMAC-SHA256 signed with it."""
    signing_input = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(payload).encode())}"
    signature = b"" if hmac_key is None else hmac.new(hmac_key, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64(signature)}"


async def refused(auth: JWTAuth, presented: str) -> str:
    """The reason ``auth`` refuses ``presented``, checked to be short and to never echo the token."""
    with pytest.raises(InvalidCredentialError) as caught:
        await auth.authenticate(presented)
    reason = caught.value.reason
    assert presented not in reason
    assert len(reason) < 80
    return reason


@pytest.fixture
def auth() -> JWTAuth:
    return JWTAuth(secret=SECRET)


# --- signing in -------------------------------------------------------------------------------------


def test_it_is_an_authenticator(auth: JWTAuth) -> None:
    assert isinstance(auth, Authenticator)


async def test_a_valid_token_signs_in_as_its_subject(auth: JWTAuth) -> None:
    identity = await auth.authenticate(token(name="Nour", team="blue", exp=NOW + 60, iat=NOW))

    assert identity is not None
    assert (identity.user_id, identity.kind, identity.label) == ("nour", "user", "Nour")
    assert identity.claims == {"sub": "nour", "name": "Nour", "team": "blue", "exp": NOW + 60, "iat": NOW}


async def test_without_a_name_the_label_is_none(auth: JWTAuth) -> None:
    identity = await auth.authenticate(token())

    assert identity is not None
    assert identity.label is None


@pytest.mark.parametrize(
    "presented",
    [
        "",
        "a-static-api-key-0123",
        "only.two",
        "a.b.c",  # three segments, but the first is not a JSON header
        "bm90IGpzb24.eyJzdWIiOiJub3VyIn0.c2ln",  # "not json"
        "WzFd.eyJzdWIiOiJub3VyIn0.c2ln",  # header is a list, not an object
        "e30.e30.c2ln.ZXh0cmE",  # four segments
        "e30.e30.c2 ln",
        "e30.e30.c2ln=",
    ],
)
async def test_a_token_that_is_not_a_jwt_is_left_to_other_authenticators(auth: JWTAuth, presented: str) -> None:
    assert await auth.authenticate(presented) is None


# --- refusals ---------------------------------------------------------------------------------------


async def test_a_token_signed_with_another_secret_is_refused(auth: JWTAuth) -> None:
    reason = await refused(auth, token(key="x" * 40))

    assert reason == "token signature is invalid"


async def test_a_tampered_payload_is_refused(auth: JWTAuth) -> None:
    header, _, signature = token(sub="sam").split(".")
    tampered = f"{header}.{b64(json.dumps({'sub': 'nour'}).encode())}.{signature}"

    assert await refused(auth, tampered) == "token signature is invalid"


async def test_an_expired_token_is_refused(auth: JWTAuth) -> None:
    assert await refused(auth, token(exp=NOW - 60)) == "token has expired"


async def test_leeway_forgives_a_little_clock_skew() -> None:
    lenient = JWTAuth(secret=SECRET, leeway=120)

    assert await lenient.authenticate(token(exp=NOW - 60, nbf=NOW + 60, iat=NOW + 60)) is not None
    assert await refused(lenient, token(exp=NOW - 600)) == "token has expired"


@pytest.mark.parametrize("claim", ["nbf", "iat"])
async def test_a_token_from_the_future_is_refused(auth: JWTAuth, claim: str) -> None:
    claims: dict[str, Any] = {claim: NOW + 600}

    assert await refused(auth, token(**claims)) == "token is not yet valid"


async def test_a_token_without_an_expiry_is_refused_by_default(auth: JWTAuth) -> None:
    assert await refused(auth, token(exp=None)) == "token has no expiry (exp)"


async def test_require_exp_false_accepts_a_token_without_an_expiry_but_still_checks_one_given() -> None:
    lenient = JWTAuth(secret=SECRET, require_exp=False)

    assert await lenient.authenticate(token(exp=None)) is not None
    assert await refused(lenient, token(exp=NOW - 60)) == "token has expired"
    assert await refused(lenient, token(exp=str(NOW + 600))) == "token exp claim is not a number of seconds"
    assert "require_exp=False" in repr(lenient)


@pytest.mark.parametrize("claim", ["exp", "nbf", "iat"])
@pytest.mark.parametrize(
    "value",
    [
        str(NOW + 600),
        str(NOW - 600),
        "tomorrow",
        True,
        False,
        None,
        [NOW + 600],
        {"t": NOW},
        float("nan"),
        float("inf"),
    ],
    ids=["future as string", "past as string", "word", "true", "false", "null", "list", "object", "NaN", "Infinity"],
)
async def test_a_time_claim_that_is_not_a_json_number_is_refused(auth: JWTAuth, claim: str, value: Any) -> None:
    presented = forge({"alg": "HS256"}, {"sub": "nour", "exp": NOW + 600, claim: value}, SECRET.encode())

    assert await refused(auth, presented) == f"token {claim} claim is not a number of seconds"


async def test_a_fractional_time_claim_is_a_number(auth: JWTAuth) -> None:
    assert await auth.authenticate(token(exp=NOW + 600.5, iat=NOW - 0.25, nbf=NOW - 1.5)) is not None
    assert await refused(auth, token(exp=NOW - 0.5)) == "token has expired"


def test_require_exp_must_be_a_boolean() -> None:
    with pytest.raises(ValueError, match="require_exp is True or False"):
        JWTAuth(secret=SECRET, require_exp="no")  # type: ignore[arg-type]


async def test_a_payload_that_is_not_json_is_refused(auth: JWTAuth) -> None:
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    signing_input = f"{header}.{b64(b'not json')}"
    signature = hmac.new(SECRET.encode(), signing_input.encode(), hashlib.sha256).digest()

    assert await refused(auth, f"{signing_input}.{b64(signature)}") == "token is malformed"


async def test_the_issuer_must_match_when_configured() -> None:
    auth = JWTAuth(secret=SECRET, issuer="https://id.example")

    assert await auth.authenticate(token(iss="https://id.example")) is not None
    assert await refused(auth, token(iss="https://evil.example")) == "token issuer is not accepted"
    assert await refused(auth, token()) == "token has no iss claim"


async def test_the_audience_must_match_when_configured() -> None:
    auth = JWTAuth(secret=SECRET, audience="mcp-notes")

    assert await auth.authenticate(token(aud="mcp-notes")) is not None
    assert await auth.authenticate(token(aud=["other", "mcp-notes"])) is not None
    assert await refused(auth, token(aud="other")) == "token audience is not accepted"
    assert await refused(auth, token()) == "token has no aud claim"


async def test_any_of_several_configured_audiences_will_do() -> None:
    auth = JWTAuth(secret=SECRET, audience=["mcp-notes", "mcp-notes-staging"])

    assert await auth.authenticate(token(aud="mcp-notes-staging")) is not None


async def test_without_a_configured_audience_a_token_naming_one_is_refused(auth: JWTAuth) -> None:
    # RFC 7519 4.1.3: a token meant for another service must not be accepted here.
    assert await refused(auth, token(aud="some-other-service")) == "token names an audience (aud)"


@pytest.mark.parametrize("alg", ["none", "None", "NONE"])
async def test_an_unsigned_token_is_refused(auth: JWTAuth, alg: str) -> None:
    unsigned = forge({"alg": alg, "typ": "JWT"}, {"sub": "nour"})

    assert await refused(auth, unsigned) == "token algorithm is not accepted"


async def test_an_algorithm_outside_the_configured_list_is_refused(auth: JWTAuth) -> None:
    assert await refused(auth, token(algorithm="HS384")) == "token algorithm is not accepted"


async def test_a_token_without_an_algorithm_is_refused(auth: JWTAuth) -> None:
    assert await refused(auth, forge({"typ": "JWT"}, {"sub": "nour"}, SECRET.encode())) == (
        "token algorithm is not accepted"
    )


@pytest.mark.parametrize("sub", [None, "", "   ", 42, ["nour"]])
async def test_a_token_without_a_string_subject_is_refused(auth: JWTAuth, sub: Any) -> None:
    claims: dict[str, Any] = {"exp": NOW + 600} if sub is None else {"sub": sub, "exp": NOW + 600}
    presented = forge({"alg": "HS256"}, claims, SECRET.encode())

    assert await refused(auth, presented) == "token has no usable subject (sub)"


@pytest.mark.parametrize("prefix", [*RESERVED_PREFIXES, "STATIC:", "Local:"])
async def test_a_subject_cannot_pass_for_another_kind_of_caller(auth: JWTAuth, prefix: str) -> None:
    reason = await refused(auth, token(sub=prefix + "0123456789abcdef0123456789abcdef"))

    assert reason == "token subject uses a prefix reserved by the server"


async def test_a_refusal_keeps_the_inner_error_for_the_server_log_only(auth: JWTAuth) -> None:
    with pytest.raises(InvalidCredentialError) as caught:
        await auth.authenticate(token(key="x" * 40))

    assert isinstance(caught.value.__cause__, jwt.InvalidSignatureError)
    assert "Signature verification failed" not in caught.value.reason


# --- issuing tokens for tests -----------------------------------------------------------------------


async def test_an_issued_token_signs_in_with_the_configured_issuer_and_audience() -> None:
    auth = JWTAuth(secret=SECRET, issuer="https://id.example", audience="mcp-notes")

    identity = await auth.authenticate(auth.issue_token("nour", {"name": "Nour"}))

    assert identity is not None
    assert (identity.user_id, identity.label) == ("nour", "Nour")
    assert identity.claims["iss"] == "https://id.example"
    assert identity.claims["aud"] == "mcp-notes"
    assert NOW - 5 <= identity.claims["iat"] < identity.claims["exp"] <= identity.claims["iat"] + 3600


async def test_an_issued_token_expires(auth: JWTAuth) -> None:
    assert await refused(auth, auth.issue_token("nour", expires_in=-60)) == "token has expired"


async def test_an_issued_token_cannot_use_a_reserved_prefix(auth: JWTAuth) -> None:
    assert await refused(auth, auth.issue_token("static:abc")) == "token subject uses a prefix reserved by the server"


def test_only_a_secret_can_issue_tokens(rsa_key: rsa.RSAPrivateKey) -> None:
    with pytest.raises(TypeError, match="issue_token needs secret="):
        JWTAuth(public_key=public_pem(rsa_key)).issue_token("nour")


# --- public keys ------------------------------------------------------------------------------------


async def test_an_rs256_token_verifies_with_the_public_key(rsa_key: rsa.RSAPrivateKey) -> None:
    auth = JWTAuth(public_key=public_pem(rsa_key))

    identity = await auth.authenticate(token(rsa_key, "RS256", sub="sam"))

    assert identity is not None
    assert identity.user_id == "sam"
    assert auth.algorithms == ("RS256",)


async def test_an_es256_token_verifies_with_the_public_key(ec_key: ec.EllipticCurvePrivateKey) -> None:
    auth = JWTAuth(public_key=public_pem(ec_key))

    identity = await auth.authenticate(token(ec_key, "ES256", sub="sam"))

    assert identity is not None
    assert identity.user_id == "sam"
    assert auth.algorithms == ("ES256",)


async def test_an_eddsa_token_verifies_when_eddsa_is_asked_for() -> None:
    key = ed25519.Ed25519PrivateKey.generate()
    auth = JWTAuth(public_key=public_pem(key), algorithms=["EdDSA"])

    assert await auth.authenticate(token(key, "EdDSA")) is not None


async def test_a_token_signed_by_another_private_key_is_refused(
    rsa_key: rsa.RSAPrivateKey, other_rsa_key: rsa.RSAPrivateKey
) -> None:
    auth = JWTAuth(public_key=public_pem(rsa_key))

    assert await refused(auth, token(other_rsa_key, "RS256")) == "token signature is invalid"


@pytest.mark.parametrize("algorithms", [None, ["RS256"]])
async def test_an_hmac_token_keyed_with_the_public_pem_is_refused(
    rsa_key: rsa.RSAPrivateKey, algorithms: list[str] | None
) -> None:
    # Algorithm confusion: the attacker knows the public key and uses it as an HMAC secret.
    pem = public_pem(rsa_key)
    auth = JWTAuth(public_key=pem, algorithms=algorithms)
    forged = forge({"alg": "HS256", "typ": "JWT"}, {"sub": "nour"}, pem.encode())

    assert await refused(auth, forged) == "token algorithm is not accepted"


async def test_an_es256_token_is_refused_where_only_rsa_is_configured(
    rsa_key: rsa.RSAPrivateKey, ec_key: ec.EllipticCurvePrivateKey
) -> None:
    auth = JWTAuth(public_key=public_pem(rsa_key))

    assert await refused(auth, token(ec_key, "ES256")) == "token algorithm is not accepted"


# --- configuration ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({}, "got none"),
        ({"secret": SECRET, "jwks_url": "https://id.example/jwks"}, "got secret and jwks_url"),
    ],
)
def test_it_needs_exactly_one_source_of_keys(kwargs: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=f"exactly one of secret=.*public_key=.*jwks_url=.*{named}"):
        JWTAuth(**kwargs)


def test_a_secret_defaults_to_hs256(auth: JWTAuth) -> None:
    assert auth.algorithms == ("HS256",)


def test_jwks_defaults_to_rs256_and_es256() -> None:
    assert JWTAuth(jwks_url="https://id.example/jwks").algorithms == ("RS256", "ES256")


@pytest.mark.parametrize("algorithms", [["none"], ["HS256", "none"], ["None"]])
def test_unsigned_tokens_cannot_be_configured(algorithms: list[str]) -> None:
    with pytest.raises(ValueError, match="never accepts unsigned tokens; remove 'none'"):
        JWTAuth(secret=SECRET, algorithms=algorithms)


def test_hmac_and_public_key_algorithms_cannot_be_mixed() -> None:
    with pytest.raises(ValueError, match=r"mixes HMAC.*algorithm confusion.*use HS\* with secret="):
        JWTAuth(jwks_url="https://id.example/jwks", algorithms=["RS256", "HS256"])


def test_a_secret_cannot_verify_public_key_algorithms() -> None:
    with pytest.raises(ValueError, match=r"secret= verifies HMAC tokens.*pass public_key= or jwks_url="):
        JWTAuth(secret=SECRET, algorithms=["RS256"])


@pytest.mark.parametrize("source", ["public_key", "jwks_url"])
def test_a_public_key_source_cannot_verify_hmac(source: str, rsa_key: rsa.RSAPrivateKey) -> None:
    kwargs: dict[str, Any] = {source: public_pem(rsa_key) if source == "public_key" else "https://id.example/jwks"}

    with pytest.raises(ValueError, match=f"need a shared secret, but {source}= was given.*use RS256"):
        JWTAuth(**kwargs, algorithms=["HS256"])


@pytest.mark.parametrize(("algorithms", "message"), [([], "algorithms is empty"), ("RS256", "must be a list")])
def test_algorithms_must_be_a_non_empty_list(algorithms: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        JWTAuth(jwks_url="https://id.example/jwks", algorithms=algorithms)


def test_an_unknown_algorithm_is_refused() -> None:
    with pytest.raises(ValueError, match=r"unknown algorithm\(s\) \['RS257'\]; choose from"):
        JWTAuth(jwks_url="https://id.example/jwks", algorithms=["RS257"])


def test_a_short_secret_is_refused() -> None:
    with pytest.raises(ValueError, match=r"secret is 31 bytes but HS256 needs at least 32.*token_urlsafe"):
        JWTAuth(secret="s" * 31)


def test_a_32_byte_secret_is_enough_for_hs256() -> None:
    assert JWTAuth(secret=b"s" * 32).algorithms == ("HS256",)


def test_hs512_needs_a_64_byte_secret() -> None:
    with pytest.raises(ValueError, match="secret is 48 bytes but HS512 needs at least 64"):
        JWTAuth(secret="s" * 48, algorithms=["HS256", "HS512"])


def test_a_pem_key_passed_as_secret_is_refused(rsa_key: rsa.RSAPrivateKey) -> None:
    with pytest.raises(ValueError, match="secret looks like a PEM key; pass a public key as public_key="):
        JWTAuth(secret=public_pem(rsa_key))


def test_a_private_key_passed_as_public_key_is_refused(rsa_key: rsa.RSAPrivateKey) -> None:
    private_pem = rsa_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()

    with pytest.raises(ValueError, match="public_key is not a PEM public key") as caught:
        JWTAuth(public_key=private_pem)
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__


def test_a_weak_rsa_key_is_refused() -> None:
    weak = rsa.generate_private_key(public_exponent=65537, key_size=1024)

    with pytest.raises(ValueError, match="1024-bit RSA key; use at least 2048 bits"):
        JWTAuth(public_key=public_pem(weak))


def test_a_key_that_cannot_verify_the_chosen_algorithm_is_refused(rsa_key: rsa.RSAPrivateKey) -> None:
    with pytest.raises(ValueError, match=r"RSA 2048-bit\) cannot verify \['ES256'\]; pass algorithms=\['RS256'\]"):
        JWTAuth(public_key=public_pem(rsa_key), algorithms=["RS256", "ES256"])


def test_an_ec_key_on_the_wrong_curve_is_refused() -> None:
    p384 = ec.generate_private_key(ec.SECP384R1())

    with pytest.raises(ValueError, match=r"EC secp384r1\) cannot verify .*pass algorithms=\['ES384'\]"):
        JWTAuth(public_key=public_pem(p384), algorithms=["ES256"])


def test_an_ed25519_key_needs_eddsa_spelled_out() -> None:
    with pytest.raises(ValueError, match=r"Ed25519\) cannot verify .*pass algorithms=\['EdDSA'\]"):
        JWTAuth(public_key=public_pem(ed25519.Ed25519PrivateKey.generate()))


@pytest.mark.parametrize(
    "url", ["http://id.example/jwks", "ftp://id.example/jwks", "file:///etc/jwks.json", "/jwks", "https://"]
)
def test_jwks_must_come_over_https(url: str) -> None:
    with pytest.raises(ValueError, match="jwks_url must be an https:// URL"):
        JWTAuth(jwks_url=url)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"issuer": ""}, "issuer must be a non-empty string"),
        ({"audience": ""}, "audience must be a non-empty string or list"),
        ({"audience": []}, "audience must be a non-empty string or list"),
        ({"audience": ["ok", ""]}, "audience must be a non-empty string or list"),
        ({"leeway": -1}, "leeway is a number of seconds, 0 or more, not -1"),
        ({"leeway": float("nan")}, "leeway is a number of seconds, 0 or more, not nan"),
    ],
)
def test_bad_claim_settings_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        JWTAuth(secret=SECRET, **kwargs)


def test_the_repr_never_shows_the_secret() -> None:
    text = repr(JWTAuth(secret=SECRET, issuer="https://id.example"))

    assert SECRET not in text
    assert text == "JWTAuth(secret=<hidden>, algorithms=['HS256'], issuer='https://id.example')"


def test_the_repr_names_the_public_key_type(rsa_key: rsa.RSAPrivateKey) -> None:
    assert repr(JWTAuth(public_key=public_pem(rsa_key))) == ("JWTAuth(public_key=<RSA 2048-bit>, algorithms=['RS256'])")
