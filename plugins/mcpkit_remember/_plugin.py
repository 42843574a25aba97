"""``RememberPlugin``: gives every tool of its app ``self.remember``, backed by one store per server."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import inspect
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mcpkit import Clock, ConfigurationError, Context, Plugin, PluginSetup, SystemClock, ToolContext
from mcpkit_search import Embedder

from ._config import StoreConfig, ToolsConfig, secret_from_env, store_config
from ._keyring import Keyring
from ._private_files import secret_beside
from ._remember import Remember, RememberPolicy
from ._scope import NOTES_NAMESPACE
from ._semantic import Semantic
from ._store import Quota, Store
from ._tools import memory_tools
from ._values import MAX_TTL
from ._vault import Vault

__all__ = ["RememberPlugin", "keyring_from", "make_store"]

logger = logging.getLogger("mcpkit.remember")

#: How often expired values are deleted from stores that do not expire them by themselves.
PURGE_INTERVAL = 300.0

#: How long the start may spend checking that the secret opens the stored values.
SECRET_CHECK_SECONDS = 1.0

#: Secrets shorter than this are refused: owner hashes could be guessed offline from a copy of the store.
MIN_SECRET_LENGTH = 16

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


class RememberPlugin(Plugin):
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
    ) -> None:
        if not isinstance(search, bool):
            raise ConfigurationError(
                f"search is True (index every value, for self.remember.search) or False, not {search!r:.40}."
            )
        self.search = search
        self.embedder = _checked_embedder(embedder)
        self._store_config = store
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
        self._secret = [secret] if isinstance(secret, str) else (list(secret) if secret is not None else None)
        self.max_value_bytes = max_value_bytes
        self.tools_config = ToolsConfig.parse(tools)
        self._redis_prefix = redis_prefix
        self._clock: Callable[[], Clock] = SystemClock
        self._policy: RememberPolicy | None = None
        self._store: Store | None = None
        self._keyring: Keyring | None = None
        self._purger: asyncio.Task[None] | None = None

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
    ) -> RememberPlugin:
        """The plugin with a ``memory``, ``sqlite`` (``path``) or ``redis`` (``url``) store.

        Without ``type`` the store comes from ``REMEMBER_STORE`` (default: memory);
        without ``secret``, from ``REMEMBER_SECRET`` (several, comma-separated: the first
        encrypts, the others are still read during a rotation). ``max_values`` and
        ``max_bytes`` bound what one caller keeps in one scope (None: no limit);
        ``session_ttl`` is the longest a value kept for a session lives after its last write.
        ``search=True`` indexes every value so that ``self.remember.search`` can find it (the memory
        tools' notes are always indexed, for ``search_memories``). With an ``embedder`` (for example
        ``mcpkit_search.MiniLM()``), searchable values also keep a sealed vector and search is hybrid:
        BM25 and similarity in meaning, fused (docs/search.md).
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
        )

    @property
    def store_config(self) -> StoreConfig:
        return self._store_config or store_config(None, None, None)

    def setup(self, setup: PluginSetup) -> None:
        self._store_config = self.store_config
        self._clock = setup.clock
        secrets = self._secret or _split(secret_from_env())
        if secrets:
            self._keyring = keyring_from(secrets)
        elif self._store_config.type == "redis":
            raise ConfigurationError(
                "The Redis store needs a secret shared by every server instance: set REMEMBER_SECRET "
                "(or RememberPlugin.init(secret=...)), for example to the output of "
                "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`."
            )
        elif self._store_config.type == "memory":
            self._keyring = setup.shared.setdefault("mcpkit_remember.keyring", Keyring.ephemeral())
        if self._store_config.type == "memory":  # one in-process store per server, as with SQLite or Redis
            self._store = setup.shared.setdefault("mcpkit_remember.memory", make_store(self._store_config, ""))
        else:
            self._store = make_store(self._store_config, self._redis_prefix)

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

    async def startup(self) -> None:
        if self._store is None:
            raise RuntimeError("RememberPlugin.startup() before the server was built")
        config = self.store_config
        if self._keyring is None:  # sqlite without a configured secret
            self._keyring = Keyring(_split(secret_beside(Path(config.path or ""))))
        load = getattr(self.embedder, "load", None)
        if load is not None:
            await load()  # optional: a missing model fails the start, not the first write
        await self._store.open()
        semantic = None if self.embedder is None else Semantic(self.embedder)
        vault = Vault(self._store, self._keyring, search_all=self.search, semantic=semantic)
        try:  # a diagnosis only: a slow look (a huge shared Redis) or a failing one never stops the start
            async with asyncio.timeout(SECRET_CHECK_SECONDS):
                await vault.check_secret(config.describe())
        except Exception as exc:  # a timeout, an outage, a Redis ACL without SCAN, ...
            logger.info(
                "skipped checking which secret sealed the stored values (%s): %s",
                config.describe(),
                type(exc).__name__ if isinstance(exc, TimeoutError) else exc,
            )
        self._policy = RememberPolicy(
            vault, self._clock, self.default_ttl, self.max_value_bytes, self.quota, self.session_ttl
        )
        if config.type != "redis":
            self._purger = asyncio.get_running_loop().create_task(self._purge_forever())
        logger.info("remember store: %s", config.describe())

    async def shutdown(self) -> None:
        if self._purger is not None:
            self._purger.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._purger
            self._purger = None
        self._policy = None
        if self._store is not None:
            await self._store.close()

    @property
    def keyring(self) -> Keyring:
        if self._keyring is None:
            raise RuntimeError("RememberPlugin has not started")
        return self._keyring

    async def _purge_forever(self) -> None:
        while True:
            await asyncio.sleep(PURGE_INTERVAL)
            if self._store is None:
                return
            try:
                removed = await self._store.purge_expired(self._clock().now())
            except Exception:
                logger.exception("deleting expired remembered values failed; will try again")
            else:
                if removed:
                    logger.debug("deleted %d expired remembered values", removed)


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


def keyring_from(secrets: Sequence[str]) -> Keyring:
    """A keyring from configured secrets, refusing ones too short to resist guessing."""
    for position, secret in enumerate(secrets, start=1):
        if len(secret) < MIN_SECRET_LENGTH:
            raise ConfigurationError(
                f"REMEMBER_SECRET item #{position} has {len(secret)} characters; use at least {MIN_SECRET_LENGTH} "
                "random ones, e.g. `python -c 'import secrets; print(secrets.token_urlsafe(32))'`."
            )
    try:
        return Keyring(secrets)
    except ValueError as exc:
        raise ConfigurationError(f"REMEMBER_SECRET: {exc}") from None


def _split(value: str | None) -> list[str]:
    return [part.strip() for part in value.split(",")] if value else []


def make_store(config: StoreConfig, redis_prefix: str) -> Store:
    if config.type == "sqlite":
        from ._sqlite_store import SQLiteStore

        return SQLiteStore(config.path or "")
    if config.type == "redis":
        from ._redis_store import RedisStore

        return RedisStore(config.url or "", prefix=redis_prefix)
    from ._memory_store import MemoryStore

    return MemoryStore()


def bucket_name(ctx: Context) -> str:
    """Whose ``scope="tool"`` values a context sees: a tool's by its name, a resource's or prompt's by
    ``resource:NAME`` or ``prompt:NAME`` (tool names cannot hold ``:``, so these never meet a tool's)."""
    return ctx.name if ctx.kind == "tool" else f"{ctx.kind}:{ctx.name}"
