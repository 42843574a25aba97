"""``IntrospectionAuth``: opaque bearer tokens, checked with the identity provider (OAuth 2.0 Token Introspection).

The provider answers whether a token is active and for whom (RFC 7662). Answers are cached for a short while,
by a hash of the token, so a burst of calls costs one request; a revoked token stops working when its cached
answer ends (``cache_seconds``). A provider that cannot be reached, or that refuses the server's own client
credentials, is an outage (503), never a reason to let the caller in anonymously.
"""

from __future__ import annotations

import copy
import logging
import math
import ssl
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import anyio
import httpx2

from ..base import (
    RESERVED_PREFIXES,
    AuthUnavailableError,
    Clock,
    ConfigurationError,
    Identity,
    InvalidCredentialError,
    SystemClock,
    checked_flag,
    checked_seconds,
    checked_whole,
)
from ._resource_metadata import oauth_url
from ._token_cache import TokenCache, token_key

__all__ = ["IntrospectionAuth"]

logger = logging.getLogger("mcpkit.auth")

#: Answers kept at most, so that a flood of made-up tokens cannot grow the cache without bound.
DEFAULT_CACHE_SIZE = 10_000

#: Refusals kept at most, apart from the answers, so that made-up tokens never push real ones out.
REFUSALS_CACHED = 1_000

#: Requests to the provider at once, per authenticator; more wait their turn (within ``timeout``).
CONCURRENT_REQUESTS = 8

#: What an answer's ``token_type`` may say: an access token, not a refresh token (RFC 7662 section 2.2).
ACCESS_TOKEN_TYPES = frozenset({"access_token", "bearer"})


class IntrospectionAuth:
    """Accepts opaque tokens that the identity provider's introspection endpoint says are active.

    ``url`` is the endpoint (``introspection_endpoint`` in the provider's metadata); ``client_id`` and
    ``client_secret`` are this server's own credentials there (HTTP Basic). ``issuer`` and ``audience``
    are required in the answer when configured (an ``audience`` also comes from the server's ``resource_url``);
    ``exp``, ``nbf`` and ``token_type`` are checked when present; ``sub`` is the user id. As with
    ``JWTAuth``, a ``Server`` refuses it without an audience (its own or the server's ``resource_url``)
    unless ``allow_no_audience=True`` (answers without ``aud`` pass; one with it must still name this server).
    ``clock`` (default: the system's) times the cache and ``exp``; tests pass a ``ManualClock``.
    Put it after ``StaticKeys`` in ``auth=[...]``: every token it is given is sent to the provider.
    """

    def __init__(
        self,
        url: str,
        *,
        client_id: str,
        client_secret: str,
        issuer: str | None = None,
        audience: str | Sequence[str] | None = None,
        cache_seconds: float = 30.0,
        cache_size: int = DEFAULT_CACHE_SIZE,
        timeout: float = 5.0,
        clock: Clock | None = None,
        allow_no_audience: bool = False,
    ) -> None:
        self._clock: Clock = SystemClock() if clock is None else clock
        self._url = oauth_url("IntrospectionAuth url", url, identifier=False)
        for name, value in (("client_id", client_id), ("client_secret", client_secret)):
            if not isinstance(value, str) or not value:
                raise ConfigurationError(
                    f"IntrospectionAuth: {name} is this server's client credential, a non-empty string."
                )
        self._credentials = (client_id, client_secret)
        if issuer is not None and (not isinstance(issuer, str) or not issuer):
            raise ConfigurationError(f"IntrospectionAuth: issuer is a non-empty string or None, not {issuer!r}.")
        self._issuer = issuer
        self._audience = _checked_audience(audience)
        self._allow_no_audience = checked_flag("IntrospectionAuth: allow_no_audience", allow_no_audience)
        self._namespace = ""  # set by Server for a second issuer's tokens (namespaced)
        self._cache_seconds = checked_seconds("IntrospectionAuth: cache_seconds", cache_seconds, zero=True)
        self._cache_size = checked_whole("IntrospectionAuth: cache_size", cache_size, least=0, unit="tokens (0: none)")
        self._timeout = checked_seconds("IntrospectionAuth: timeout", timeout)
        # The identity, or why not, until the answer stops being used (monotonic clock); refusals apart, so that
        # made-up tokens never push real answers out.
        self._cache, self._refusals = self._new_caches()
        self._requests = anyio.CapacityLimiter(CONCURRENT_REQUESTS)
        self._flights: dict[bytes, _Flight] = {}  # sha256(token) -> the request asking about it now
        self._tls = ssl.create_default_context()  # loaded once: building it reads the CA bundle, blocking

    #: Every token it is given leaves the server (to the provider): ``Server`` wants static keys tried first.
    sends_tokens_away = True

    @property
    def issuer(self) -> str | None:
        """The issuer answers must name (None: any); a server's default authorization server."""
        return self._issuer

    @property
    def needs_audience(self) -> bool:
        """True when nothing says which ``aud`` answers must carry: a ``Server`` refuses such an authenticator."""
        return self._audience is None and not self._allow_no_audience

    def namespaced(self, prefix: str) -> IntrospectionAuth:
        """This authenticator with ``prefix`` before every user id (``Server`` does this per issuer)."""
        copied = self._copy()
        copied._namespace = prefix
        return copied

    def bound_to(self, resource: str) -> IntrospectionAuth:
        """This authenticator for a server at ``resource``: without an ``audience`` of its own, answers must name it."""
        if self._audience is not None:
            return self
        bound = self._copy()
        bound._audience = [resource]
        return bound

    def _new_caches(self) -> tuple[TokenCache[Identity | str], TokenCache[Identity | str]]:
        size = self._cache_size if self._cache_seconds else 0
        return TokenCache(size), TokenCache(min(REFUSALS_CACHED, size))

    def _copy(self) -> IntrospectionAuth:
        copied = copy.copy(self)
        copied._cache, copied._refusals = copied._new_caches()  # answers judged otherwise are not reused
        copied._requests = anyio.CapacityLimiter(CONCURRENT_REQUESTS)
        copied._flights = {}
        return copied

    async def authenticate(self, token: str) -> Identity | None:
        key = token_key(token)
        now = self._clock.monotonic()
        for cache in (self._cache, self._refusals):
            cached = cache.get(key, now)
            if cached is not None:
                return _outcome(cached)
        flight = self._flights.get(key)
        if flight is not None:  # the same token is being asked about already: share its answer
            await flight.done.wait()
            if flight.outcome is not None:
                return _outcome(flight.outcome)
            if flight.error is not None:
                raise AuthUnavailableError(str(flight.error))
            return await self.authenticate(token)  # that request was cancelled: ask again
        flight = self._flights[key] = _Flight()
        try:
            outcome = await self._answer(key, token)
            flight.outcome = outcome
        except AuthUnavailableError as exc:
            flight.error = exc
            raise
        finally:
            del self._flights[key]
            flight.done.set()
        return _outcome(outcome)

    async def _answer(self, key: bytes, token: str) -> Identity | str:
        """Ask the provider about ``token`` (sha256 ``key``), judge the answer and cache the outcome."""
        answer = await self._introspect(token)
        outcome, until = self._judge(answer)
        cache = self._refusals if isinstance(outcome, str) else self._cache
        cache.put(key, outcome, min(self._clock.monotonic() + self._cache_seconds, until))
        return outcome

    async def _introspect(self, token: str) -> Mapping[str, Any]:
        try:
            with anyio.fail_after(self._timeout):  # the whole exchange, waiting for a turn included
                async with self._requests, httpx2.AsyncClient(timeout=self._timeout, verify=self._tls) as http:
                    response = await http.post(
                        self._url,
                        data={"token": token, "token_type_hint": "access_token"},
                        auth=self._credentials,
                        headers={"Accept": "application/json"},
                    )
        except TimeoutError:
            raise AuthUnavailableError(f"the introspection endpoint {self._url} did not answer in time") from None
        except httpx2.HTTPError as exc:
            raise AuthUnavailableError(f"the introspection endpoint {self._url} cannot be reached: {exc!r}") from None
        if response.status_code in (401, 403):
            logger.error(
                "the introspection endpoint %s refused this server's client credentials (HTTP %d): check client_id "
                "and client_secret",
                self._url,
                response.status_code,
            )
            raise AuthUnavailableError("the introspection endpoint refused the server's client credentials")
        if response.status_code != 200:
            raise AuthUnavailableError(f"the introspection endpoint answered HTTP {response.status_code}")
        try:
            answer = response.json()
        except ValueError:
            raise AuthUnavailableError("the introspection endpoint did not answer JSON") from None
        if not isinstance(answer, dict) or not isinstance(answer.get("active"), bool):
            raise AuthUnavailableError("the introspection endpoint's answer has no boolean 'active' (RFC 7662)")
        return answer

    def _judge(self, answer: Mapping[str, Any]) -> tuple[Identity | str, float]:
        """The caller an answer names, or why the token is refused; and until when (monotonic) that holds."""
        forever = math.inf
        if not answer["active"]:
            return "token is not active (expired, revoked or unknown)", forever
        kind = answer.get("token_type")
        if kind is not None and (not isinstance(kind, str) or kind.lower() not in ACCESS_TOKEN_TYPES):
            return "token is not an access token", forever
        now = self._clock.now()
        for name in ("exp", "nbf"):
            value = answer.get(name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float) or not _finite(value)
            ):
                return f"token {name} is not a number of seconds", forever
        starts = answer.get("nbf")
        if starts is not None and starts > now:
            return "token is not valid yet (nbf)", forever
        expires = answer.get("exp")
        left = forever if expires is None else expires - now
        if left <= 0:
            return "token has expired", forever
        until = self._clock.monotonic() + left
        if self._issuer is not None and answer.get("iss") != self._issuer:
            return "token issuer is not accepted", until
        audience = answer.get("aud")
        named = [audience] if isinstance(audience, str) else audience if isinstance(audience, list) else []
        missing = audience is None or audience in ("", [])
        excused = self._allow_no_audience and missing  # allowed to name none
        if self._audience is None and self._allow_no_audience and not missing:  # meant for someone, and not us
            return "token names an audience (aud)", until
        if self._audience is not None and not excused and not any(entry in self._audience for entry in named):
            return "token audience is not accepted", until
        subject = answer.get("sub")
        if not isinstance(subject, str) or not subject.strip():
            return "token has no subject (sub)", until
        if subject.lower().startswith(RESERVED_PREFIXES):
            return "token subject uses a prefix reserved by the server", until
        username = answer.get("username")
        label = username if isinstance(username, str) and username else None
        identity = Identity(self._namespace + subject, "user", label, MappingProxyType(dict(answer)))
        return identity, until

    def __repr__(self) -> str:
        return f"IntrospectionAuth({self._url!r}, client_id={self._credentials[0]!r}, client_secret=<hidden>)"


class _Flight:
    """One request to the provider about one token, which concurrent callers with that token wait for."""

    __slots__ = ("done", "error", "outcome")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.outcome: Identity | str | None = None
        self.error: AuthUnavailableError | None = None


def _finite(number: float) -> bool:
    try:
        return math.isfinite(number)
    except OverflowError:  # an integer too large for a float
        return False


def _outcome(outcome: Identity | str) -> Identity:
    if isinstance(outcome, str):
        raise InvalidCredentialError(outcome)
    return outcome


def _checked_audience(audience: str | Sequence[str] | None) -> list[str] | None:
    if audience is None:
        return None
    values = [audience] if isinstance(audience, str) else list(audience)
    if not values or not all(isinstance(value, str) and value for value in values):
        raise ConfigurationError(
            f"IntrospectionAuth: audience is a non-empty string or list of them, not {audience!r}."
        )
    return values
