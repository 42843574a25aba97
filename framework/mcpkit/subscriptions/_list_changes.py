"""What a server lists can change while it runs (``Server.enable``/``disable``), and the clients that may have seen
the old list are told (docs/tools.md; docs/architecture.md)."""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol

from mcp.server import NotificationOptions, ServerRequestContext
from mcp.server import Server as SDKServer
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    PromptsListChanged,
    ResourcesListChanged,
    ToolsListChanged,
)

from ..base import ConfigurationError
from ..reporting import session_key

__all__ = ["Kind", "ListChanges", "ListChangingServer", "Switchable", "switch", "switched"]

_log = logging.getLogger("mcpkit.list_changes")

#: 2025-11-25 sessions remembered per list, at most (the server holds 10,000 sessions by default).
LISTERS_KEPT = 10_000

Kind = Literal["tools", "prompts", "resources"]
_EVENTS: dict[str, type[ToolsListChanged | PromptsListChanged | ResourcesListChanged]] = {
    "tools": ToolsListChanged,
    "prompts": PromptsListChanged,
    "resources": ResourcesListChanged,
}


class Switchable(Protocol):
    """What holds one kind of list: every declared name, and switching some on or off."""

    def names(self) -> tuple[str, ...]: ...

    def enabled_names(self) -> tuple[str, ...]: ...

    def switch(self, names: Iterable[str], enabled: bool) -> bool: ...


class ListChangingServer(SDKServer[Any]):
    """The SDK server, declaring ``listChanged`` to 2025-11-25 sessions too (2026-07-28 declares it with listen)."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        every_list = NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True)
        return super().create_initialization_options(
            notification_options or every_list, experimental_capabilities, extensions
        )


def switch(
    holders: Mapping[Kind, Switchable], asked: Mapping[Kind, Sequence[str]], enabled: bool, server: str
) -> list[Kind]:
    """Switch the ``asked`` names of each kind on or off, every name checked first; the kinds whose list changed."""
    for kind, names in asked.items():
        if isinstance(names, str) or not all(isinstance(name, str) for name in names):
            raise ConfigurationError(f"{kind}= is a list of names, like {kind}=['name'], not {names!r:.60}.")
        unknown = sorted(set(names) - set(holders[kind].names()))
        if unknown:
            raise ConfigurationError(
                f"No {kind} named {', '.join(map(repr, unknown))} in {server}; only declared {kind} can be "
                f"enabled or disabled: declare them with enabled=False to start them off."
            )
    return [kind for kind, names in asked.items() if holders[kind].switch(names, enabled)]


def switched(on: Iterable[str], names: Iterable[str], enabled: bool) -> set[str] | None:
    """The names that are on after switching ``names`` on (or off), or None when that changes nothing."""
    before = set(on)
    after = before | set(names) if enabled else before - set(names)
    return None if after == before else after


class ListChanges:
    """The sessions to tell when a list changes, and the telling."""

    def __init__(self, bus: InMemorySubscriptionBus) -> None:
        self._bus = bus
        # kind -> session key -> the session's ServerSession, least recently listing first
        self._listers: dict[str, OrderedDict[str, Any]] = {kind: OrderedDict() for kind in _EVENTS}

    def listed(self, kind: Kind, ctx: ServerRequestContext[Any, Any]) -> None:
        """A request listed ``kind``: a 2025-11-25 session is told when that list changes (2026-07-28 listens)."""
        key = session_key(ctx)
        if key is not None:
            listers = self._listers[kind]
            listers[key] = ctx.session
            listers.move_to_end(key)
            if len(listers) > LISTERS_KEPT:
                listers.popitem(last=False)

    async def changed(self, kinds: Iterable[Kind]) -> None:
        for kind in kinds:
            await self._bus.publish(_EVENTS[kind]())
            for key, session in list(self._listers[kind].items()):
                try:
                    await _send(kind, session)
                except Exception:  # that session is gone: it is told no more
                    _log.debug("dropping a %s lister", kind, exc_info=True)
                    self._listers[kind].pop(key, None)


async def _send(kind: Kind, session: Any) -> None:
    if kind == "tools":
        await session.send_tool_list_changed()
    elif kind == "prompts":
        await session.send_prompt_list_changed()
    else:
        await session.send_resource_list_changed()
