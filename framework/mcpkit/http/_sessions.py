"""2025-11-25 sessions per caller, so a flood of ``initialize`` by one caller never refuses another: each caller's
sessions are counted and bounded, and a handshake has a deadline (docs/architecture.md, "Serving limits")."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..base import (
    ANONYMOUS_PREFIX,
    Clock,
    ConfigurationError,
    caller_key,
    checked_seconds,
    checked_whole,
    send_rpc_error,
)

__all__ = ["SessionGuard", "SessionLimits"]

logger = logging.getLogger("mcpkit.sessions")

_HANDSHAKE_VERSIONS = frozenset(version.encode() for version in HANDSHAKE_PROTOCOL_VERSIONS)
#: Sessions ended by one sweep at most (a request that sweeps waits for them); the rest wait for the next.
_ENDED_PER_SWEEP = 256
#: How often (monotonic seconds) the idle sessions are looked for; overdue handshakes are looked for always.
_IDLE_SWEEP_SECONDS = 10.0
#: The largest body read to see whether it is ``notifications/initialized``.
_NOTIFICATION_BYTES = 4096


@dataclass(frozen=True, slots=True)
class SessionLimits:
    """How many 2025-11-25 sessions a server keeps, per caller and in all, and for how long.

    ``signed_in_too``: the server also signs callers in, so anonymous callers together keep at most
    ``max_anonymous`` (half of ``max_sessions``) and the other half stays for signed-in callers.
    """

    max_sessions: int = 10_000
    per_caller: int = 64
    idle_timeout: float = 1800.0
    handshake_timeout: float = 10.0
    signed_in_too: bool = False

    @property
    def max_anonymous(self) -> int:
        """How many sessions anonymous callers may hold together."""
        return self.max_sessions // 2 if self.signed_in_too else self.max_sessions

    def __post_init__(self) -> None:
        for name, value in (("max_sessions", self.max_sessions), ("sessions_per_caller", self.per_caller)):
            checked_whole(name, value, unit="sessions")
        if self.per_caller > self.max_sessions:
            raise ConfigurationError(
                f"sessions_per_caller={self.per_caller} is above max_sessions={self.max_sessions}: one caller could "
                "fill the table and refuse everyone else. Keep it well below max_sessions."
            )
        for name, seconds in (("session_idle_timeout", self.idle_timeout), ("handshake", self.handshake_timeout)):
            checked_seconds(name, seconds)


@dataclass(slots=True, eq=False)
class _Session:
    session_id: bytes
    owner: str
    anonymous: bool
    #: What the opening request carried that a DELETE for this session must carry too.
    path: str
    host: bytes | None
    user: Any
    #: Monotonic clock readings.
    opened: float
    last_active: float
    ready: bool = False
    in_flight: int = 0
    posts_in_flight: int = 0


class SessionGuard:
    """ASGI middleware: per-caller session limits and a handshake deadline in front of the SDK's manager."""

    def __init__(self, app: ASGIApp, *, limits: SessionLimits, clock: Callable[[], Clock]) -> None:
        self._app = app
        self._limits = limits
        self._clock = clock
        self._sessions: dict[bytes, _Session] = {}
        #: owner -> their sessions, least recently used first (a used session is moved to the end).
        self._by_owner: dict[str, dict[bytes, _Session]] = {}
        #: Sessions still waiting for notifications/initialized, oldest first.
        self._pending: dict[bytes, _Session] = {}
        #: owner -> opening requests in flight (counted against the limit until they are answered).
        self._opening: dict[str, int] = {}
        #: Sessions of anonymous callers, and their opening requests in flight.
        self._anonymous = 0
        self._base: Scope = {}
        self._next_idle_sweep = 0.0
        self._warned_at = -math.inf

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        session_id = version = None
        for name, value in scope["headers"]:
            if name == b"mcp-session-id":
                session_id = session_id or value
            elif name == b"mcp-protocol-version":
                version = version or value
        if version is not None and version not in _HANDSHAKE_VERSIONS:
            await self._app(scope, receive, send)  # 2026-07-28 (or a version the SDK refuses): no session
        elif session_id is None:
            await self._open(scope, receive, send)
        else:
            session = self._sessions.get(session_id)
            if session is None:
                await self._app(scope, receive, send)  # unknown or ended: the SDK answers 404
            else:
                await self._use(session, scope, receive, send)

    # -- opening --------------------------------------------------------------------------------------

    async def _open(self, scope: Scope, receive: Receive, send: Send) -> None:
        now = self._clock().monotonic()
        await self._end_all(self._overdue(now))
        owner = caller_key(scope)
        anonymous = owner.startswith(ANONYMOUS_PREFIX)
        held = self._by_owner.get(owner, {})
        victim = None
        if len(held) + self._opening.get(owner, 0) >= self._limits.per_caller:
            victim = next((s for s in held.values() if not s.posts_in_flight), None)
            if victim is None:
                await _refuse(send, self._limits.per_caller)
                return
            self._warn(owner, now)
            self._forget(victim)
        elif anonymous and self._anonymous >= self._limits.max_anonymous:
            victim = self._anonymous_victim(owner)
            if victim is None:
                await _refuse_anonymous(send)
                return
            self._forget(victim)
        # Counted before anything is awaited, so concurrent openings by one caller cannot overshoot its limit.
        self._opening[owner] = self._opening.get(owner, 0) + 1
        self._anonymous += anonymous
        reserved = True

        async def registering_send(message: Message) -> None:
            nonlocal reserved
            if message["type"] == "http.response.start" and reserved:
                reserved = False
                self._release(owner)
                minted = _header(message.get("headers", ()), b"mcp-session-id")
                if message["status"] < 400 and minted is not None:
                    self._register(minted, owner, scope, self._clock().monotonic())
            await send(message)

        try:
            if victim is not None:
                await self._delete(victim)
            await self._app(scope, receive, registering_send)
        finally:
            if reserved:
                self._release(owner)

    def _anonymous_victim(self, opener: str) -> _Session | None:
        """At the anonymous callers' limit: the least recently used idle session of the anonymous caller
        holding the most, if that is the opener or holds at least as many as the opener would; else None."""
        victim: _Session | None = None
        most = 0
        for owner, held in self._by_owner.items():
            if owner.startswith(ANONYMOUS_PREFIX) and len(held) > most:
                idle = next((s for s in held.values() if not s.posts_in_flight), None)
                if idle is not None:
                    victim, most = idle, len(held)
        would_hold = len(self._by_owner.get(opener, ())) + self._opening.get(opener, 0) + 1
        if victim is None or (victim.owner != opener and most < would_hold):
            return None
        return victim

    def _release(self, owner: str) -> None:
        self._anonymous -= owner.startswith(ANONYMOUS_PREFIX)
        left = self._opening[owner] - 1
        if left:
            self._opening[owner] = left
        else:
            del self._opening[owner]

    def _register(self, session_id: bytes, owner: str, scope: Scope, now: float) -> None:
        if not self._base:
            self._base = {key: scope[key] for key in ("asgi", "scheme", "root_path", "server", "app") if key in scope}
        host = _header(scope["headers"], b"host")
        anonymous = owner.startswith(ANONYMOUS_PREFIX)
        session = _Session(session_id, owner, anonymous, scope["path"], host, scope.get("user"), now, now)
        self._sessions[session_id] = session
        self._by_owner.setdefault(owner, {})[session_id] = session
        self._pending[session_id] = session
        self._anonymous += anonymous

    # -- using ----------------------------------------------------------------------------------------

    async def _use(self, session: _Session, scope: Scope, receive: Receive, send: Send) -> None:
        now = self._clock().monotonic()
        if not session.ready and now >= session.opened + self._limits.handshake_timeout:
            await self._end_all([session])  # the SDK now answers 404: the client opens a new session
            await self._app(scope, receive, send)
            return
        held = self._by_owner[session.owner]
        held[session.session_id] = held.pop(session.session_id)  # now the most recently used
        session.last_active = now
        method = scope["method"]
        is_post = method == "POST"
        session.in_flight += 1
        session.posts_in_flight += is_post
        watch_body = is_post and not session.ready
        body = bytearray()
        status = 0

        async def reading_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request" and len(body) <= _NOTIFICATION_BYTES:
                body.extend(message.get("body", b""))
            return message

        async def watching_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                if watch_body and status < 400 and _is_initialized(body):
                    session.ready = True
                    self._pending.pop(session.session_id, None)
            await send(message)

        watched = watch_body or method == "DELETE"
        try:
            await self._app(scope, reading_receive if watch_body else receive, watching_send if watched else send)
        finally:
            session.in_flight -= 1
            session.posts_in_flight -= is_post
            session.last_active = self._clock().monotonic()
            if method == "DELETE" and 200 <= status < 300:
                self._forget(session)

    # -- ending ---------------------------------------------------------------------------------------

    def _overdue(self, now: float) -> list[_Session]:
        """Sessions to end now: handshakes past their deadline (forgetting idle ones the SDK has ended)."""
        due: list[_Session] = []
        deadline = now - self._limits.handshake_timeout
        for session in self._pending.values():
            if session.opened > deadline or len(due) >= _ENDED_PER_SWEEP:
                break
            due.append(session)
        if now >= self._next_idle_sweep:
            self._next_idle_sweep = now + _IDLE_SWEEP_SECONDS
            idle_since = now - self._limits.idle_timeout
            # The SDK ends an idle session itself (its own timer, the same timeout): forget it here too.
            for session in [s for s in self._sessions.values() if not s.in_flight and s.last_active < idle_since]:
                self._forget(session)
        return due

    def _forget(self, session: _Session) -> None:
        if self._sessions.pop(session.session_id, None) is None:
            return
        self._pending.pop(session.session_id, None)
        self._anonymous -= session.anonymous
        held = self._by_owner[session.owner]
        del held[session.session_id]
        if not held:
            del self._by_owner[session.owner]

    async def _end_all(self, sessions: list[_Session]) -> None:
        for session in sessions:
            self._forget(session)
        for session in sessions:
            await self._delete(session)

    async def _delete(self, session: _Session) -> None:
        """End ``session`` in the SDK as its client would: ``DELETE`` with its id, host and credential."""
        headers = [(b"mcp-session-id", session.session_id)]
        if session.host is not None:
            headers.append((b"host", session.host))
        scope = {
            **self._base,
            "type": "http",
            "http_version": "1.1",
            "method": "DELETE",
            "path": session.path,
            "raw_path": session.path.encode(),
            "query_string": b"",
            "headers": headers,
            "client": None,
            "state": {},
        }
        if session.user is not None:
            scope["user"] = session.user
        asked = False

        async def receive() -> Message:
            nonlocal asked
            if asked:
                return {"type": "http.disconnect"}
            asked = True
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] >= 300:
                logger.warning("could not end session %s: HTTP %s", session.session_id[:8], message["status"])

        try:
            await self._app(scope, receive, send)
        except Exception:
            logger.exception("could not end session %s", session.session_id[:8])

    def _warn(self, owner: str, now: float) -> None:
        if now - self._warned_at >= 60:
            self._warned_at = now
            logger.warning(
                "caller %s reached sessions_per_caller=%d: its least recently used sessions are being ended",
                owner,
                self._limits.per_caller,
            )


def _header(headers: Any, wanted: bytes) -> bytes | None:
    for name, value in headers:
        if name == wanted:
            return bytes(value)
    return None


def _is_initialized(body: bytearray) -> bool:
    if b"notifications/initialized" not in body:
        return False
    try:
        message = json.loads(body)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("method") == "notifications/initialized"


async def _refuse(send: Send, limit: int) -> None:
    message = (
        f"Too many sessions: this caller already has {limit} 2025-11-25 sessions, each with a request in progress. "
        "Wait for one to finish or end one (DELETE /mcp with its Mcp-Session-Id), then retry; or use protocol "
        "2026-07-28, which needs no session."
    )
    await send_rpc_error(send, 429, message, extra=[(b"retry-after", b"1")])


async def _refuse_anonymous(send: Send) -> None:
    message = (
        "The 2025-11-25 sessions this server keeps for anonymous callers (half of max_sessions) are all in use. "
        "Sign in (half of the table is kept for signed-in callers), retry later, or use protocol 2026-07-28, "
        "which needs no session."
    )
    await send_rpc_error(send, 503, message, extra=[(b"retry-after", b"5")])
