"""Resource subscriptions: clients watching a resource, told when a tool says it changed.

``await self.notify_resource_updated(uri)`` (in any tool, resource or prompt) tells every watcher of ``uri``:
on 2025-11-25, the sessions that sent ``resources/subscribe`` for it (``notifications/resources/updated`` on
their standalone stream, the ``GET`` the official clients open); on 2026-07-28, the
``subscriptions/listen`` streams that named it (the SDK's ``ListenHandler`` over an in-process bus, so a
stream sees the updates announced by its own instance). List changes travel the same bus (``_list_changes``).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPError

from ..reporting import LogLevels, session_key
from ._list_changes import ListChanges

__all__ = ["Services", "Subscriptions"]

_log = logging.getLogger("mcpkit.subscriptions")

#: 2025-11-25 sessions watching one URI, and URIs watched, at most (the oldest forgotten first).
WATCHERS_KEPT = 10_000
URIS_KEPT = 10_000


class Subscriptions:
    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        # uri -> session key -> its ServerSession, least recently subscribed first
        self._watchers: OrderedDict[str, OrderedDict[str, Any]] = OrderedDict()
        self.known: Callable[[str], bool] = lambda uri: True  # the server's resources say which URIs exist

    async def subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        uri = str(params.uri)
        if not self.known(uri):  # only what the server serves can be watched: no table of made-up URIs
            message = f"Resource not found: {uri[:200]}; there is nothing there to watch."
            raise MCPError(types.INVALID_PARAMS, message, data={"uri": uri})
        watchers = self._watchers.setdefault(uri, OrderedDict())
        self._watchers.move_to_end(uri)
        watchers[_session_key(ctx)] = ctx.session
        while len(watchers) > WATCHERS_KEPT:
            watchers.popitem(last=False)
        while len(self._watchers) > URIS_KEPT:
            self._watchers.popitem(last=False)
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        watchers = self._watchers.get(str(params.uri))
        if watchers is not None:
            watchers.pop(_session_key(ctx), None)
            if not watchers:
                del self._watchers[str(params.uri)]
        return types.EmptyResult()

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
                watchers.pop(key, None)


def _session_key(ctx: ServerRequestContext[Any, Any]) -> str:
    return session_key(ctx) or ""


@dataclass(frozen=True, slots=True)
class Services:
    """What every context of one server shares: the sessions' log levels, the resource watchers, the listers."""

    log_levels: LogLevels = field(default_factory=LogLevels)
    subscriptions: Subscriptions = field(default_factory=Subscriptions)
    list_changes: ListChanges = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "list_changes", ListChanges(self.subscriptions.bus))
