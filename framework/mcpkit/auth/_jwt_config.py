"""JWTAuth's configuration, checked when it is built: algorithms, keys, URLs, issuer, audience, durations.

Every check raises a ``ConfigurationError`` that names the argument and says what to pass instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias
from urllib.parse import urlparse

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from ..base import ConfigurationError

__all__ = [
    "ASYMMETRIC_ALGORITHMS",
    "HMAC_MIN_SECRET_BYTES",
    "PublicKey",
    "algorithms_for_key",
    "check_algorithms",
    "check_audience",
    "check_issuer",
    "check_jwks_url",
    "check_secret",
    "describe_key",
    "load_public_key",
]

PublicKey: TypeAlias = rsa.RSAPublicKey | ec.EllipticCurvePublicKey | ed25519.Ed25519PublicKey | ed448.Ed448PublicKey

#: HMAC algorithms and the shortest secret each accepts: the hash size (RFC 7518 section 3.2).
HMAC_MIN_SECRET_BYTES = {"HS256": 32, "HS384": 48, "HS512": 64}
#: Curves the ECDSA algorithms are defined on.
_EC_CURVES: dict[str, type[ec.EllipticCurve]] = {
    "ES256": ec.SECP256R1,
    "ES256K": ec.SECP256K1,
    "ES384": ec.SECP384R1,
    "ES512": ec.SECP521R1,
    "ES521": ec.SECP521R1,
}
ASYMMETRIC_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", *_EC_CURVES, "EdDSA")
_LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")


def check_algorithms(algorithms: Sequence[str] | None, source: str) -> tuple[str, ...]:
    """Refuse unsigned tokens, unknown names and any mix that invites algorithm confusion."""
    if isinstance(algorithms, str):
        raise ConfigurationError(f"JWTAuth: algorithms must be a list, e.g. algorithms=[{algorithms!r}]")
    if algorithms is None:
        return ("HS256",) if source == "secret" else ("RS256", "ES256")
    chosen = tuple(dict.fromkeys(algorithms))
    if not chosen:
        raise ConfigurationError("JWTAuth: algorithms is empty; leave it out for the default or list at least one")
    if any(not isinstance(alg, str) or alg.lower() == "none" for alg in chosen):
        raise ConfigurationError("JWTAuth never accepts unsigned tokens; remove 'none' from algorithms")
    unknown = [alg for alg in chosen if alg not in HMAC_MIN_SECRET_BYTES and alg not in ASYMMETRIC_ALGORITHMS]
    if unknown:
        known = ", ".join([*HMAC_MIN_SECRET_BYTES, *ASYMMETRIC_ALGORITHMS])
        raise ConfigurationError(f"JWTAuth: unknown algorithm(s) {unknown}; choose from {known}")
    hmac = [alg for alg in chosen if alg in HMAC_MIN_SECRET_BYTES]
    asymmetric = [alg for alg in chosen if alg not in HMAC_MIN_SECRET_BYTES]
    if hmac and asymmetric:
        raise ConfigurationError(
            f"JWTAuth: algorithms mixes HMAC {hmac} with public-key {asymmetric} (algorithm confusion: "
            "one key would be read both ways); use HS* with secret=, or RS*/PS*/ES*/EdDSA with "
            "public_key= or jwks_url="
        )
    if source == "secret" and asymmetric:
        raise ConfigurationError(
            f"JWTAuth: secret= verifies HMAC tokens (HS256, HS384, HS512), not {asymmetric}; "
            "pass public_key= or jwks_url= for public-key algorithms"
        )
    if source != "secret" and hmac:
        raise ConfigurationError(
            f"JWTAuth: {hmac} need a shared secret, but {source}= was given (algorithm confusion); "
            "use RS256, ES256, PS256 or EdDSA, or pass secret= instead"
        )
    return chosen


def check_secret(secret: str | bytes, algorithms: tuple[str, ...]) -> bytes:
    """The secret as bytes, refused when shorter than the hash of the strongest configured algorithm."""
    if not isinstance(secret, str | bytes):
        raise ConfigurationError(f"JWTAuth: secret must be str or bytes, not {type(secret).__name__}")
    raw = secret.encode() if isinstance(secret, str) else bytes(secret)
    if b"-----BEGIN" in raw:
        raise ConfigurationError("JWTAuth: secret looks like a PEM key; pass a public key as public_key= instead")
    strongest = max(algorithms, key=HMAC_MIN_SECRET_BYTES.__getitem__)
    needed = HMAC_MIN_SECRET_BYTES[strongest]
    if len(raw) < needed:
        raise ConfigurationError(
            f"JWTAuth: secret is {len(raw)} bytes but {strongest} needs at least {needed} (RFC 7518 "
            "section 3.2); generate one with secrets.token_urlsafe(64)"
        )
    return raw


def load_public_key(pem: str | bytes) -> PublicKey:
    """Parse a PEM public key, saying what to pass when it is something else."""
    raw = pem.encode() if isinstance(pem, str) else pem
    try:
        key = load_pem_public_key(raw)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        raise ConfigurationError(
            "JWTAuth: public_key is not a PEM public key ('-----BEGIN PUBLIC KEY-----'); pass the public "
            "half of the signing key, never the private key"
        ) from None
    if not isinstance(
        key, rsa.RSAPublicKey | ec.EllipticCurvePublicKey | ed25519.Ed25519PublicKey | ed448.Ed448PublicKey
    ):
        raise ConfigurationError(f"JWTAuth: public_key is a {type(key).__name__}; use an RSA, EC or Ed25519/Ed448 key")
    if isinstance(key, rsa.RSAPublicKey) and key.key_size < 2048:
        raise ConfigurationError(f"JWTAuth: public_key is a {key.key_size}-bit RSA key; use at least 2048 bits")
    return key


def algorithms_for_key(key: PublicKey, algorithms: tuple[str, ...], *, explicit: bool) -> tuple[str, ...]:
    """Keep the algorithms this key can verify; refuse an explicit choice it cannot."""
    fitting = tuple(alg for alg in algorithms if _fits(key, alg))
    misfits = [alg for alg in algorithms if alg not in fitting]
    if fitting and not (explicit and misfits):
        return fitting
    suggestion = [alg for alg in ASYMMETRIC_ALGORITHMS if _fits(key, alg)][:1]
    raise ConfigurationError(
        f"JWTAuth: public_key ({describe_key(key)}) cannot verify {misfits}; pass algorithms={suggestion}"
    )


def _fits(key: PublicKey, algorithm: str) -> bool:
    if algorithm.startswith(("RS", "PS")):
        return isinstance(key, rsa.RSAPublicKey)
    if algorithm == "EdDSA":
        return isinstance(key, ed25519.Ed25519PublicKey | ed448.Ed448PublicKey)
    return isinstance(key, ec.EllipticCurvePublicKey) and isinstance(key.curve, _EC_CURVES[algorithm])


def describe_key(key: PublicKey) -> str:
    if isinstance(key, rsa.RSAPublicKey):
        return f"RSA {key.key_size}-bit"
    if isinstance(key, ec.EllipticCurvePublicKey):
        return f"EC {key.curve.name}"
    return "Ed25519" if isinstance(key, ed25519.Ed25519PublicKey) else "Ed448"


def check_jwks_url(url: str) -> str:
    """An https URL (plain http only for loopback, where nobody can tamper with the keys in transit)."""
    if not isinstance(url, str):
        raise ConfigurationError(f"JWTAuth: jwks_url must be a string URL, not {type(url).__name__}")
    parsed = urlparse(url)
    if not parsed.hostname or not (
        parsed.scheme == "https" or (parsed.scheme == "http" and parsed.hostname in _LOOPBACK_HOSTS)
    ):
        raise ConfigurationError(f"JWTAuth: jwks_url must be an https:// URL (http:// only for localhost); got {url!r}")
    return url


def check_issuer(issuer: str | None) -> str | None:
    if issuer is not None and (not isinstance(issuer, str) or not issuer):
        raise ConfigurationError(f"JWTAuth: issuer must be a non-empty string or None; got {issuer!r}")
    return issuer


def check_audience(audience: str | Sequence[str] | None) -> str | list[str] | None:
    if audience is None or (isinstance(audience, str) and audience):
        return audience
    values = [] if isinstance(audience, str) else list(audience)
    if not values or any(not isinstance(value, str) or not value for value in values):
        raise ConfigurationError(
            f"JWTAuth: audience must be a non-empty string or list of them (the identifier your identity "
            f"provider puts in 'aud' for this server); got {audience!r}"
        )
    return values
