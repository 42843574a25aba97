"""Resumable SSE streams for 2025-11-25 sessions (SEP-1699): what was sent on a stream, kept, bounded, so a client
that lost it can reconnect with ``Last-Event-ID`` and get the rest, only ever from its own session
(docs/architecture.md)."""

from __future__ import annotations

import json
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId

__all__ = ["MAX_AGE", "MAX_BYTES", "MAX_EVENTS", "SESSION_BYTES", "EventLog", "SessionEvents"]

MAX_EVENTS = 50_000
MAX_BYTES = 64 * 1024 * 1024
SESSION_BYTES = 8 * 1024 * 1024
MAX_AGE = 300.0


@dataclass(frozen=True, slots=True)
class _Event:
    session: str
    stream: StreamId
    message: Any  # the JSON-RPC message, or None for a priming event
    at: float
    size: int


class EventLog:
    """Every session's recent events, in the order they were stored."""

    def __init__(
        self,
        max_events: int = MAX_EVENTS,
        max_age: float = MAX_AGE,
        max_bytes: int = MAX_BYTES,
        session_bytes: int = SESSION_BYTES,
    ) -> None:
        self._events: OrderedDict[EventId, _Event] = OrderedDict()
        self._max_events = max_events
        self._max_age = max_age
        self._max_bytes = max_bytes
        self._session_bytes = session_bytes
        self._bytes = 0
        self._sessions: dict[str, int] = {}  # bytes kept per session

    def __len__(self) -> int:
        return len(self._events)

    def add(self, session: str, stream: StreamId, message: Any) -> EventId:
        now = time.monotonic()
        self._forget(now)
        event_id = secrets.token_urlsafe(12)
        size = _size(message)
        self._events[event_id] = _Event(session, stream, message, now, size)
        self._bytes += size
        self._sessions[session] = self._sessions.get(session, 0) + size
        if self._sessions[session] > self._session_bytes:
            self._trim_session(session)
        while self._events and (len(self._events) > self._max_events or self._bytes > self._max_bytes):
            self._drop(next(iter(self._events)))
        return event_id

    def _trim_session(self, session: str) -> None:
        """Forget this session's oldest events until it is within its share again."""
        for event_id in [key for key, event in self._events.items() if event.session == session]:
            if self._sessions.get(session, 0) <= self._session_bytes:
                return
            self._drop(event_id)

    def _drop(self, event_id: EventId) -> None:
        event = self._events.pop(event_id)
        self._bytes -= event.size
        left = self._sessions.get(event.session, 0) - event.size
        if left > 0:
            self._sessions[event.session] = left
        else:
            self._sessions.pop(event.session, None)

    async def replay(self, session: str, after: EventId, send: EventCallback) -> StreamId | None:
        """Send the events of ``after``'s stream stored since it, when ``after`` is this session's; its stream."""
        self._forget(time.monotonic())
        first = self._events.get(after)
        if first is None or first.session != session:
            return None
        later = []
        found = False
        for event_id, event in self._events.items():  # bounded; a resume is rare next to a send
            if found and event.session == session and event.stream == first.stream and event.message is not None:
                later.append((event_id, event.message))
            found = found or event_id == after
        for event_id, message in later:
            await send(EventMessage(message, event_id))
        return first.stream

    def _forget(self, now: float) -> None:
        while self._events:
            event_id, oldest = next(iter(self._events.items()))
            if now - oldest.at <= self._max_age:
                return
            self._drop(event_id)


class SessionEvents(EventStore):
    """One session's view of the log: what the SDK's transport of that session stores and replays."""

    def __init__(self, log: EventLog, session: str) -> None:
        self._log = log
        self._session = session

    async def store_event(self, stream_id: StreamId, message: Any) -> EventId:
        return self._log.add(self._session, stream_id, message)

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        return await self._log.replay(self._session, last_event_id, send_callback)


def _size(message: Any) -> int:
    """What keeping a message costs, as its JSON (a priming event: nothing)."""
    if message is None:
        return 0
    dump = getattr(message, "model_dump_json", None)
    return len(dump(by_alias=True, exclude_none=True)) if callable(dump) else len(json.dumps(message, default=str))
