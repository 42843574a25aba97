"""The HTTP authentication gate: who is calling, or 401 — never a silent downgrade to anonymous."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Sequence

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..base import (
    IDENTITY_SCOPE_KEY,
    Authenticator,
    AuthUnavailableError,
    Identity,
    InvalidCredentialError,
    encode,
    send_json,
)
from ._oauth_scopes import RequiredScopes, missing_scopes
from ._resource_metadata import ResourceMetadata

__all__ = ["AuthGate"]

logger = logging.getLogger("mcpkit.auth")

#: How many callers' SDK user objects a gate keeps before starting afresh.
_SDK_USERS_KEPT = 4096

#: What a 503 asks the client to wait, in seconds, when sign-in cannot be checked.
RETRY_AFTER_SECONDS = 5


class AuthGate:
    """ASGI middleware: checks the bearer token of every HTTP request before the MCP app sees it.

    A request without credentials passes as anonymous only when the server allows
    anonymous callers; a present but invalid credential always gets HTTP 401 with a
    ``WWW-Authenticate`` header. The signed-in caller is also put where the SDK looks
    for it (``scope["user"]``), so a 2025-11-25 session stays bound to the credential
    that opened it.
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
    ) -> None:
        self._app = app
        # Tools, prompts and resources that need OAuth scopes: a caller whose token lacks them gets 403 naming
        # them (step-up) here, the tool, prompt or URI read from the request body (up to max_body_bytes).
        self._required = required_scopes
        # A caller granted every scope any of them needs may ask for any: no need to read which it names.
        self._every_scope = required_scopes.every if required_scopes else frozenset()
        self._max_body_bytes = max_body_bytes
        self._authenticators = tuple(authenticators)
        self._allow_anonymous = allow_anonymous
        self._users: dict[str, AuthenticatedUser] = {}
        # With Protected Resource Metadata: served here, to anyone (it is how a client learns to sign in),
        # and named in every 401.
        self._metadata = metadata
        self._metadata_paths = frozenset(metadata.paths) if metadata is not None else frozenset()
        self._challenge = (
            f'Bearer realm="mcp", resource_metadata="{metadata.url}"' if metadata else 'Bearer realm="mcp"'
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        if self._metadata is not None and scope["path"] in self._metadata_paths:
            await self._metadata.serve(scope, receive, send)
            return
        header = _authorization(scope)
        if header is None:
            if not self._allow_anonymous:
                await self._unauthorized(
                    send, "unauthorized", "This server needs a bearer token: send 'Authorization: Bearer <token>'."
                )
                return
            scope[IDENTITY_SCOPE_KEY] = None
            if self._required:
                checked = await self._check_scopes(scope, receive, send, None)
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
            await self._unauthorized(
                send,
                "invalid_request",
                "Malformed Authorization header: expected 'Bearer <token>', with no whitespace or control "
                "characters in the token.",
            )
            return
        try:
            identity = await self._authenticate(token)
        except InvalidCredentialError as exc:
            await self._unauthorized(send, "invalid_token", f"The bearer token was refused: {exc.reason}")
            return
        except AuthUnavailableError:
            logger.warning("authentication unavailable", exc_info=True)
            await _respond(
                send,
                503,
                {
                    "error": "temporarily_unavailable",
                    "error_description": "Sign-in cannot be checked right now; retry.",
                },
                extra=[(b"retry-after", str(RETRY_AFTER_SECONDS).encode())],
            )
            return
        except Exception:
            error_id = uuid.uuid4().hex[:12]
            logger.exception("authentication crashed [error id %s]", error_id)
            await _respond(
                send,
                500,
                {
                    "error": "server_error",
                    "error_description": f"Authentication failed on the server (error id {error_id}).",
                },
            )
            return
        if identity is None:
            await self._unauthorized(
                send, "invalid_token", "The bearer token is not a key or token this server accepts."
            )
            return
        scope[IDENTITY_SCOPE_KEY] = identity
        scope["user"] = self._sdk_user(identity.user_id)
        if self._required:
            checked = await self._check_scopes(scope, receive, send, identity)
            if checked is None:
                return
            receive = checked
        await self._app(scope, receive, send)

    async def _check_scopes(
        self, scope: Scope, receive: Receive, send: Send, identity: Identity | None
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
            challenge = f'{self._challenge}, scope="{wanted}"'
            await _respond(send, 401, {"error": "unauthorized", "error_description": description}, challenge)
            return None
        description = (
            f"{what} needs the OAuth scope(s) {wanted}, which this token does not grant: sign in again asking for them."
        )
        challenge = f'{self._challenge}, error="insufficient_scope", scope="{wanted}"'
        await _respond(send, 403, {"error": "insufficient_scope", "error_description": description}, challenge)
        return None

    async def _unauthorized(self, send: Send, error: str, description: str) -> None:
        """401 with a challenge (RFC 6750) that names the metadata, if any: where a client learns to sign in."""
        challenge = self._challenge
        if error != "unauthorized":  # a token was sent: say what was wrong with it
            quoted = description.replace("\\", "/").replace('"', "'")
            challenge += f', error="{error}", error_description="{quoted}"'
        await _respond(send, 401, {"error": error, "error_description": description}, challenge)

    def _sdk_user(self, user_id: str) -> AuthenticatedUser:
        """The SDK's view of the caller (it binds sessions to it); the same few callers come back, so keep them."""
        user = self._users.get(user_id)
        if user is None:
            if len(self._users) >= _SDK_USERS_KEPT:
                self._users.clear()
            user = AuthenticatedUser(AccessToken(token="", client_id=user_id, subject=user_id, scopes=[]))
            self._users[user_id] = user
        return user

    async def _authenticate(self, token: str) -> Identity | None:
        for authenticator in self._authenticators:
            identity = await authenticator.authenticate(token)
            if identity is not None:
                return identity
        return None


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


def _authorization(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == b"authorization":
            return str(value.decode("latin-1"))
    return None


async def _respond(
    send: Send,
    status: int,
    body: dict[str, str],
    challenge: str | None = None,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    headers = list(extra or [])
    if challenge is not None:
        headers.append((b"www-authenticate", challenge.encode("latin-1", "replace")))
    await send_json(send, status, encode(body), headers)
