"""The HTTP authentication gate: who is calling, or 401 — never a silent downgrade to anonymous."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp_types import INTERNAL_ERROR, INVALID_REQUEST
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..base import (
    IDENTITY_SCOPE_KEY,
    Authenticator,
    AuthUnavailableError,
    Identity,
    InvalidCredentialError,
    rpc_error,
    send_json,
)
from ._oauth_scopes import RequiredScopes, missing_scopes
from ._resource_metadata import ResourceMetadata
from ._resource_names import resource_names

__all__ = ["AuthGate"]

logger = logging.getLogger("mcpkit.auth")

#: How many callers' SDK user objects a gate keeps before starting afresh.
_SDK_USERS_KEPT = 4096

#: What a 503 asks the client to wait, in seconds, when sign-in cannot be checked.
RETRY_AFTER_SECONDS = 5


@dataclass(frozen=True, slots=True)
class _Address:
    """What the gate says and checks at one of the server's names: its metadata, its challenge, its audience."""

    metadata: ResourceMetadata | None
    challenge: str
    authenticators: tuple[Authenticator, ...]


class AuthGate:
    """ASGI middleware: checks the bearer token of every HTTP request before the MCP app sees it.

    A request without credentials passes as anonymous only when the server allows
    anonymous callers; a present but invalid credential always gets HTTP 401 with a
    ``WWW-Authenticate`` header. The signed-in caller is also put where the SDK looks
    for it (``scope["user"]``), so a 2025-11-25 session stays bound to the credential
    that opened it. Refusals are JSON-RPC errors that carry the OAuth error (RFC 6750) as
    their ``data``, so that MCP clients show it.

    With ``metadata``, a request whose ``Host`` is one of ``allowed_hosts`` at the configured
    port is answered as that name's resource (``_resource_names``), and its token must be meant
    for that resource: ``authenticators_at(resource)`` are the authenticators bound to it.
    """

    def __init__(
        self,
        app: ASGIApp,
        authenticators: Sequence[Authenticator],
        *,
        allow_anonymous: bool,
        metadata: ResourceMetadata | None = None,
        required_scopes: RequiredScopes | None = None,
        max_body_bytes: int = 0,
        allowed_hosts: Sequence[str] = (),
        authenticators_at: Callable[[str], Sequence[Authenticator]] | None = None,
    ) -> None:
        self._app = app
        # Tools, prompts and resources that need OAuth scopes: a caller whose token lacks them gets 403 naming
        # them (step-up) here, the tool, prompt or URI read from the request body (up to max_body_bytes).
        self._required = required_scopes
        # A caller granted every scope any of them needs may ask for any: no need to read which it names.
        self._every_scope = required_scopes.every if required_scopes else frozenset()
        self._max_body_bytes = max_body_bytes
        self._allow_anonymous = allow_anonymous
        self._users: dict[str, AuthenticatedUser] = {}
        # With Protected Resource Metadata: served here, to anyone (it is how a client learns to sign in),
        # and named in every 401, for the name the client used.
        self._metadata_paths = frozenset(metadata.paths) if metadata is not None else frozenset()
        self._address = _Address(metadata, _challenge(metadata), tuple(authenticators))
        self._addresses: dict[str, _Address] = {}
        if metadata is not None:
            names = resource_names(metadata, allowed_hosts)
            bound = {metadata.resource: self._address.authenticators}
            for resource in names.resources[1:]:
                bound[resource] = tuple(authenticators_at(resource) if authenticators_at else authenticators)
            for host, named in names.by_host.items():
                self._addresses[host] = _Address(named, _challenge(named), bound[named.resource])

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        address = (
            self._addresses.get(_header(scope, b"host") or "", self._address) if self._addresses else self._address
        )
        if address.metadata is not None and scope["path"] in self._metadata_paths:
            await address.metadata.serve(scope, receive, send)
            return
        header = _header(scope, b"authorization")
        if header is None:
            if not self._allow_anonymous:
                await _unauthorized(
                    send,
                    address,
                    "unauthorized",
                    "This server needs a bearer token: send 'Authorization: Bearer <token>'.",
                )
                return
            scope[IDENTITY_SCOPE_KEY] = None
            if self._required:
                checked = await self._check_scopes(scope, receive, send, None, address)
                if checked is None:
                    return
                receive = checked
            await self._app(scope, receive, send)
            return
        scheme, _, token = header.partition(" ")
        # RFC 6750: "Bearer" 1*SP token. Nothing else is trimmed: a key with a trailing tab or
        # no-break space is not the key (str.strip() would have made it one).
        token = token.lstrip(" ")
        if scheme.lower() != "bearer" or not token or " " in token or not token.isprintable():
            await _unauthorized(
                send,
                address,
                "invalid_request",
                "Malformed Authorization header: expected 'Bearer <token>', with no whitespace or control "
                "characters in the token.",
            )
            return
        try:
            identity = await _authenticate(address.authenticators, token)
        except InvalidCredentialError as exc:
            await _unauthorized(send, address, "invalid_token", f"The bearer token was refused: {exc.reason}")
            return
        except AuthUnavailableError:
            logger.warning("authentication unavailable", exc_info=True)
            await _respond(
                send,
                503,
                "temporarily_unavailable",
                "Sign-in cannot be checked right now; retry.",
                extra=[(b"retry-after", str(RETRY_AFTER_SECONDS).encode())],
            )
            return
        except Exception:
            error_id = uuid.uuid4().hex[:12]
            logger.exception("authentication crashed [error id %s]", error_id)
            await _respond(send, 500, "server_error", f"Authentication failed on the server (error id {error_id}).")
            return
        if identity is None:
            await _unauthorized(
                send, address, "invalid_token", "The bearer token is not a key or token this server accepts."
            )
            return
        scope[IDENTITY_SCOPE_KEY] = identity
        scope["user"] = self._sdk_user(identity.user_id)
        if self._required:
            checked = await self._check_scopes(scope, receive, send, identity, address)
            if checked is None:
                return
            receive = checked
        await self._app(scope, receive, send)

    async def _check_scopes(
        self, scope: Scope, receive: Receive, send: Send, identity: Identity | None, address: _Address
    ) -> Receive | None:
        """The request's receive (replayed if the body was read) when the caller may call the tool it names; None
        when it was answered: 401 for an anonymous caller, 403 ``insufficient_scope`` for a token without them."""
        if not missing_scopes(self._every_scope, identity):  # static keys, or a token granted them all
            return receive
        assert self._required is not None
        method, name, receive = await _called(scope, receive, self._max_body_bytes)
        if method is None or name is None:
            return receive
        lacking = missing_scopes(self._required.of(method, name), identity)
        if not lacking:
            return receive
        wanted = " ".join(sorted(lacking))
        what = _WHAT[method].format(name=name)
        if identity is None:
            description = f"{what} needs a signed-in caller with the OAuth scope(s) {wanted}."
            challenge = f'{address.challenge}, scope="{wanted}"'
            await _respond(send, 401, "unauthorized", description, challenge)
            return None
        description = (
            f"{what} needs the OAuth scope(s) {wanted}, which this token does not grant: sign in again asking for them."
        )
        challenge = f'{address.challenge}, error="insufficient_scope", scope="{wanted}"'
        await _respond(send, 403, "insufficient_scope", description, challenge)
        return None

    def _sdk_user(self, user_id: str) -> AuthenticatedUser:
        """The SDK's view of the caller (it binds sessions to it); the same few callers come back, so keep them."""
        user = self._users.get(user_id)
        if user is None:
            if len(self._users) >= _SDK_USERS_KEPT:
                self._users.clear()
            user = AuthenticatedUser(AccessToken(token="", client_id=user_id, subject=user_id, scopes=[]))
            self._users[user_id] = user
        return user


async def _authenticate(authenticators: Sequence[Authenticator], token: str) -> Identity | None:
    for authenticator in authenticators:
        identity = await authenticator.authenticate(token)
        if identity is not None:
            return identity
    return None


def _challenge(metadata: ResourceMetadata | None) -> str:
    return f'Bearer realm="mcp", resource_metadata="{metadata.url}"' if metadata else 'Bearer realm="mcp"'


async def _unauthorized(send: Send, address: _Address, error: str, description: str) -> None:
    """401 with a challenge (RFC 6750) that names the metadata, if any: where a client learns to sign in."""
    challenge = address.challenge
    if error != "unauthorized":  # a token was sent: say what was wrong with it
        quoted = description.replace("\\", "/").replace('"', "'")
        challenge += f', error="{error}", error_description="{quoted}"'
    await _respond(send, 401, error, description, challenge)


#: How a refusal names what was asked for, by method.
_WHAT = {"tools/call": "Calling {name!r}", "prompts/get": "The prompt {name!r}", "resources/read": "Reading {name}"}
_NAMED_BY = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


async def _called(scope: Scope, receive: Receive, limit: int) -> tuple[str | None, str | None, Receive]:
    """The method and the tool, prompt or URI a request names (None, None: none of those), and a receive that
    still yields the whole body.

    Read from the JSON-RPC body in both eras, never from headers (the SDK picks the era by its own rules, and
    decodes ``Mcp-Name``): at most ``limit`` bytes, a longer body being left to the body limit; then replayed.
    """
    if scope.get("method") != "POST":
        return None, None, receive
    messages: list[Message] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        size += len(message.get("body", b""))
        if message["type"] != "http.request" or not message.get("more_body") or size > limit:
            break
    replayed = iter(messages)

    async def replay() -> Message:
        return next(replayed, None) or await receive()

    if size > limit or messages[-1].get("more_body") or messages[-1]["type"] != "http.request":
        return None, None, replay
    try:
        body = json.loads(b"".join(m.get("body", b"") for m in messages))
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes: the SDK answers it
        return None, None, replay
    method = body.get("method") if isinstance(body, dict) else None
    if method in _NAMED_BY and isinstance(body.get("params"), dict):
        name = body["params"].get(_NAMED_BY[method])
        return method, (name if isinstance(name, str) else None), replay
    return None, None, replay


def _header(scope: Scope, wanted: bytes) -> str | None:
    for name, value in scope["headers"]:
        if name == wanted:
            return str(value.decode("latin-1"))
    return None


async def _respond(
    send: Send,
    status: int,
    error: str,
    description: str,
    challenge: str | None = None,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """A refusal as a JSON-RPC error (what MCP clients read from an error status and show, "invalid_token: why"),
    with the OAuth error code and description (RFC 6750) as its ``data``."""
    headers = list(extra or [])
    if challenge is not None:
        headers.append((b"www-authenticate", challenge.encode("latin-1", "replace")))
    code = INTERNAL_ERROR if status >= 500 else INVALID_REQUEST
    data = {"error": error, "error_description": description}
    await send_json(send, status, rpc_error(f"{error}: {description}", code, data), headers)
