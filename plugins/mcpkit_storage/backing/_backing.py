"""``Backing``: one plugin's store, keyring and vault, from configuration to a started vault and back."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import secrets as secret_maker
from collections.abc import Callable, Sequence
from typing import Self

from mcpkit import Clock, ConfigurationError, Plugin, PluginSetup, SystemClock, current_test

from ..index import Semantic
from ..sealing import HELD_SECONDS, Keyring
from ..stores import Store
from ..vault import ObservedVault, Vault
from ._config import StoreConfig, parse_store_url, secret_from_env, store_config
from ._secret_check import check_secret

__all__ = ["MIN_SECRET_LENGTH", "PURGE_INTERVAL", "BackedPlugin", "Backing", "keyring_from", "make_store"]

logger = logging.getLogger("mcpkit.remember")

#: How often expired values are deleted from stores that do not expire them by themselves.
PURGE_INTERVAL = 300.0

#: How long the start may spend checking that the secret opens the stored values.
SECRET_CHECK_SECONDS = 1.0

#: Secrets shorter than this are refused: owner hashes could be guessed offline from a copy of the store.
MIN_SECRET_LENGTH = 16


class Backing:
    """Set up with the server (``setup``), started and stopped with it (``start``, ``stop``)."""

    def __init__(self, config: StoreConfig | None, secrets: Sequence[str] | None, redis_prefix: str) -> None:
        self._given = config  # None: the store comes from the environment, or from the test under way
        self._config = config
        self._secrets = list(secrets) if secrets is not None else None
        self._redis_prefix = redis_prefix
        self._setup: PluginSetup | None = None
        self._under_test: object = None  # the test (``under_test`` block) this backing was set up in, if any
        self.clock: Callable[[], Clock] = SystemClock
        self._store: Store | None = None
        self._keyring: Keyring | None = None
        self._vault: Vault | None = None
        self._purger: asyncio.Task[None] | None = None
        self._watcher: asyncio.Task[None] | None = None

    def fresh(self) -> Backing:
        """An unstarted backing with the same configuration: each server a plugin is given to needs its own."""
        return Backing(self._given, self._secrets, self._redis_prefix)

    @property
    def config(self) -> StoreConfig:
        return self._config or store_config(None, None, None)

    def setup(self, setup: PluginSetup) -> None:
        self._setup = setup
        self._under_test = under_test = None if self._given is not None else current_test()
        if under_test is not None:  # the test's store, and no secret from the environment
            self._config = config = parse_store_url(under_test.url)
            secrets = self._secrets or ([_test_secret()] if config.kind.needs_secret else [])
        else:
            self._config = config = self._given or store_config(None, None, None)
            secrets = self._secrets or _split(secret_from_env())
        self.clock = setup.clock
        self._keyring = None
        kind = config.kind
        if secrets:
            self._keyring = keyring_from(secrets, placed=kind.placed)
        elif kind.needs_secret:
            raise ConfigurationError(
                f"The {kind.label} store needs a secret shared by every "
                "server instance: set REMEMBER_SECRET "
                "(or the plugin's secret=...), for example to the output of "
                "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`."
            )
        elif kind.in_process:
            self._keyring = setup.shared.setdefault("mcpkit_storage.keyring", Keyring.ephemeral())
        if kind.in_process:  # one in-process store per server (and per test), as with SQLite or Redis
            per_test = setup.shared.setdefault("mcpkit_storage.in_process", {})
            if per_test.get("test") is not under_test:  # a new test: the last one's values stay with it
                per_test.clear()
                per_test["test"] = under_test
            self._store = per_test.setdefault(kind.name, make_store(config, ""))
        else:
            self._store = make_store(config, self._redis_prefix)

    async def start(
        self, *, search_all: bool = False, semantic: Semantic | None = None, search_keys: bool = True
    ) -> Vault:
        if self._store is None or self._setup is None:
            raise RuntimeError("the plugin started before the server was built")
        if self._given is None and current_test() is not self._under_test:
            self.setup(self._setup)  # built outside the test that starts it (or inside another): the test's store
        config, kind = self.config, self.config.kind
        if self._keyring is None:  # a store that keeps its secret beside it (SQLite's file), none configured
            if kind.secret_beside is None:
                raise RuntimeError(f"the {kind.label} store was set up without a secret")
            self._keyring = Keyring(_split(kind.secret_beside(config.where)))
        await self._store.open()
        store, keyring, telemetry = self._store, self._keyring, self._setup.telemetry
        if telemetry is not None and (telemetry.native or telemetry.audit is not None):  # observed: spans, audit
            vault: Vault = ObservedVault(
                store,
                keyring,
                telemetry,
                kind.system,
                search_all=search_all,
                semantic=semantic,
                search_keys=search_keys,
            )
        else:
            vault = Vault(store, keyring, search_all=search_all, semantic=semantic, search_keys=search_keys)
        try:  # a diagnosis only: a slow look (a huge shared Redis) or a failing one never stops the start
            async with asyncio.timeout(SECRET_CHECK_SECONDS):
                await check_secret(vault, config.describe())
        except Exception as exc:  # a timeout, an outage, a Redis ACL without SCAN, ...
            logger.info(
                "skipped checking which secret sealed the stored values (%s): %s",
                config.describe(),
                type(exc).__name__ if isinstance(exc, TimeoutError) else exc,
            )
        if not kind.in_process:  # a store no other process reaches is never rotated under this one
            try:
                await vault.watch.beat(self.clock().now())  # says at once if the store was rotated past this server
            except Exception as exc:  # an outage: the calls will say so, and the next beat comes
                logger.info("could not note in %s which secrets this server holds: %s", config.describe(), exc)
        if not kind.expires:
            self._purger = asyncio.get_running_loop().create_task(self._purge_forever())
        if not kind.in_process:
            self._watcher = asyncio.get_running_loop().create_task(self._watch_forever(vault))
        self._vault = vault
        return vault

    async def stop(self) -> None:
        for task in (self._purger, self._watcher):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._purger = self._watcher = None
        if self._vault is not None and not self.config.kind.in_process:
            with contextlib.suppress(Exception):  # a store that is down keeps the note: it ages out
                await self._vault.watch.stopped()
        self._vault = None
        if self._store is not None:
            await self._store.close()

    @property
    def store(self) -> Store:
        if self._store is None:
            raise RuntimeError("the plugin has not been set up by a server")
        return self._store

    @property
    def keyring(self) -> Keyring:
        if self._keyring is None:
            raise RuntimeError("the plugin has not started")
        return self._keyring

    @property
    def vault(self) -> Vault:
        if self._vault is None:
            raise RuntimeError("the plugin has not started: the server's lifespan (startup) has not run.")
        return self._vault

    async def _watch_forever(self, vault: Vault) -> None:
        """Every ``HELD_SECONDS``, note the key ids this server holds (what ``mcpkit remember rotate`` checks) and
        look whether the store was rotated past them, calls or not."""
        while True:
            await asyncio.sleep(HELD_SECONDS)
            try:
                await vault.watch.beat(self.clock().now())
            except Exception as exc:  # an outage: the calls say so, and the next look comes
                logger.debug("looking at the store's notes failed: %s", exc)

    async def _purge_forever(self) -> None:
        while True:
            await asyncio.sleep(PURGE_INTERVAL)
            if self._store is None:
                return
            try:
                removed = await self._store.purge_expired(self.clock().now())
            except Exception:
                logger.exception("deleting expired remembered values failed; will try again")
            else:
                if removed:
                    logger.debug("deleted %d expired remembered values", removed)


class BackedPlugin(Plugin):
    """A plugin that keeps its data through a ``Backing`` (``_backing``), reading time from the server's clock;
    ``_turn_timeout`` is how long its calls may queue for a turn (the server's ``turn_timeout``)."""

    _backing: Backing
    _clock: Callable[[], Clock]
    _turn_timeout: float

    def __copy__(self) -> Self:
        """A copy for one server (``Server`` copies every plugin it is given): its own store, not yet set up."""
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._backing = self._backing.fresh()
        return clone

    @property
    def store_config(self) -> StoreConfig:
        return self._backing.config

    def setup(self, setup: PluginSetup) -> None:
        self._backing.setup(setup)
        self._clock = setup.clock
        self._turn_timeout = setup.turn_timeout


def keyring_from(secrets: Sequence[str], *, placed: bool = False) -> Keyring:
    """A keyring from configured secrets, refusing ones too short to resist guessing.

    ``placed``: owners carry a placement group (for a Redis Cluster store, ``Keyring(placed=True)``).
    """
    for position, secret in enumerate(secrets, start=1):
        if len(secret) < MIN_SECRET_LENGTH:
            raise ConfigurationError(
                f"REMEMBER_SECRET item #{position} has {len(secret)} characters; use at least {MIN_SECRET_LENGTH} "
                "random ones, e.g. `python -c 'import secrets; print(secrets.token_urlsafe(32))'`."
            )
    try:
        return Keyring(secrets, placed=placed)
    except ValueError as exc:
        raise ConfigurationError(f"REMEMBER_SECRET: {exc}") from None


@functools.cache
def _test_secret() -> str:
    """What seals a test's Redis or PostgreSQL store: one secret per process, made for it, never the environment's."""
    return secret_maker.token_urlsafe(32)


def _split(value: str | None) -> list[str]:
    return [part.strip() for part in value.split(",")] if value else []


def make_store(config: StoreConfig, redis_prefix: str, *, create: bool = True) -> Store:
    """The store ``config`` names; ``create=False`` opens only an existing SQLite file or PostgreSQL store."""
    return config.kind.make(config.where, prefix=redis_prefix, create=create)
