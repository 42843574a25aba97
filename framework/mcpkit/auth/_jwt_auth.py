"""JSON Web Tokens: callers signed in by an identity provider, verified with PyJWT."""

from __future__ import annotations

import binascii
import copy
import json
import math
import re
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import anyio.to_thread
import jwt
from jwt import PyJWK, PyJWKClient
from jwt.exceptions import (
    DecodeError,
    InvalidAlgorithmError,
    InvalidAudienceError,
    InvalidIssuerError,
    InvalidSignatureError,
    InvalidSubjectError,
    MissingRequiredClaimError,
    PyJWKClientConnectionError,
    PyJWKClientError,
    PyJWTError,
)
from jwt.utils import base64url_decode

from ..base import (
    RESERVED_PREFIXES,
    AuthUnavailableError,
    ConfigurationError,
    Identity,
    InvalidCredentialError,
    checked_flag,
    checked_seconds,
)
from ._jwt_config import (
    PublicKey,
    algorithms_for_key,
    check_algorithms,
    check_audience,
    check_issuer,
    check_jwks_url,
    check_secret,
    describe_key,
    load_public_key,
)
from ._token_cache import TokenCache, token_key

__all__ = ["JWKSUnavailableError", "JWTAuth"]

_JWT_SHAPE = re.compile(r"([A-Za-z0-9_-]+)\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
_JWKS_TIMEOUT_SECONDS = 10.0
_NO_SUBJECT = "token has no usable subject (sub)"
#: PyJWT checks signature, issuer and audience; the time claims are ours, because PyJWT reads them with
#: ``int()`` and so accepts ``"exp": "99999999999"`` or ``"exp": true``.
_OWN_TIME_CHECKS: Any = {"verify_exp": False, "verify_nbf": False, "verify_iat": False}
#: Verified tokens whose identity is kept, so that a caller's next call does not verify its signature again.
VERIFIED_TOKENS = 10_000
#: How long a verification is reused at most (with ``jwks_url``, no longer than the key set is cached).
VERIFIED_SECONDS = 300.0


class JWKSUnavailableError(AuthUnavailableError):
    """The JWKS endpoint could not be read: a server-side outage, not the caller's fault (answer 503)."""


class JWTAuth:
    """Accepts JWT bearer tokens signed with a shared secret, a public key, or a key from a JWKS URL.

    A token that is not shaped like a JWT (three base64url segments whose first decodes to a JSON
    object) is left to other authenticators. ``exp`` is required unless ``require_exp=False`` (for
    identity providers that omit it); ``exp``, ``nbf`` and ``iat`` must be JSON numbers and are
    honoured with ``leeway`` seconds of slack. A token must name this server in ``aud``: the
    ``audience`` given here, or else the ``Server``'s ``resource_url`` (RFC 8707; MCP servers must only
    accept tokens meant for them); a ``Server`` refuses a ``JWTAuth`` with neither, unless
    ``allow_no_audience=True`` (for a provider that cannot set one: tokens without ``aud`` pass, a token
    with one must still name this server). The ``sub`` claim becomes the user id and must not use a prefix
    mcpkit reserves.
    """

    def __init__(
        self,
        *,
        secret: str | bytes | None = None,
        public_key: str | bytes | None = None,
        jwks_url: str | None = None,
        algorithms: Sequence[str] | None = None,
        issuer: str | None = None,
        audience: str | Sequence[str] | None = None,
        leeway: float = 0,
        require_exp: bool = True,
        jwks_cache_seconds: float = 300,
        jwks_refresh_cooldown: float = 30,
        allow_no_audience: bool = False,
    ) -> None:
        given = [
            name
            for name, v in (("secret", secret), ("public_key", public_key), ("jwks_url", jwks_url))
            if v is not None
        ]
        if len(given) != 1:
            raise ConfigurationError(
                "JWTAuth needs exactly one of secret= (a shared HMAC secret), public_key= (a PEM public "
                "key) or jwks_url= (your identity provider's JWKS endpoint); "
                f"got {' and '.join(given) or 'none'}"
            )
        self._algorithms = check_algorithms(algorithms, given[0])
        self._issuer = check_issuer(issuer)
        self._audience = check_audience(audience)
        self._resource: str | None = None  # the server's resource URL, once bound to it
        self._allow_no_audience = checked_flag("JWTAuth: allow_no_audience", allow_no_audience)
        self._namespace = ""  # set by Server for a second issuer's tokens (namespaced)
        self._own_issuer_only = False  # set by Server beside other OAuth authenticators: other issuers' JWTs are theirs
        self._leeway = checked_seconds("JWTAuth: leeway", leeway, zero=True)
        self._require_exp = checked_flag("JWTAuth: require_exp", require_exp)
        self._key: bytes | PublicKey | _JWKSKeys
        self._verified_seconds = VERIFIED_SECONDS
        self._verified: TokenCache[Identity] = TokenCache(VERIFIED_TOKENS)
        if secret is not None:
            self._key = check_secret(secret, self._algorithms)
        elif public_key is not None:
            key = load_public_key(public_key)
            self._algorithms = algorithms_for_key(key, self._algorithms, explicit=algorithms is not None)
            self._key = key
        else:
            assert jwks_url is not None
            self._key = _JWKSKeys(
                check_jwks_url(jwks_url),
                cache_seconds=checked_seconds("JWTAuth: jwks_cache_seconds", jwks_cache_seconds),
                refresh_cooldown=checked_seconds("JWTAuth: jwks_refresh_cooldown", jwks_refresh_cooldown, zero=True),
            )
            self._verified_seconds = min(VERIFIED_SECONDS, float(jwks_cache_seconds))

    @property
    def algorithms(self) -> tuple[str, ...]:
        """The signature algorithms this authenticator accepts."""
        return self._algorithms

    @property
    def issuer(self) -> str | None:
        """The ``iss`` every token must carry (None: any); a server's default authorization server."""
        return self._issuer

    @property
    def needs_audience(self) -> bool:
        """True when nothing says which ``aud`` tokens must carry: a ``Server`` refuses such an authenticator."""
        return self._audience is None and not self._allow_no_audience

    def namespaced(self, prefix: str) -> JWTAuth:
        """This authenticator beside other identity providers: ``prefix`` goes before every user id, and a JWT
        whose ``iss`` is not this one's is left to the others (``Server`` does this when it has several)."""
        copied = copy.copy(self)
        copied._namespace = prefix
        copied._own_issuer_only = True
        copied._verified = TokenCache(VERIFIED_TOKENS)  # its identities are named otherwise
        return copied

    def bound_to(self, resource: str) -> JWTAuth:
        """This authenticator for a server at ``resource``: without an ``audience`` of its own, tokens must name it.

        A server with ``resource_url`` uses this copy (RFC 8707: a token is for the resource it names).
        """
        if self._audience is not None:
            return self
        bound = copy.copy(self)
        bound._audience = bound._resource = resource
        bound._verified = TokenCache(VERIFIED_TOKENS)  # judged against another audience
        return bound

    async def authenticate(self, token: str) -> Identity | None:
        """The caller named by a valid token's ``sub``; ``None`` for a token that is not a JWT.

        A token verified before (within ``VERIFIED_SECONDS``) is not verified again; its time claims are.
        """
        key_of_token, now = token_key(token), time.monotonic()
        known = self._verified.get(key_of_token, now)
        if known is not None:
            _check_time_claims(known.claims, require_exp=self._require_exp, leeway=self._leeway)
            return known
        header = _jwt_header(token)
        if header is None or (self._own_issuer_only and _unverified_issuer(token) != self._issuer):
            return None
        if header.get("alg") not in self._algorithms:
            raise InvalidCredentialError("token algorithm is not accepted")
        key: bytes | PublicKey | PyJWK
        if isinstance(self._key, _JWKSKeys):
            key = await self._key.key_for(header.get("kid"))
        else:
            key = self._key
        audience = self._audience
        if self._allow_no_audience and audience is not None and "aud" not in _unverified_claims(token):
            audience = None  # allowed to carry none (its signature is still checked below)
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=list(self._algorithms),
                issuer=self._issuer,
                audience=audience,
                options=_OWN_TIME_CHECKS,
            )
        except PyJWTError as exc:
            reason = _reason(exc, audience_configured=self._audience is not None)
            if self._resource is not None and isinstance(exc, InvalidAudienceError):  # the URL is public (RFC 9728)
                reason += f": tokens here must be for {self._resource}"
            raise InvalidCredentialError(reason) from exc
        _check_time_claims(claims, require_exp=self._require_exp, leeway=self._leeway)
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject.strip():
            raise InvalidCredentialError(_NO_SUBJECT)
        if subject.lower().startswith(RESERVED_PREFIXES):
            raise InvalidCredentialError("token subject uses a prefix reserved by the server")
        name = claims.get("name")
        label = name if isinstance(name, str) and name else None
        identity = Identity(user_id=self._namespace + subject, kind="user", label=label, claims=claims)
        self._verified.put(key_of_token, identity, now + self._verified_seconds)
        return identity

    def issue_token(self, sub: str, claims: Mapping[str, Any] | None = None, *, expires_in: float = 3600) -> str:
        """A token this authenticator accepts, for tests and local tools (only with ``secret=``).

        It carries ``sub``, ``iat``, ``exp`` and the configured ``iss``/``aud``; ``claims`` add to or override them.
        """
        if not isinstance(self._key, bytes):
            raise TypeError(
                "JWTAuth.issue_token needs secret=; with public_key= or jwks_url= tokens come from the "
                "holder of the private key (your identity provider)"
            )
        now = int(time.time())
        payload: dict[str, Any] = {"sub": sub, "iat": now, "exp": now + int(expires_in)}
        if self._issuer is not None:
            payload["iss"] = self._issuer
        if self._audience is not None:
            payload["aud"] = self._audience
        payload.update(claims or {})
        return jwt.encode(payload, self._key, algorithm=self._algorithms[0])

    def __repr__(self) -> str:
        if isinstance(self._key, bytes):
            source = "secret=<hidden>"
        elif isinstance(self._key, _JWKSKeys):
            source = f"jwks_url={self._key.url!r}"
        else:
            source = f"public_key=<{describe_key(self._key)}>"
        extras = "".join(
            f", {name}={value!r}"
            for name, value in (
                ("issuer", self._issuer),
                ("audience", self._audience),
                ("leeway", self._leeway),
                ("allow_no_audience", self._allow_no_audience),
            )
            if value
        )
        if not self._require_exp:
            extras += ", require_exp=False"
        return f"JWTAuth({source}, algorithms={list(self._algorithms)!r}{extras})"


class _JWKSKeys:
    """Signing keys from a JWKS URL: the key set is cached, and fetched in a worker thread."""

    def __init__(self, url: str, *, cache_seconds: float, refresh_cooldown: float) -> None:
        self.url = url
        # Only the key-set cache (it expires, so keys removed upstream stop verifying); PyJWT's
        # per-kid LRU cache never expires and would keep honouring a revoked key.
        self._client = PyJWKClient(
            url,
            cache_keys=False,
            cache_jwk_set=True,
            lifespan=cache_seconds,
            timeout=_JWKS_TIMEOUT_SECONDS,
            cooldown_duration=refresh_cooldown,
        )
        self._lock = threading.Lock()

    async def key_for(self, kid: object) -> PyJWK:
        """The signing key named ``kid``, from the cache when fresh, otherwise fetched off the event loop."""
        if not isinstance(kid, str) or not kid:
            raise InvalidCredentialError("token has no key id (kid)")
        cached = self._cached(kid)
        if cached is not None:
            return cached
        return await anyio.to_thread.run_sync(self._fetch, kid)

    def _cached(self, kid: str) -> PyJWK | None:
        cache = self._client.jwk_set_cache
        jwk_set = cache.get() if cache is not None else None
        if jwk_set is None:
            return None
        return next((k for k in jwk_set.keys if k.key_id == kid and k.public_key_use in ("sig", None)), None)

    def _fetch(self, kid: str) -> PyJWK:
        """Blocking: read the key set (one thread at a time), refreshing once for an unknown kid."""
        with self._lock:
            try:
                key = self._client.match_kid(self._client.get_signing_keys(), kid)
                return key if key is not None else self._refetch(kid)
            except PyJWKClientConnectionError as exc:
                raise JWKSUnavailableError(f"JWTAuth could not fetch signing keys from {self.url}: {exc}") from exc
            except (PyJWTError, ValueError, OSError) as exc:
                raise JWKSUnavailableError(f"JWTAuth could not read signing keys from {self.url}: {exc}") from exc

    def _refetch(self, kid: str) -> PyJWK:
        """Fetch the key set again for an unknown kid (key rotation), unless the cooldown forbids it.

        The cooldown means tokens with made-up kids cannot make us hammer the identity provider.
        """
        try:
            return self._client.get_signing_key(kid)
        except PyJWKClientConnectionError:
            raise
        except PyJWKClientError as exc:
            raise InvalidCredentialError("token signing key (kid) is not known") from exc


def _jwt_header(token: str) -> dict[str, Any] | None:
    """The decoded JOSE header if ``token`` is shaped like a JWT, else ``None``."""
    shape = _JWT_SHAPE.fullmatch(token)
    if shape is None:
        return None
    try:
        header = json.loads(base64url_decode(shape.group(1)))
    except (ValueError, binascii.Error, RecursionError):
        return None
    return header if isinstance(header, dict) else None


def _unverified_claims(token: str) -> dict[str, Any]:
    """The claims of a JWT-shaped token before any check: only to choose how to check it ({} if unreadable)."""
    try:
        claims = json.loads(base64url_decode(token.split(".")[1]))
    except (ValueError, binascii.Error, RecursionError):
        return {}
    return claims if isinstance(claims, dict) else {}


def _unverified_issuer(token: str) -> object:
    """The ``iss`` a JWT-shaped token claims, before any check: only to pick which authenticator checks it."""
    return _unverified_claims(token).get("iss")


def _check_time_claims(claims: Mapping[str, Any], *, require_exp: bool, leeway: float) -> None:
    """Refuse a token without ``exp`` (when required), with a time claim that is not a JSON number, or out of date.

    RFC 7519 section 2 defines these claims as a NumericDate, "a JSON numeric value": a string or a
    boolean is refused rather than converted.
    """
    if require_exp and "exp" not in claims:
        raise InvalidCredentialError("token has no expiry (exp)")
    for name in ("exp", "nbf", "iat"):
        if name in claims and not _is_number(claims[name]):
            raise InvalidCredentialError(f"token {name} claim is not a number of seconds")
    now = time.time()
    if "exp" in claims and claims["exp"] <= now - leeway:
        raise InvalidCredentialError("token has expired")
    if any(name in claims and claims[name] > now + leeway for name in ("nbf", "iat")):
        raise InvalidCredentialError("token is not yet valid")


def _is_number(value: object) -> bool:
    """A finite JSON number: an int (not a bool) or a finite float; JSON parsers also read NaN and Infinity."""
    return (isinstance(value, int) and not isinstance(value, bool)) or (
        isinstance(value, float) and math.isfinite(value)
    )


def _reason(exc: PyJWTError, *, audience_configured: bool) -> str:
    """A short reason safe to send to the client: never the token, never PyJWT's own message."""
    if isinstance(exc, InvalidSignatureError):
        return "token signature is invalid"
    if isinstance(exc, InvalidAudienceError):
        return "token audience is not accepted" if audience_configured else "token names an audience (aud)"
    if isinstance(exc, InvalidIssuerError):
        return "token issuer is not accepted"
    if isinstance(exc, MissingRequiredClaimError) and exc.claim in ("aud", "iss"):
        return f"token has no {exc.claim} claim"
    if isinstance(exc, InvalidSubjectError):
        return _NO_SUBJECT
    if isinstance(exc, InvalidAlgorithmError):
        return "token algorithm is not accepted"
    if isinstance(exc, DecodeError):
        return "token is malformed"
    return "token is invalid"
