"""Configuration of a ``RememberPlugin``: which store, which secret, which memory tools."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from mcpkit import ConfigurationError

from ._scope import SCOPES, Scope

__all__ = ["StoreConfig", "ToolsConfig", "parse_store_url", "secret_from_env", "store_config"]

StoreType = Literal["memory", "sqlite", "redis", "redis-cluster", "postgres"]

_TOOLS_KEYS = {"enabled", "allowed_scopes", "allowedScopes", "prefix", "anonymous_writes"}


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
            return f"Redis at {_without_password(self.url or '')}"
        if self.type == "postgres":
            return f"PostgreSQL at {_without_password(self.url or '')}"
        if self.type == "redis-cluster":
            return f"Redis Cluster at {_without_password(self.url or '')}"
        return "memory (this process only)"


@dataclass(frozen=True, slots=True)
class ToolsConfig:
    """The model-facing memory tools: on or off, which scopes they may use, a name prefix.

    ``anonymous_writes``: whether callers who did not sign in may keep (and forget) values through these
    tools. Off by default: global scope is shared by every caller, and every new 2025-11-25 session is a new
    owner with quotas of its own, so either would be a write surface open to anyone who can reach the server.
    """

    enabled: bool = False
    allowed_scopes: tuple[Scope, ...] = SCOPES
    prefix: str = ""
    anonymous_writes: bool = False

    def __post_init__(self) -> None:
        scopes = self.allowed_scopes
        if isinstance(scopes, str) or not scopes:
            raise ConfigurationError(
                f"tools allowed_scopes is a non-empty list of scopes like ['user'], not {scopes!r}."
            )
        for scope in scopes:
            if scope not in SCOPES:
                raise ConfigurationError(
                    f"tools allowed_scopes has unknown scope {scope!r}; scopes are {list(SCOPES)}."
                )
        if not isinstance(self.anonymous_writes, bool):
            raise ConfigurationError(f"tools anonymous_writes is True or False, not {self.anonymous_writes!r}.")
        if not isinstance(self.prefix, str) or not all(c.isalnum() or c in "_-." for c in self.prefix):
            raise ConfigurationError(f"tools prefix {self.prefix!r} may hold only letters, digits, '_', '-' and '.'.")
        object.__setattr__(self, "allowed_scopes", tuple(dict.fromkeys(scopes)))

    @classmethod
    def parse(cls, value: ToolsConfig | Mapping[str, Any] | None) -> ToolsConfig:
        if value is None:
            return cls()
        if isinstance(value, ToolsConfig):
            return value
        if not isinstance(value, Mapping):
            raise ConfigurationError(f"tools= takes a dict like {{'enabled': True}} or a ToolsConfig, not {value!r}.")
        unknown = set(value) - _TOOLS_KEYS
        if unknown:
            raise ConfigurationError(
                f"tools= has unknown settings {sorted(unknown)}; the settings are enabled, allowed_scopes, prefix "
                "and anonymous_writes."
            )
        scopes: Any = value.get("allowed_scopes", value.get("allowedScopes", SCOPES))
        if not isinstance(scopes, str):
            scopes = tuple(scopes)
        return cls(
            bool(value.get("enabled", False)),
            scopes,
            value.get("prefix", ""),
            value.get("anonymous_writes", False),
        )


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
    from ._cluster_url import parse_cluster_url

    try:
        parse_cluster_url(url)
    except ValueError as exc:
        raise ConfigurationError(f"Store {_without_password(url)!r}: {exc}.") from None
    return url


def secret_from_env() -> str | None:
    """``REMEMBER_SECRET``, where an empty value counts as unset."""
    value = os.environ.get("REMEMBER_SECRET", "")
    return value if value.strip() else None


def _without_password(url: str) -> str:
    """``url`` for logs: a password in the user part, or a ``password=`` query parameter (libpq), as ``***``."""
    url = re.sub(r"(?i)([?&]password=)[^&]*", r"\1***", url)
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    credentials, _, host = rest.rpartition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user + ':***@' if user else '***@'}{host}"
