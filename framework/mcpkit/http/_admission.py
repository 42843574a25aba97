"""Admission by caller: each caller may have at most ``calls_per_caller`` requests in progress over HTTP at once,
so a caller who holds calls open spends its own share and nobody else's (docs/architecture.md)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import pydantic_core
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..base import caller_key, checked_whole, encode, send_json

__all__ = [
    "CONNECTION_SCOPE_KEY",
    "DEFAULT_CALLS_PER_CALLER",
    "HOLD_SCOPE_KEY",
    "CallAdmission",
    "HeldConnection",
    "checked_calls",
    "held_while_running",
]

logger = logging.getLogger("mcpkit.admission")

#: Requests one caller may have in progress at once, unless ``calls_per_caller`` says otherwise.
DEFAULT_CALLS_PER_CALLER = 32
#: Where the connection guard leaves the connection a request came on, for the layer that knows its caller.
CONNECTION_SCOPE_KEY = "mcpkit.connection"
#: Where admission leaves an admitted request's slot (``_Hold``), for the work the request starts to hold too.
HOLD_SCOPE_KEY = "mcpkit.admission"
#: What a refused caller is asked to wait before it tries again, in seconds.
RETRY_AFTER_SECONDS = 1
#: How often (monotonic seconds) a refusal is logged for one caller at most.
_LOG_EVERY = 60.0
#: A refusal's ``error.data.code``, for programs.
REFUSAL_CODE = "TOO_MANY_CALLS"
_HANDSHAKE_VERSIONS = frozenset(version.encode() for version in HANDSHAKE_PROTOCOL_VERSIONS)
_LISTEN = (b"mcp-method", b"subscriptions/listen")


class HeldConnection(Protocol):
    """A connection that can be told which caller its request belongs to (the guard of ``Server.run``)."""

    def held_by(self, caller: str) -> None: ...


def checked_calls(value: object) -> int:
    """``calls_per_caller``, checked: a whole number of requests, at least 1."""
    return checked_whole("calls_per_caller", value, unit="requests")


class CallAdmission:
    """ASGI middleware behind the auth gate: counts each caller's requests in progress and refuses one too many."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        per_caller: int,
        max_body_bytes: int,
        monotonic: Callable[[], float],
        refused: Callable[[str, str | None], None] = lambda reason, method: None,
    ) -> None:
        self._app = app
        self._refused = refused
        self._per_caller = per_caller
        self._max_body_bytes = max_body_bytes
        self._monotonic = monotonic
        #: caller -> requests in progress (present only while it has some).
        self._in_flight: dict[str, int] = {}
        self._logged: dict[str, float] = {}

    def in_flight(self, caller: str) -> int:
        """How many requests ``caller`` has in progress now."""
        return self._in_flight.get(caller, 0)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or _is_listen(scope):
            await self._app(scope, receive, send)
            return
        caller = caller_key(scope)
        held = self._in_flight.get(caller, 0)
        if held >= self._per_caller:
            body, receive = await _peeked(receive, self._max_body_bytes)
            request_id, method = _request(body)
            if request_id is not _NOT_A_REQUEST:
                self._log(caller)
                self._refused(REFUSAL_CODE, method)
                await _refuse(send, request_id, self._per_caller)
                return
            await self._app(scope, receive, send)  # an answer or a notification: never refused, never counted
            return
        self._in_flight[caller] = held + 1
        slot = scope[HOLD_SCOPE_KEY] = _Hold(self._in_flight, caller)
        connection: HeldConnection | None = scope.get(CONNECTION_SCOPE_KEY)
        if connection is not None:
            connection.held_by(caller)
        ended = False

        async def sending(message: Message) -> None:
            nonlocal ended
            if not ended and message["type"] == "http.response.body" and not message.get("more_body", False):
                ended = True  # given back before the answer's last bytes go: a client may call again at once
                slot.release()
            await send(message)

        try:
            await self._app(scope, receive, sending)
        finally:
            if not ended:
                slot.release()

    def _log(self, caller: str) -> None:
        now = self._monotonic()
        if now - self._logged.get(caller, -_LOG_EVERY) < _LOG_EVERY:
            return
        if len(self._logged) > 4096:
            self._logged.clear()
        self._logged[caller] = now
        shown = caller if caller.startswith("anon:") else f"user {caller[:48]!r}"
        logger.warning(
            "%s has %d requests in progress (calls_per_caller): refusing more with 429 until some end",
            shown,
            self._per_caller,
        )


class _Hold:
    """One admitted request's slot, given back when the last of its holders (its POST, its work) lets go."""

    __slots__ = ("_caller", "_counts", "_holders")

    def __init__(self, counts: dict[str, int], caller: str) -> None:
        self._counts = counts
        self._caller = caller
        self._holders = 1

    def hold(self) -> None:
        self._holders += 1

    def release(self) -> None:
        self._holders -= 1
        if self._holders:
            return
        left = self._counts[self._caller] - 1
        if left:
            self._counts[self._caller] = left
        else:
            del self._counts[self._caller]


async def held_while_running(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
    """An SDK middleware: the work of an admitted request holds its slot too, so that closing the request's stream
    (which ends its POST) while the work goes on in a 2025-11-25 session does not give the slot back."""
    request = ctx.request
    slot: _Hold | None = None if request is None else request.scope.get(HOLD_SCOPE_KEY)
    if slot is None or ctx.request_id is None:
        return await call_next(ctx)
    slot.hold()
    try:
        return await call_next(ctx)
    finally:
        slot.release()


_NOT_A_REQUEST = object()


def _is_listen(scope: Scope) -> bool:
    """A 2026-07-28 ``subscriptions/listen`` stream: held open by design, limited by ``SubscriptionLimits``. Only
    2026-07-28 requests count: the SDK refuses one whose ``Mcp-Method`` is not its body's method, where it would let
    a 2025-11-25 request with the header through as whatever its body says."""
    headers = scope["headers"]
    if _LISTEN not in headers:  # a search in C, on every POST (a server giving lists, not tuples: counted)
        return False
    version = next((value for name, value in headers if name == b"mcp-protocol-version"), None)
    return version is not None and version not in _HANDSHAKE_VERSIONS


async def _peeked(receive: Receive, most: int) -> tuple[bytes, Receive]:
    """The body (up to ``most`` bytes and a chunk), and a ``receive`` that gives it again, then the rest."""
    chunks: list[bytes] = []
    size = 0
    more = True
    kept: list[Message] = []  # a disconnect that came before the whole body
    while more and size <= most:
        message = await receive()
        if message["type"] != "http.request":
            kept.append(message)
            break
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        more = message.get("more_body", False)
    body = b"".join(chunks)
    replay: list[Message] = [*kept, {"type": "http.request", "body": body, "more_body": more}]  # popped from the end

    async def replaying() -> Message:
        return replay.pop() if replay else await receive()

    return body, replaying


def _request(body: bytes) -> tuple[Any, str | None]:
    """The id and method of the JSON-RPC request in ``body``, or ``_NOT_A_REQUEST`` (an answer, a notification, or
    not JSON at all, which the layers behind refuse at once)."""
    try:
        message = pydantic_core.from_json(body)  # the SDK's own parser: the two never disagree on what is JSON
    except ValueError:  # not JSON, or nested past the parser's limit
        return _NOT_A_REQUEST, None
    if isinstance(message, dict) and "method" in message and "id" in message:
        method = message["method"]
        return message["id"], method if isinstance(method, str) else None
    return _NOT_A_REQUEST, None


async def _refuse(send: Send, request_id: Any, limit: int) -> None:
    message = (
        f"Too many requests in progress: this caller already has {limit} request{'s' if limit != 1 else ''} in "
        "progress on this server "
        "(calls_per_caller). Wait for one to finish (answer the questions your calls are waiting on, or cancel "
        "some), then retry."
    )
    error = {"code": -32600, "message": message, "data": {"code": REFUSAL_CODE, "limit": limit}}
    body = encode({"jsonrpc": "2.0", "id": request_id if _is_id(request_id) else None, "error": error})
    await send_json(send, 429, body, [(b"retry-after", str(RETRY_AFTER_SECONDS).encode())])


def _is_id(value: object) -> bool:
    return value is None or (isinstance(value, str | int) and not isinstance(value, bool))
