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
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPError

from ..base import IDENTITY_SCOPE_KEY, ConfigurationError, client_group
from ..reporting import LogLevels, session_key
from ._list_changes import ListChanges

__all__ = ["Services", "SubscriptionLimits", "Subscriptions"]

_log = logging.getLogger("mcpkit.subscriptions")

#: The longest URI a session may watch, and how many URIs one session, one caller and every session together may
#: watch (``SubscriptionLimits``). A subscription holds its URI for as long as its session lives: without bounds,
#: 3,000 subscriptions to 60 KiB URIs held 470 MB.
MAX_URI_CHARS = 2048
PER_SESSION = 64
PER_CALLER = 256
TOTAL = 100_000


@dataclass(frozen=True, slots=True)
class SubscriptionLimits:
    """What 2025-11-25 ``resources/subscribe`` may hold: URI length, and subscriptions per session, per caller and
    in all (``Server(subscription_limits=...)``). A subscription past a limit is refused with what to do."""

    max_uri_chars: int = MAX_URI_CHARS
    per_session: int = PER_SESSION
    per_caller: int = PER_CALLER
    total: int = TOTAL

    def __post_init__(self) -> None:
        for name in ("max_uri_chars", "per_session", "per_caller", "total"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigurationError(f"SubscriptionLimits.{name} is a whole number from 1, not {value!r:.40}.")


class Subscriptions:
    def __init__(self, limits: SubscriptionLimits | None = None) -> None:
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        self.limits = limits or SubscriptionLimits()
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
        if len(uri) > limits.max_uri_chars:
            raise MCPError(
                types.INVALID_PARAMS,
                f"The URI is {len(uri):,} characters long; this server watches URIs of at most {limits.max_uri_chars:,}"
                " (max_uri_chars). Subscribe to a shorter URI.",
            )
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


@dataclass(frozen=True, slots=True)
class Services:
    """What every context of one server shares: the sessions' log levels, the resource watchers, the listers."""

    log_levels: LogLevels = field(default_factory=LogLevels)
    subscriptions: Subscriptions = field(default_factory=Subscriptions)  # with SubscriptionLimits' defaults
    list_changes: ListChanges = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "list_changes", ListChanges(self.subscriptions.bus))
