"""Resource subscriptions: clients watching a resource, told when a tool says it changed.

``await self.notify_resource_updated(uri)`` (in any tool, resource or prompt) tells every watcher of ``uri``:
on 2025-11-25, the sessions that sent ``resources/subscribe`` for it (``notifications/resources/updated`` on
their standalone stream, so on an SSE server: ``json_response=False``); on 2026-07-28, the
``subscriptions/listen`` streams that named it (the SDK's ``ListenHandler`` over an in-process bus, so a
stream sees the updates announced by its own instance). What a server lists is fixed when it is built, so
there are no list-changed events to send.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated

from ._client_log import LogLevels

__all__ = ["Services", "Subscriptions"]

_log = logging.getLogger("mcpkit.subscriptions")

#: 2025-11-25 sessions watching one URI at most (the oldest forgotten first).
WATCHERS_KEPT = 10_000


class Subscriptions:
    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        self._watchers: dict[str, OrderedDict[str, Any]] = {}  # uri -> session key -> its ServerSession

    async def subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        watchers = self._watchers.setdefault(str(params.uri), OrderedDict())
        watchers[_session_key(ctx)] = ctx.session
        while len(watchers) > WATCHERS_KEPT:
            watchers.popitem(last=False)
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self._watchers.get(str(params.uri), OrderedDict()).pop(_session_key(ctx), None)
        return types.EmptyResult()

    async def updated(self, uri: str) -> None:
        await self.bus.publish(ResourceUpdated(uri=uri))
        watchers = self._watchers.get(uri)
        for key, session in list((watchers or {}).items()):
            try:
                await session.send_resource_updated(uri)
            except Exception:  # that session is gone: it watches no more
                _log.debug("dropping a watcher of %s", uri, exc_info=True)
                watchers.pop(key, None)  # type: ignore[union-attr]


def _session_key(ctx: ServerRequestContext[Any, Any]) -> str:
    request = ctx.request
    if request is not None:
        return str(request.headers.get("mcp-session-id", ""))
    return f"stdio:{id(ctx.session)}"


@dataclass(frozen=True, slots=True)
class Services:
    """What every context of one server shares: the sessions' log levels and the resource watchers."""

    log_levels: LogLevels = field(default_factory=LogLevels)
    subscriptions: Subscriptions = field(default_factory=Subscriptions)
