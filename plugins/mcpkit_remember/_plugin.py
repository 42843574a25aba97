"""``RememberPlugin``: gives every tool of its app ``self.remember``, backed by one store per server."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Unpack

from mcpkit import Clock, Context, SystemClock, ToolContext
from mcpkit_storage import (
    BackedPlugin,
    Backing,
    Keyring,
    Quota,
    Semantic,
    StoreConfig,
    VaultTaskStore,
    keyring_from,
    make_store,
    record_quotas,
    register_namespace,
    store_config,
)

from ._options import DEFAULT_MAX_VALUE_BYTES, RememberKeywords, RememberOptions
from ._origin import origin_of
from ._remember import Remember, RememberPolicy
from ._tools import memory_tools
from ._tools_config import ToolsConfig

__all__ = ["NOTES_NAMESPACE", "RememberPlugin", "keyring_from", "make_store"]

logger = logging.getLogger("mcpkit.remember")

#: The memory tools' notes live in buckets of their own (``memory.user``, ...), always indexed for search.
NOTES_NAMESPACE = register_namespace("memory.", indexed=True)

#: Room for the rest of a request that carries a value above the default size.
REQUEST_ROOM_BYTES = 64 * 1024


class RememberPlugin(BackedPlugin):
    """Per-caller memory for every tool; build it with :meth:`RememberPlugin.init`."""

    def __init__(self, store: StoreConfig | None = None, **options: Unpack[RememberKeywords]) -> None:
        self._options = checked = RememberOptions(**options)
        self.search = checked.search
        self.search_keys = checked.search_keys
        self.embedder = checked.embedder
        self.default_ttl = checked.default_ttl
        self.session_ttl = checked.session_ttl
        max_values, max_bytes = checked.max_values, checked.max_bytes
        self.quota = None if max_values is None and max_bytes is None else Quota(max_values, max_bytes)
        self.max_value_bytes = checked.max_value_bytes
        self.history = checked.history
        self.tools_config = ToolsConfig.parse(checked.tools)
        self._backing = Backing(store, checked.secrets, checked.redis_prefix)
        self._clock: Callable[[], Clock] = SystemClock
        self._policy: RememberPolicy | None = None
        self._semantic: Semantic | None = None

    @classmethod
    def init(
        cls,
        type: str | None = None,
        *,
        url: str | None = None,
        path: str | os.PathLike[str] | None = None,
        **options: Unpack[RememberKeywords],
    ) -> RememberPlugin:
        """The plugin with a ``memory``, ``sqlite`` (``path``) or ``redis`` (``url``) store; ``options`` are
        ``RememberOptions``' fields (docs/remember.md lists them).

        Without ``type`` the store comes from ``REMEMBER_STORE`` (default: memory), and without ``secret`` from
        ``REMEMBER_SECRET`` (several, comma-separated: the first encrypts, the others are still read).
        """
        # Without a type, REMEMBER_STORE is read when the server is built, not at import.
        config = None if type is None and url is None and path is None else store_config(type, url, _path(path))
        return cls(config, **options)

    def attributes(self) -> Mapping[str, Callable[[Context], object]]:
        return {"remember": self.remember_for}

    def max_request_bytes(self) -> int:
        """With values above the default size: room for one sent with every character escaped (3x), and the request.

        At the default ``max_value_bytes`` the server's default body limit is sized for them already (0).
        """
        if self.max_value_bytes <= DEFAULT_MAX_VALUE_BYTES:
            return 0
        return 3 * self.max_value_bytes + REQUEST_ROOM_BYTES

    def remember_for(self, ctx: Context) -> Remember:
        """The ``self.remember`` of one call (of a tool, a resource or a prompt)."""
        return Remember(self._started(), ctx.caller, bucket_name(ctx), origin=origin_of(ctx))

    def notes_for(self, ctx: ToolContext) -> Remember:
        """What the model-facing memory tools use: buckets of their own, so the model never
        overwrites a value the server's tools keep (and the four tools share one tool scope)."""
        return Remember(self._started(), ctx.caller, None, NOTES_NAMESPACE, source="model", origin=origin_of(ctx))

    def _started(self) -> RememberPolicy:
        if self._policy is None:
            raise RuntimeError("RememberPlugin has not started: the server's lifespan (startup) has not run.")
        return self._policy

    def tools(self) -> Sequence[type[ToolContext]]:
        return memory_tools(self) if self.tools_config.enabled else ()

    def task_store(self) -> VaultTaskStore:
        """The server's tasks are kept in this plugin's store, sealed, per caller, within ``max_bytes`` per caller as
        every scope is (docs/tasks.md)."""
        backing = self._backing
        return VaultTaskStore(lambda: backing.vault, None if self.quota is None else self.quota.bytes)

    async def startup(self) -> None:
        semantic = None if self.embedder is None else Semantic(self.embedder, keys=self.search_keys)
        vault = await self._backing.start(search_all=self.search, semantic=semantic, search_keys=self.search_keys)
        if semantic is not None:
            await semantic.start()  # its model loads in the background: the server answers meanwhile
        self._semantic = semantic
        # Where ``mcpkit remember import`` reads them: it holds a file's values to the quotas the server keeps.
        await record_quotas(vault.store, {"": self.quota, NOTES_NAMESPACE: self.quota})
        self._policy = RememberPolicy(
            vault,
            self._clock,
            self.default_ttl,
            self.max_value_bytes,
            self.quota,
            self.session_ttl,
            self._turn_timeout,
            self.history,
        )
        logger.info("remember store: %s", self.store_config.describe())

    async def shutdown(self) -> None:
        self._policy = None
        if self._semantic is not None:
            await self._semantic.stop()
            self._semantic = None
        await self._backing.stop()

    @property
    def keyring(self) -> Keyring:
        return self._backing.keyring


def _path(path: str | os.PathLike[str] | None) -> str | None:
    return None if path is None else os.fspath(path)


def bucket_name(ctx: Context) -> str:
    """Whose ``scope="tool"`` values a context sees: a tool's by its name, a resource's or prompt's by
    ``resource:NAME`` or ``prompt:NAME`` (tool names cannot hold ``:``, so these never meet a tool's)."""
    return ctx.name if ctx.kind == "tool" else f"{ctx.kind}:{ctx.name}"
