"""Which store and which secret: from a plugin's arguments or ``REMEMBER_STORE`` and ``REMEMBER_SECRET``."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

from mcpkit import ConfigurationError

from ..stores import without_password

__all__ = ["STORE_URLS", "StoreConfig", "parse_store_url", "secret_from_env", "store_config"]

StoreType = Literal["memory", "sqlite", "redis", "redis-cluster", "postgres"]

#: One URL of each store that outlives a process, as commands' help lists them (``memory`` is the one other).
STORE_URLS = (
    "sqlite:///relative.db",
    "sqlite:////absolute/path.db",
    "redis://HOST:PORT/DB",
    "redis+cluster://HOST:PORT,HOST:PORT",
    "postgresql://USER@HOST:5432/DB",
)


@dataclass(frozen=True, slots=True)
class StoreConfig:
    """Which store to use: ``memory``, ``sqlite`` (``path``), ``redis``, ``redis-cluster`` or ``postgres`` (``url``)."""

    type: StoreType
    path: str | None = None
    url: str | None = None

    def describe(self) -> str:
        if self.type == "sqlite":
            return f"SQLite at {self.path}"
        if self.type == "redis":
            return f"Redis at {without_password(self.url or '')}"
        if self.type == "postgres":
            return f"PostgreSQL at {without_password(self.url or '')}"
        if self.type == "redis-cluster":
            return f"Redis Cluster at {without_password(self.url or '')}"
        return "memory (this process only)"


def parse_store_url(text: str) -> StoreConfig:
    """``memory``, ``redis://host:port/db`` (or ``rediss://``), ``redis+cluster://host:port,host:port`` (or
    ``rediss+cluster://``), ``sqlite:///relative.db``, ``sqlite:////abs.db`` or ``postgresql://user@host:5432/db``
    (or ``postgres://``)."""
    value = text.strip()
    if value == "memory":
        return StoreConfig("memory")
    if value.startswith(("postgresql://", "postgres://")):
        return StoreConfig("postgres", url=value)
    if value.startswith(("redis+cluster://", "rediss+cluster://")):
        return StoreConfig("redis-cluster", url=_cluster_url(value))
    if value.startswith(("redis://", "rediss://", "unix://")):
        return StoreConfig("redis", url=value)
    if value.startswith("sqlite:///"):
        path = value[len("sqlite:///") :]
        if not path or path == ":memory:":
            raise ConfigurationError(
                f"Store {text!r} names no database file: use sqlite:///relative/file.db or sqlite:////absolute/file.db."
            )
        return StoreConfig("sqlite", path=path)
    raise ConfigurationError(
        f"Unknown store {text!r}: use 'memory', 'redis://HOST:PORT/DB', 'redis+cluster://HOST:PORT,HOST:PORT', "
        "'postgresql://USER@HOST:5432/DB', "
        "'sqlite:///relative/file.db' or 'sqlite:////absolute/file.db'."
    )


def store_config(type: str | None, url: str | None, path: str | None) -> StoreConfig:
    """The store from ``init()`` arguments, else ``REMEMBER_STORE``, else memory."""
    if type is None:
        if url is not None or path is not None:
            raise ConfigurationError("RememberPlugin.init(url=/path=) needs type='redis', 'postgres' or 'sqlite'.")
        env = os.environ.get("REMEMBER_STORE", "").strip()
        return parse_store_url(env) if env else StoreConfig("memory")
    if type == "memory":
        return StoreConfig("memory")
    if type == "sqlite":
        if not path:
            if url and url.startswith("sqlite:///"):
                return parse_store_url(url)
            raise ConfigurationError(
                "RememberPlugin.init(type='sqlite') needs path='file.db' (or url='sqlite:///file.db')."
            )
        return StoreConfig("sqlite", path=str(path))
    if type == "redis":
        if not url:
            raise ConfigurationError("RememberPlugin.init(type='redis') needs url='redis://HOST:PORT/DB'.")
        parsed = parse_store_url(url)
        if parsed.type != "redis":
            raise ConfigurationError(
                f"RememberPlugin.init(type='redis') takes a redis:// URL; for {parsed.describe()} use "
                f"type={parsed.type!r}."
            )
        return parsed
    if type == "redis-cluster":
        if not url or not url.startswith(("redis+cluster://", "rediss+cluster://")):
            raise ConfigurationError(
                "RememberPlugin.init(type='redis-cluster') needs url='redis+cluster://HOST:PORT,HOST:PORT'."
            )
        return StoreConfig("redis-cluster", url=_cluster_url(url))
    if type == "postgres":
        if not url or not url.startswith(("postgresql://", "postgres://")):
            raise ConfigurationError("RememberPlugin.init(type='postgres') needs url='postgresql://USER@HOST:5432/DB'.")
        return StoreConfig("postgres", url=url)
    raise ConfigurationError(
        f"RememberPlugin.init(type={type!r}): the store types are 'memory', 'sqlite', 'redis', 'redis-cluster' "
        "and 'postgres'."
    )


def _cluster_url(url: str) -> str:
    """``url`` if it names a Redis Cluster well, else a ConfigurationError saying what is wrong."""
    from ..stores.redis import parse_cluster_url

    try:
        parse_cluster_url(url)
    except ValueError as exc:
        raise ConfigurationError(f"Store {without_password(url)!r}: {exc}.") from None
    return url


def secret_from_env() -> str | None:
    """``REMEMBER_SECRET``, where an empty value counts as unset."""
    value = os.environ.get("REMEMBER_SECRET", "")
    return value if value.strip() else None
