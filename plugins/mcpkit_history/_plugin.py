"""``HistoryPlugin``: gives every tool, resource and prompt of its app ``self.history``, on the remember store."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mcpkit import Clock, ConfigurationError, Context, SystemClock, ToolContext
from mcpkit_search import Analyzer
from mcpkit_storage import BackedPlugin, Backing, Quota, StoreConfig, check_scope

from ._history import History
from ._messages import MAX_MESSAGE_BYTES
from ._policy import MAX_LOAD_BYTES, MAX_SEARCH_BYTES, HistoryPolicy
from ._tools import history_tools

__all__ = ["HistoryPlugin"]

#: Defaults: messages per conversation, and what one caller keeps in all conversations together.
DEFAULT_MAX_MESSAGES = 10_000
DEFAULT_MAX_TOTAL_MESSAGES = 100_000
DEFAULT_MAX_TOTAL_BYTES = 256 * 1024 * 1024
#: The longest a message of a session (``scope="session"``) lives: the session is gone by then.
DEFAULT_SESSION_TTL = 86_400.0


class HistoryPlugin(BackedPlugin):
    """Durable per-caller conversations; build it with :meth:`HistoryPlugin.init`."""

    def __init__(
        self,
        store: StoreConfig | None = None,
        *,
        secret: str | Sequence[str] | None = None,
        scope: str = "user",
        max_message_bytes: int = MAX_MESSAGE_BYTES,
        max_messages: int = DEFAULT_MAX_MESSAGES,
        max_total_messages: int | None = DEFAULT_MAX_TOTAL_MESSAGES,
        max_total_bytes: int | None = DEFAULT_MAX_TOTAL_BYTES,
        tools: bool = False,
        tool_prefix: str = "",
        redis_prefix: str = "mcpkit:remember:",
        session_ttl: float | None = DEFAULT_SESSION_TTL,
        max_load_bytes: int = MAX_LOAD_BYTES,
        max_search_bytes: int = MAX_SEARCH_BYTES,
    ) -> None:
        if scope not in ("user", "session"):
            raise ConfigurationError(
                f"scope is 'user' (a signed-in caller's conversations, across sessions and clients) or 'session', "
                f"not {scope!r:.40}."
            )
        self.scope = check_scope(scope)
        for name, limit in (("max_message_bytes", max_message_bytes), ("max_messages", max_messages)):
            if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
                raise ConfigurationError(f"{name} is a positive whole number, not {limit!r:.40}.")
        for name, total in (("max_total_messages", max_total_messages), ("max_total_bytes", max_total_bytes)):
            if total is not None and (isinstance(total, bool) or not isinstance(total, int) or total < 1):
                raise ConfigurationError(f"{name} is a positive whole number, or None for no limit; not {total!r:.40}.")
        if not isinstance(tools, bool):
            raise ConfigurationError(
                f"tools is True (offer the six history tools to the model) or False, not {tools!r}."
            )
        if not isinstance(tool_prefix, str) or (tool_prefix and not tool_prefix.replace("_", "").isalnum()):
            raise ConfigurationError(f"tool_prefix is letters, digits and '_' (like 'desk_'), not {tool_prefix!r:.40}.")
        for name, most in (("max_load_bytes", max_load_bytes), ("max_search_bytes", max_search_bytes)):
            if isinstance(most, bool) or not isinstance(most, int) or most < 1:
                raise ConfigurationError(f"{name} is a positive whole number of bytes, not {most!r:.40}.")
        self.max_load_bytes = max_load_bytes
        self.max_search_bytes = max_search_bytes
        self.max_message_bytes = max_message_bytes
        self.max_messages = max_messages
        unlimited = max_total_messages is None and max_total_bytes is None
        self.quota = None if unlimited else Quota(max_total_messages, max_total_bytes)
        # Every conversation holds a message, so a caller never needs more of them than of messages: the quota of
        # conversations counts the empty record a cleared one leaves for a minute (CLEARED_SECONDS) too.
        self.tree_quota = None if unlimited else Quota(max_total_messages, max_total_bytes)
        if session_ttl is not None and (isinstance(session_ttl, bool) or not isinstance(session_ttl, int | float)):
            raise ConfigurationError(f"session_ttl is a number of seconds, or None; not {session_ttl!r:.40}.")
        if session_ttl is not None and session_ttl <= 0:
            raise ConfigurationError(f"session_ttl is a number of seconds above 0, or None; not {session_ttl!r:.40}.")
        self.session_ttl = None if session_ttl is None else float(session_ttl)
        self.tools_enabled = tools
        self.tool_prefix = tool_prefix
        secrets = [secret] if isinstance(secret, str) else (list(secret) if secret is not None else None)
        self._backing = Backing(store, secrets, redis_prefix)
        self._clock: Callable[[], Clock] = SystemClock
        self._policy: HistoryPolicy | None = None

    @classmethod
    def init(
        cls,
        type: str | None = None,
        *,
        url: str | None = None,
        path: str | os.PathLike[str] | None = None,
        secret: str | Sequence[str] | None = None,
        scope: str = "user",
        max_message_bytes: int = MAX_MESSAGE_BYTES,
        max_messages: int = DEFAULT_MAX_MESSAGES,
        max_total_messages: int | None = DEFAULT_MAX_TOTAL_MESSAGES,
        max_total_bytes: int | None = DEFAULT_MAX_TOTAL_BYTES,
        tools: bool = False,
        tool_prefix: str = "",
        redis_prefix: str = "mcpkit:remember:",
        session_ttl: float | None = DEFAULT_SESSION_TTL,
        max_load_bytes: int = MAX_LOAD_BYTES,
        max_search_bytes: int = MAX_SEARCH_BYTES,
    ) -> HistoryPlugin:
        """The plugin on a ``memory``, ``sqlite`` (``path``) or ``redis`` (``url``) store, as ``RememberPlugin``.

        Without ``type`` the store comes from ``REMEMBER_STORE``, the secret from ``REMEMBER_SECRET``: give both
        plugins the same and the history sits beside the remembered values, sealed with the same keys, reached by
        the same ``purge`` and ``rotate``. ``tools=True`` offers the six history tools (names after
        ``tool_prefix``). One ``load_history`` page returns at most ``max_load_bytes`` of messages (a cursor gives
        the older ones), and a search within one conversation reads at most its newest ``max_search_bytes``. In
        ``scope="session"``, a message lives at most ``session_ttl`` seconds (a day by
        default): nobody can reach a session's conversations once it ends. See docs/history.md.
        """
        from mcpkit_storage import store_config

        path_text = None if path is None else os.fspath(path)
        config = None if type is None and url is None and path is None else store_config(type, url, path_text)
        return cls(
            config,
            secret=secret,
            scope=scope,
            max_message_bytes=max_message_bytes,
            max_messages=max_messages,
            max_total_messages=max_total_messages,
            max_total_bytes=max_total_bytes,
            tools=tools,
            tool_prefix=tool_prefix,
            redis_prefix=redis_prefix,
            session_ttl=session_ttl,
            max_load_bytes=max_load_bytes,
            max_search_bytes=max_search_bytes,
        )

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
