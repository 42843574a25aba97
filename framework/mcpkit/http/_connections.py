"""Slow clients: a deadline for every request to arrive (``read_timeout``) and every response to be read
(``write_timeout``), and a connection cap (``max_connections``) that no client fills by waiting or holding requests
open, added to uvicorn's own h11 protocol (why and how: docs/architecture.md, "Serving limits")."""

from __future__ import annotations

import asyncio
import logging
import resource
from dataclasses import dataclass, field
from typing import ClassVar, cast

import h11
from uvicorn.config import LOG_LEVELS
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..base import (
    ANONYMOUS_PREFIX,
    ConfigurationError,
    ForwardedClients,
    checked_seconds,
    checked_whole,
    client_group,
    raw_response,
)
from ._admission import CONNECTION_SCOPE_KEY

__all__ = ["ConnectionLimits", "guarded_protocol"]

logger = logging.getLogger("mcpkit.connections")

#: Connections the kernel queues for accepting, which is also how many asyncio accepts in one go.
ACCEPT_BACKLOG = 128
#: Open files kept free beyond the cap: 64 for everything that is not a client connection (stores, logs,
#: the listener), and three backlogs. The guard sees an accepted socket two loop turns after asyncio accepted it
#: (its transport is made in a task, whose ``connection_made`` is scheduled), and asyncio accepts a backlog in
#: each turn meanwhile; a connection closed to make room keeps its file one turn more. So at the cap, one
#: backlog is closing, one has a transport waiting for ``connection_made`` and one was just accepted. With two,
#: an attack that churns connections ran the process out of files, and asyncio stopped accepting for a second
#: each time (``socket.accept() out of system resource``).
RESERVED_FILES = 64 + 3 * ACCEPT_BACKLOG
#: Connections served at once unless told otherwise (fewer if the open-files limit cannot make room).
DEFAULT_MAX_CONNECTIONS = 1000
#: A busy connection is cut for a newcomer only from a holder of more than this fraction (1/16) of the cap.
FAIR_SHARE = 16
#: The most a request head may hold (h11's default, made explicit): a larger one gets 400.
MAX_HEADER_BYTES = 16 * 1024


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """How ``Server.run`` serves connections: how many, how long a request may take to arrive, what it logs."""

    max_connections: int | None = None
    read_timeout: float = 10.0
    keep_alive_timeout: float = 5.0
    log_level: str = "info"
    write_timeout: float = 30.0

    def __post_init__(self) -> None:
        if self.log_level not in LOG_LEVELS:
            raise ConfigurationError(f"log_level {self.log_level!r} is not one of: {', '.join(LOG_LEVELS)}.")
        connections = self.max_connections
        if connections is not None and checked_whole("max_connections", connections, unit="connections") < 16:
            raise ConfigurationError(f"max_connections={self.max_connections} is too few: use 16 or more.")
        timeouts = (
            ("read_timeout", self.read_timeout),
            ("keep_alive_timeout", self.keep_alive_timeout),
            ("write_timeout", self.write_timeout),
        )
        for name, seconds in timeouts:
            checked_seconds(name, seconds)

    def connection_cap(self) -> int:
        """The cap to serve with, raising this process' soft open-files limit if it must (never the hard one)."""
        wanted = self.max_connections or DEFAULT_MAX_CONNECTIONS
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        needed = wanted + RESERVED_FILES
        if soft != resource.RLIM_INFINITY and soft < needed:
            raised = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
            if raised > soft:
                resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
                soft = raised
        room = wanted if soft == resource.RLIM_INFINITY else soft - RESERVED_FILES
        if self.max_connections is not None and room < self.max_connections:
            raise ConfigurationError(
                f"max_connections={self.max_connections} needs {needed} open files, but this process may open only "
                f"{soft} (ulimit -n): raise the limit, or pass max_connections={max(room, 16)} or fewer."
            )
        return max(16, min(wanted, room))


@dataclass(slots=True, eq=False)
class _Client:
    """The open connections of one client (an IPv4 address or an IPv6 /64)."""

    name: str
    held: int = 0
    #: Its connections waiting for a request, longest-waiting first: kept alive after an answer (``idle``), or not
    #: used yet (``fresh``: a client that has just connected, or one sending too slowly).
    idle: dict[_GuardedH11Protocol, None] = field(default_factory=dict)
    fresh: dict[_GuardedH11Protocol, None] = field(default_factory=dict)


def guarded_protocol(limits: ConnectionLimits, forwarded: ForwardedClients | None = None) -> type[H11Protocol]:
    """uvicorn's h11 protocol with the read deadline and the connection cap, for one server.

    ``forwarded`` says which proxies' ``X-Forwarded-For`` names the client (uvicorn's default: loopback).
    """
    namespace = {
        "limits": limits,
        "cap": limits.connection_cap(),
        "forwarded": forwarded or ForwardedClients(),
        "clients": {},
        "holders": {},
    }
    return type("GuardedH11Protocol", (_GuardedH11Protocol,), namespace)


class _GuardedH11Protocol(H11Protocol):
    limits: ClassVar[ConnectionLimits]
    cap: ClassVar[int]
    forwarded: ClassVar[ForwardedClients]
    #: Every client with a connection open, by ``client_group``.
    clients: ClassVar[dict[str, _Client]]
    #: The busy connections (a request in progress) of each holder, longest-busy first, with when each began.
    holders: ClassVar[dict[str, dict[_GuardedH11Protocol, float]]]

    _client: _Client
    _deadline: asyncio.TimerHandle | None = None
    _served = False
    _proxied = False
    #: The request head this connection was last counted by (uvicorn's ``headers`` of its current request).
    _head: object = None
    #: Whose busy connection this is while a request is in progress on it (None: not busy).
    _holder: str | None = None
    #: The request (uvicorn's ASGI scope) last counted busy, so one request is counted once.
    _counted: object = None
    #: The write deadline while the client reads nothing of a response.
    _stalled: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        peer = self.client[0] if self.client else ""
        self._proxied = bool(peer) and self.forwarded.trusts(peer)
        self._join(client_group(peer))
        if len(self.connections) > self.cap and not self._make_room():
            self._refuse()
            return
        self._wait()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        self._idle()
        if self._stalled is not None:
            self._stalled.cancel()
            self._stalled = None
        self._leave()
        super().connection_lost(exc)

    def held_by(self, caller: str) -> None:
        """Count this connection's request in progress against ``caller`` (admission knows whose it is)."""
        holder = self._holder
        if holder is None or holder == caller:
            return
        since = self.holders[holder].pop(self)
        if not self.holders[holder]:
            del self.holders[holder]
        self.holders.setdefault(caller, {})[self] = since
        self._holder = caller

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._stalled is None:
            self._stalled = self.loop.call_later(self.limits.write_timeout, self._write_timed_out)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._stalled is not None:
            self._stalled.cancel()
            self._stalled = None

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._track()

    def on_response_complete(self) -> None:
        self._idle()
        super().on_response_complete()
        self._served = True
        self._track()

    def _busy(self) -> None:
        """A request has arrived on this connection: it is busy, for its client until admission says whose."""
        self._counted = self.scope
        cast("dict[str, object]", self.scope)[CONNECTION_SCOPE_KEY] = self
        self._holder = ANONYMOUS_PREFIX + self._client.name  # as admission names an anonymous caller
        self.holders.setdefault(self._holder, {})[self] = self.loop.time()

    def _idle(self) -> None:
        holder = self._holder
        if holder is None:
            return
        self._holder = None
        busy = self.holders[holder]
        del busy[self]
        if not busy:
            del self.holders[holder]

    def _refuse(self) -> None:
        """Answer a connection the cap has no room for: 429 if its own client holds the most, else 503."""
        held = self._client.held
        if held > 1 and held >= max((len(busy) for busy in self.holders.values()), default=0):
            self._answer(
                429,
                f"The server is at its connection limit, and this client already holds {held - 1} connections, "
                "more than any other: use fewer connections at once, or retry.",
            )
        else:
            self._answer(503, "The server is at its connection limit, with a request in progress on each. Retry.")

    def _write_timed_out(self) -> None:
        self._stalled = None
        if not self.transport.is_closing():
            timeout = f"{self.limits.write_timeout:g}"
            logger.info("closed a connection whose client read none of its response for %s s (write_timeout)", timeout)
            self._abort()

    def _make_room(self) -> bool:
        """At the cap: close one connection of the holder with the most, if it holds more than this connection's
        client (counting this one), cheapest first; False if none may be closed.

        An idle kept-alive connection may go for a client holding as many (it reconnects when it needs to); a fresh
        one only for a client holding more, or this one's own, so that newcomers never cut each other off; a busy
        one (a request in progress) only for a holder of more than a fair share of the cap.
        """
        mine = self._client.held
        victim: _GuardedH11Protocol | None = None
        size = 0
        for client in self.clients.values():
            if client.held <= size:
                continue
            if client.idle and client.held >= mine:
                victim, size = next(iter(client.idle)), client.held
            elif client.fresh and (client is self._client or client.held > mine):
                victim, size = next(iter(client.fresh)), client.held
        fullest = max(self.holders.values(), key=len, default=None)
        if fullest is not None and len(fullest) > max(size, mine, self.cap // FAIR_SHARE):
            busy = min(fullest, key=fullest.__getitem__)  # the longest-busy one
            logger.warning(
                "at the connection limit (%d): closed a busy connection of the holder of the most (%d) to admit "
                "another client",
                self.cap,
                len(fullest),
            )
            busy._idle()
            busy._abort()
            return True
        if victim is None:
            return False
        victim._close()
        return True

    def _join(self, name: str) -> None:
        client = self.clients.get(name)
        if client is None:
            client = self.clients[name] = _Client(name)
        client.held += 1
        self._client = client

    def _leave(self) -> None:
        client = self._client
        client.held -= 1
        if not client.held:
            del self.clients[client.name]

    def _track(self) -> None:
        """Follow the request's progress: waiting for it, receiving its body, or done reading."""
        if self.transport.is_closing():
            self._stop_waiting()
            return
        state = self.conn.their_state
        if state is h11.IDLE:
            # A kept-alive connection with nothing sent yet is uvicorn's (timeout_keep_alive); from its
            # first byte on, the request has read_timeout to arrive, like on a new connection.
            waiting = self in self._client.idle or self in self._client.fresh
            if not waiting or (self._deadline is None and self.conn.trailing_data[0]):
                self._wait()
        else:
            self._stop_waiting_only()
            if self.scope is not self._counted:
                self._busy()
            if state is not h11.SEND_BODY and self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            if self._proxied and self.headers is not self._head:
                self._head = self.headers
                self._follow_forwarded()

    def _follow_forwarded(self) -> None:
        """Count a trusted proxy's connection for the client its newest request names."""
        assert self.client is not None  # _proxied
        forwarded_for = [value for name, value in self.headers if name == b"x-forwarded-for"]
        name = client_group(self.forwarded.client(self.client[0], forwarded_for))
        if name != self._client.name:
            self._leave()
            self._join(name)

    def _wait(self) -> None:
        self._stop_waiting_only()
        (self._client.idle if self._served else self._client.fresh)[self] = None
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        if not self._served or self.conn.trailing_data[0]:
            self._deadline = self.loop.call_later(self.limits.read_timeout, self._timed_out)

    def _stop_waiting_only(self) -> None:
        """Out of its client's waiting connections (its read deadline is another matter)."""
        self._client.idle.pop(self, None)
        self._client.fresh.pop(self, None)

    def _stop_waiting(self) -> None:
        self._stop_waiting_only()
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _timed_out(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self.conn.their_state is h11.IDLE and (self.conn.trailing_data[0] or not self._served):
            timeout = f"{self.limits.read_timeout:g}"
            self._answer(408, f"The request did not arrive within {timeout} seconds (read_timeout): send it whole.")
        else:
            self._close()

    def _answer(self, status: int, message: str) -> None:
        """Write a whole response without h11 (no request was read), then close the connection."""
        retry = [(b"retry-after", b"1")] if status in (429, 503) else []
        self.transport.write(raw_response(status, message, retry))
        self._close()

    def _close(self) -> None:
        self._stop_waiting()
        if not self.transport.is_closing():
            self.transport.close()

    def _abort(self) -> None:
        """Close at once, dropping what is still to be written (to a client that reads nothing, or is cut off)."""
        self._stop_waiting()
        self.transport.abort()
