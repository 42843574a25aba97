"""``HistoryPlugin``: gives every tool, resource and prompt of its app ``self.history``, on the remember store."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Unpack

from mcpkit import Clock, Context, SystemClock, ToolContext
from mcpkit_search import Analyzer
from mcpkit_storage import BackedPlugin, Backing, Quota, StoreConfig, check_scope, store_config

from ._history import History
from ._messages import MAX_MESSAGE_BYTES
from ._options import HistoryKeywords, HistoryOptions
from ._policy import HistoryPolicy
from ._tools import history_tools

__all__ = ["HistoryPlugin"]


class HistoryPlugin(BackedPlugin):
    """Durable per-caller conversations; build it with :meth:`HistoryPlugin.init`."""

    def __init__(self, store: StoreConfig | None = None, **options: Unpack[HistoryKeywords]) -> None:
        self._options = checked = HistoryOptions(**options)
        self.scope = check_scope(checked.scope)
        self.max_load_bytes = checked.max_load_bytes
        self.max_search_bytes = checked.max_search_bytes
        self.max_message_bytes = checked.max_message_bytes
        self.max_messages = checked.max_messages
        total_messages, total_bytes = checked.max_total_messages, checked.max_total_bytes
        unlimited = total_messages is None and total_bytes is None
        self.quota = None if unlimited else Quota(total_messages, total_bytes)
        # Every conversation holds a message, so a caller never needs more of them than of messages: the quota of
        # conversations counts the empty record a cleared one leaves for a minute (CLEARED_SECONDS) too.
        self.tree_quota = None if unlimited else Quota(total_messages, total_bytes)
        self.session_ttl = checked.session_ttl
        self.tools_enabled = checked.tools
        self.tool_prefix = checked.tool_prefix
        self._backing = Backing(store, checked.secrets, checked.redis_prefix)
        self._clock: Callable[[], Clock] = SystemClock
        self._policy: HistoryPolicy | None = None

    @classmethod
    def init(
        cls,
        type: str | None = None,
        *,
        url: str | None = None,
        path: str | os.PathLike[str] | None = None,
        **options: Unpack[HistoryKeywords],
    ) -> HistoryPlugin:
        """The plugin on a ``memory``, ``sqlite`` (``path``) or ``redis`` (``url``) store, as ``RememberPlugin``;
        ``options`` are ``HistoryOptions``' fields (docs/history.md lists them).

        Give both plugins the same store and secret (or neither: ``REMEMBER_STORE``, ``REMEMBER_SECRET``) and the
        history sits beside the remembered values, sealed with the same keys, reached by the same ``purge`` and
        ``rotate``.
        """
        path_text = None if path is None else os.fspath(path)
        config = None if type is None and url is None and path is None else store_config(type, url, path_text)
        return cls(config, **options)

    def attributes(self) -> Mapping[str, Callable[[Context], object]]:
        return {"history": self.history_for}

    def history_for(self, ctx: Context) -> History:
        if self._policy is None:
            raise RuntimeError("HistoryPlugin has not started: the server's lifespan (startup) has not run.")
        return History(self._policy, ctx.caller)

    def tools(self) -> Sequence[type[ToolContext]]:
        return history_tools(self.tool_prefix) if self.tools_enabled else ()

    def max_request_bytes(self) -> int:
        """Room for a save of several large messages, escaped (3x), when messages may be larger than the default."""
        return 0 if self.max_message_bytes <= MAX_MESSAGE_BYTES else 3 * self.max_message_bytes + 64 * 1024

    async def startup(self) -> None:
        vault = await self._backing.start()
        self._policy = HistoryPolicy(
            vault,
            self._clock,
            self.scope,
            self.max_message_bytes,
            self.max_messages,
            self.quota,
            Analyzer(),
            session_ttl=self.session_ttl,
            tree_quota=self.tree_quota,
            max_load_bytes=self.max_load_bytes,
            max_search_bytes=self.max_search_bytes,
            turn_timeout=self._turn_timeout,
        )

    async def shutdown(self) -> None:
        self._policy = None
        await self._backing.stop()

    def describe(self) -> dict[str, Any]:
        return {"store": self.store_config.describe(), "scope": self.scope}
