"""Resource subscriptions: clients watching a resource, told when a tool says it changed.

``await self.notify_resource_updated(uri)`` (in any tool, resource or prompt) tells every watcher of ``uri``:
on 2025-11-25, the sessions that sent ``resources/subscribe`` for it (``notifications/resources/updated`` on
their standalone stream, the ``GET`` the official clients open); on 2026-07-28, the
``subscriptions/listen`` streams that named it (the SDK's ``ListenHandler`` over an in-process bus, so a
stream sees the updates announced by its own instance). List changes travel the same bus (``_list_changes``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPError

from ..base import IDENTITY_SCOPE_KEY, checked_whole, client_group
from ..reporting import session_key

__all__ = ["SubscriptionLimits", "Subscriptions"]

_log = logging.getLogger("mcpkit.subscriptions")

#: The longest URI a session may watch, and how many URIs one session, one caller and every session together may
#: watch (``SubscriptionLimits``). A subscription holds its URI for as long as its session lives: without bounds,
#: 3,000 subscriptions to 60 KiB URIs held 470 MB.
MAX_URI_CHARS = 2048
PER_SESSION = 64
PER_CALLER = 256
TOTAL = 100_000
#: How many 2026-07-28 ``subscriptions/listen`` streams one caller, and every caller together, may hold open. A
#: stream holds a task, a buffer of up to 1,024 events and its URIs (at most ``per_session`` of them) until its
#: client hangs up; the SDK alone bounded only the total (1,024), which one caller could take whole.
LISTEN_PER_CALLER = 16
LISTEN_TOTAL = 1024


@dataclass(frozen=True, slots=True)
class SubscriptionLimits:
    """What watchers may hold (``Server(subscription_limits=...)``): URI length, 2025-11-25 ``resources/subscribe``
    subscriptions per session, per caller and in all (a 2026-07-28 listen stream may name ``per_session`` URIs),
    and open ``subscriptions/listen`` streams per caller and in all. What passes a limit is refused with what to
    do."""

    max_uri_chars: int = MAX_URI_CHARS
    per_session: int = PER_SESSION
    per_caller: int = PER_CALLER
    total: int = TOTAL
    listen_per_caller: int = LISTEN_PER_CALLER
    listen_total: int = LISTEN_TOTAL

    def __post_init__(self) -> None:
        for name in ("max_uri_chars", "per_session", "per_caller", "total", "listen_per_caller", "listen_total"):
            checked_whole(f"SubscriptionLimits.{name}", getattr(self, name))


class Subscriptions:
    def __init__(self, limits: SubscriptionLimits | None = None) -> None:
        self.bus = InMemorySubscriptionBus()
        self.limits = limits or SubscriptionLimits()
        self._listen = ListenHandler(self.bus, max_subscriptions=self.limits.listen_total)
        self._listening: dict[str, int] = {}  # caller -> their open listen streams
        self._watchers: dict[str, dict[str, Any]] = {}  # uri -> session key -> its ServerSession
        self._by_session: dict[str, set[str]] = {}  # session key -> the URIs it watches
        self._owners: dict[str, str] = {}  # session key -> its caller (an anonymous one: by address)
        self._by_owner: dict[str, int] = {}  # caller -> subscriptions of all their sessions
        self._total = 0
        self.known: Callable[[str], bool] = lambda uri: True  # the server's resources say which URIs exist

    async def subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        uri = str(params.uri)
        limits = self.limits
        self._check_uri(uri)
        if not self.known(uri):  # only what the server serves can be watched: no table of made-up URIs
            message = f"Resource not found: {uri[:200]}; there is nothing there to watch."
            raise MCPError(types.INVALID_PARAMS, message, data={"uri": uri[:200]})
        key = _session_key(ctx)
        watched = self._by_session.get(key, set())
        if uri in watched:
            self._watchers[uri][key] = ctx.session
            return types.EmptyResult()
        owner = self._owners.get(key) or _owner(ctx)
        for count, limit, name, whose in (
            (len(watched), limits.per_session, "per_session", "this session watches"),
            (self._by_owner.get(owner, 0), limits.per_caller, "per_caller", "your sessions watch"),
            (self._total, limits.total, "total", "this server's sessions watch"),
        ):
            if count >= limit:
                raise MCPError(
                    types.INVALID_PARAMS,
                    f"Cannot watch {uri[:200]}: {whose} {limit:,} resources already, the most this server allows "
                    f"(subscription limit {name}). Unsubscribe from resources you no longer need, then subscribe "
                    "again.",
                )
        self._by_session[key] = watched
        self._owners[key] = owner
        watched.add(uri)
        self._by_owner[owner] = self._by_owner.get(owner, 0) + 1
        self._total += 1
        self._watchers.setdefault(uri, {})[key] = ctx.session
        return types.EmptyResult()

    async def listen(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """Serve one 2026-07-28 ``subscriptions/listen`` stream (the SDK's ``ListenHandler``) within the limits: at
        most ``per_session`` URIs of at most ``max_uri_chars`` each, ``listen_per_caller`` streams per caller and
        ``listen_total`` in all."""
        uris = params.notifications.resource_subscriptions or ()
        limits = self.limits
        if len(uris) > limits.per_session:
            raise MCPError(
                types.INVALID_PARAMS,
                f"This listen stream names {len(uris):,} resources; one stream watches at most {limits.per_session:,} "
                "(subscription limit per_session). Name fewer, or watch the rest on another stream.",
            )
        for uri in uris:
            self._check_uri(uri)
        owner = _owner(ctx)
        open_now = self._listening.get(owner, 0)
        if open_now >= limits.listen_per_caller:
            raise MCPError(
                types.INVALID_PARAMS,
                f"You have {open_now:,} listen streams open, the most this server allows one caller (subscription "
                "limit listen_per_caller). Close one you no longer need (end its request), then listen again.",
            )
        if self.listening() >= limits.listen_total:
            raise MCPError(
                types.INVALID_PARAMS,
                f"This server has {limits.listen_total:,} listen streams open, the most it allows (subscription limit "
                "listen_total). Try again later, or close a stream of yours you no longer need.",
            )
        self._listening[owner] = open_now + 1
        try:
            return await self._listen(ctx, params)
        finally:
            left = self._listening[owner] - 1
            if left:
                self._listening[owner] = left
            else:
                del self._listening[owner]

    def close(self) -> None:
        """End every listen stream (at shutdown, which would otherwise wait for their clients to hang up)."""
        self._listen.close()

    def listening(self) -> int:
        """How many listen streams are open."""
        return sum(self._listening.values())

    def _check_uri(self, uri: str) -> None:
        limit = self.limits.max_uri_chars
        if len(uri) > limit:
            raise MCPError(
                types.INVALID_PARAMS,
                f"The URI is {len(uri):,} characters long; this server watches URIs of at most {limit:,}"
                " (max_uri_chars). Watch a shorter URI.",
            )

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self._drop(_session_key(ctx), str(params.uri))
        return types.EmptyResult()

    def session_ended(self, session: str) -> None:
        """Forget every subscription of a session that ended (closed by its client, idle, or ended by the server)."""
        for uri in list(self._by_session.get(session, ())):
            self._drop(session, uri)

    def watched(self) -> int:
        """How many subscriptions every session together holds."""
        return self._total

    def _drop(self, key: str, uri: str) -> None:
        watched = self._by_session.get(key)
        if watched is None or uri not in watched:
            return
        watched.discard(uri)
        owner = self._owners[key]
        self._total -= 1
        left = self._by_owner[owner] - 1
        if left:
            self._by_owner[owner] = left
        else:
            del self._by_owner[owner]
        if not watched:
            del self._by_session[key]
            del self._owners[key]
        watchers = self._watchers.get(uri)
        if watchers is not None:
            watchers.pop(key, None)
            if not watchers:
                del self._watchers[uri]

    async def updated(self, uri: str) -> None:
        await self.bus.publish(ResourceUpdated(uri=uri))
        watchers = self._watchers.get(uri)
        if not watchers:
            return
        for key, session in list(watchers.items()):
            try:
                await session.send_resource_updated(uri)
            except Exception:  # that session is gone: it watches no more
                _log.debug("dropping a watcher of %s", uri, exc_info=True)
                self._drop(key, uri)


def _owner(ctx: ServerRequestContext[Any, Any]) -> str:
    """Whose subscription this is: the signed-in identity, else the client's address (IPv6: its /64)."""
    request = ctx.request
    scope = getattr(request, "scope", None)
    if not isinstance(scope, dict):
        return "local"  # stdio: one connection, one person
    identity = scope.get(IDENTITY_SCOPE_KEY)
    if identity is not None:
        return f"user:{identity.user_id}"
    client = scope.get("client")
    return "anon:" + (client_group(client[0]) if client else "?")


def _session_key(ctx: ServerRequestContext[Any, Any]) -> str:
    return session_key(ctx) or ""
