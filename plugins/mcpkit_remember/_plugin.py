"""``RememberPlugin``: gives every tool of its app ``self.remember``, backed by one store per server."""

from __future__ import annotations

import importlib.util
import inspect
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mcpkit import Clock, ConfigurationError, Context, SystemClock, ToolContext
from mcpkit_search import Embedder
from mcpkit_storage import (
    DEFAULT_MIN_SIMILARITY,
    MAX_TTL,
    NOTES_NAMESPACE,
    BackedPlugin,
    Backing,
    Keyring,
    Quota,
    Semantic,
    StoreConfig,
    VaultTaskStore,
    keyring_from,
    make_store,
    store_config,
)

from ._remember import Remember, RememberPolicy
from ._tools import memory_tools
from ._tools_config import ToolsConfig

__all__ = ["RememberPlugin", "keyring_from", "make_store"]

logger = logging.getLogger("mcpkit.remember")

#: The largest value kept by default (as compact JSON), and the rest of a request that carries one.
DEFAULT_MAX_VALUE_BYTES = 64 * 1024
REQUEST_ROOM_BYTES = 64 * 1024

#: What sealing adds to a value at most: header, nonce, tag, deadline, write time, identity, bucket and key.
SEALING_OVERHEAD_BYTES = 2048

#: Default quotas: what one caller may keep in one scope (global scope: every caller together).
DEFAULT_MAX_VALUES = 10_000
DEFAULT_MAX_BYTES = 16 * 1024 * 1024

#: Default longest life of a value kept for a session, after its last write (the session is gone by then).
DEFAULT_SESSION_TTL = 86_400.0


class RememberPlugin(BackedPlugin):
    """Per-caller memory for every tool; build it with :meth:`RememberPlugin.init`."""

    def __init__(
        self,
        store: StoreConfig | None = None,
        *,
        default_ttl: float | None = None,
        secret: str | Sequence[str] | None = None,
        max_value_bytes: int = DEFAULT_MAX_VALUE_BYTES,
        max_values: int | None = DEFAULT_MAX_VALUES,
        max_bytes: int | None = DEFAULT_MAX_BYTES,
        session_ttl: float | None = DEFAULT_SESSION_TTL,
        tools: ToolsConfig | Mapping[str, Any] | None = None,
        redis_prefix: str = "mcpkit:remember:",
        search: bool = False,
        embedder: Embedder | None = None,
        search_keys: bool = True,
    ) -> None:
        if not isinstance(search, bool):
            raise ConfigurationError(
                f"search is True (index every value, for self.remember.search) or False, not {search!r:.40}."
            )
        if not isinstance(search_keys, bool):
            raise ConfigurationError(
                f"search_keys is True (a value's key is searched with it) or False (its value alone), "
                f"not {search_keys!r:.40}."
            )
        self.search = search
        self.search_keys = search_keys
        self.embedder = _checked_embedder(embedder)
        self.default_ttl = _seconds("default_ttl", default_ttl)
        self.session_ttl = _seconds("session_ttl", session_ttl)
        if isinstance(max_value_bytes, bool) or not isinstance(max_value_bytes, int) or max_value_bytes < 1:
            raise ConfigurationError(f"max_value_bytes is a positive whole number of bytes, not {max_value_bytes!r}.")
        for name, limit in (("max_values", max_values), ("max_bytes", max_bytes)):
            if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
                raise ConfigurationError(f"{name} is a positive whole number, or None for no limit; not {limit!r:.40}.")
        if max_bytes is not None and max_bytes < max_value_bytes + SEALING_OVERHEAD_BYTES:
            raise ConfigurationError(
                f"max_bytes ({max_bytes:,}) leaves no room for a value of max_value_bytes ({max_value_bytes:,}) once "
                f"sealed (up to {SEALING_OVERHEAD_BYTES:,} bytes more, with its key and identity): raise max_bytes "
                "or lower max_value_bytes."
            )
        self.quota = None if max_values is None and max_bytes is None else Quota(max_values, max_bytes)
        secrets = [secret] if isinstance(secret, str) else (list(secret) if secret is not None else None)
        self.max_value_bytes = max_value_bytes
        self.tools_config = ToolsConfig.parse(tools)
        self._backing = Backing(store, secrets, redis_prefix)
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
        default_ttl: float | None = None,
        secret: str | Sequence[str] | None = None,
        max_value_bytes: int = DEFAULT_MAX_VALUE_BYTES,
        max_values: int | None = DEFAULT_MAX_VALUES,
        max_bytes: int | None = DEFAULT_MAX_BYTES,
        session_ttl: float | None = DEFAULT_SESSION_TTL,
        tools: ToolsConfig | Mapping[str, Any] | None = None,
        redis_prefix: str = "mcpkit:remember:",
        search: bool = False,
        embedder: Embedder | None = None,
        search_keys: bool = True,
    ) -> RememberPlugin:
        """The plugin with a ``memory``, ``sqlite`` (``path``) or ``redis`` (``url``) store.

        Without ``type`` the store comes from ``REMEMBER_STORE`` (default: memory);
        without ``secret``, from ``REMEMBER_SECRET`` (several, comma-separated: the first
        encrypts, the others are still read during a rotation). ``max_values`` and
        ``max_bytes`` bound what one caller keeps in one scope (None: no limit);
        ``session_ttl`` is the longest a value kept for a session lives after its last write.
        ``search=True`` indexes every value so that ``self.remember.search`` can find it (the memory
        tools' notes are always indexed, for ``search_memories``). With an ``embedder`` (for example
        ``mcpkit_search.MiniLM()``), searchable values also keep sealed vectors and search is hybrid:
        BM25 and similarity in meaning, fused (docs/search.md). ``search_keys=False`` leaves keys out of
        what is searched (for keys that are ids, not words); it applies to values written from then on.
        """
        # Without a type, REMEMBER_STORE is read when the server is built, not at import.
        config = None if type is None and url is None and path is None else store_config(type, url, _path(path))
        return cls(
            config,
            default_ttl=default_ttl,
            secret=secret,
            max_value_bytes=max_value_bytes,
            max_values=max_values,
            max_bytes=max_bytes,
            session_ttl=session_ttl,
            tools=tools,
            redis_prefix=redis_prefix,
            search=search,
            embedder=embedder,
            search_keys=search_keys,
        )

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
        return Remember(self._started(), ctx.caller, bucket_name(ctx))

    def notes_for(self, ctx: ToolContext) -> Remember:
        """What the model-facing memory tools use: buckets of their own, so the model never
        overwrites a value the server's tools keep (and the four tools share one tool scope)."""
        return Remember(self._started(), ctx.caller, None, NOTES_NAMESPACE)

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
        self._policy = RememberPolicy(
            vault, self._clock, self.default_ttl, self.max_value_bytes, self.quota, self.session_ttl, self._turn_timeout
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


def _checked_embedder(embedder: object) -> Embedder | None:
    """The embedder when it has a string ``name`` and an async ``embed`` and numpy is there; else why not."""
    if embedder is None:
        return None
    if not isinstance(embedder, Embedder) or not inspect.iscoroutinefunction(embedder.embed):
        raise ConfigurationError(
            f"embedder is an object with a `name` and an `async def embed(self, texts)` returning one vector per "
            f"text (mcpkit_search.Embedder), for example mcpkit_search.MiniLM(); not {embedder!r:.60}."
        )
    load = getattr(embedder, "load", None)
    if load is not None and not inspect.iscoroutinefunction(load):
        raise ConfigurationError(f"the embedder's load is `async def load(self) -> None`, not {load!r:.60}.")
    threshold = getattr(embedder, "min_similarity", DEFAULT_MIN_SIMILARITY)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not -1.0 <= threshold < 1.0:
        raise ConfigurationError(
            "the embedder's min_similarity is the cosine similarity above which a value matches a query by "
            f"meaning, a number from -1 up to (not including) 1; not {threshold!r:.60}."
        )
    concurrency = getattr(embedder, "concurrency", 1)
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ConfigurationError(
            "the embedder's concurrency is how many of its embed calls may run at once, a whole number from 1 "
            f"(default 1: a local model uses every core for one); not {concurrency!r:.60}."
        )
    if not isinstance(embedder.name, str) or not embedder.name:
        raise ConfigurationError(
            f"the embedder's name is a non-empty string naming its model, not {embedder.name!r:.60}."
        )
    if importlib.util.find_spec("numpy") is None:
        raise ConfigurationError("An embedder needs numpy for its vectors: pip install 'mcpkit[semantic]' (or numpy).")
    return embedder


def _seconds(name: str, value: object) -> float | None:
    """A number of seconds in (0, MAX_TTL], or None; anything else is a ConfigurationError naming ``name``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= MAX_TTL:
        raise ConfigurationError(
            f"{name} is a number of seconds above 0 and at most {MAX_TTL:,} (100 years), or None; not {value!r:.40}."
        )
    return float(value)


def _path(path: str | os.PathLike[str] | None) -> str | None:
    return None if path is None else os.fspath(path)


def bucket_name(ctx: Context) -> str:
    """Whose ``scope="tool"`` values a context sees: a tool's by its name, a resource's or prompt's by
    ``resource:NAME`` or ``prompt:NAME`` (tool names cannot hold ``:``, so these never meet a tool's)."""
    return ctx.name if ctx.kind == "tool" else f"{ctx.kind}:{ctx.name}"
