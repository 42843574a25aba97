"""Which store and which secret: from a plugin's arguments or ``REMEMBER_STORE`` and ``REMEMBER_SECRET``."""

from __future__ import annotations

import os
from dataclasses import dataclass

from mcpkit import ConfigurationError

from ..stores import StoreKind, kind_for_url, memory, postgres, redis, sqlite, store_kind, store_kinds

__all__ = ["STORE_URLS", "StoreConfig", "parse_store_url", "secret_from_env", "store_config"]

#: The built-in stores, registered as their packages load; a store of one's own is one more ``register_store``.
BUILT_IN = (memory.MEMORY, sqlite.SQLITE, redis.REDIS, redis.REDIS_CLUSTER, postgres.POSTGRES)

#: One URL of each built-in store that outlives a process, as commands' help lists them (``memory`` is the one other).
STORE_URLS = tuple(url for kind in BUILT_IN for url in kind.examples)


@dataclass(frozen=True, slots=True)
class StoreConfig:
    """Which store to use: a registered kind's name (``memory``, ``sqlite``, ``redis``, ``redis-cluster``,
    ``postgres``, ...) and where it is: a file ``path`` or a ``url``."""

    type: str
    path: str | None = None
    url: str | None = None

    @property
    def kind(self) -> StoreKind:
        return store_kind(self.type)

    @property
    def where(self) -> str:
        """What the kind's ``make`` takes: the file path or the URL ("" for a store in this process)."""
        return (self.path if self.kind.in_file else self.url) or ""

    def describe(self) -> str:
        return self.kind.describe(self.where)


def parse_store_url(text: str) -> StoreConfig:
    """A registered kind's URL: ``memory``, ``redis://host:port/db`` (or ``rediss://``),
    ``redis+cluster://host:port,host:port`` (or ``rediss+cluster://``), ``sqlite:///relative.db``,
    ``sqlite:////abs.db`` or ``postgresql://user@host:5432/db`` (or ``postgres://``)."""
    value = text.strip()
    kind = kind_for_url(value)
    if kind is None:
        choices = [kind.name for kind in store_kinds() if kind.in_process]
        raise ConfigurationError(f"Unknown store {text!r}: use {_either(choices + _examples())}.")
    if kind.in_process:
        return StoreConfig(kind.name)
    if kind.in_file:
        return StoreConfig(kind.name, path=kind.where(value))
    return StoreConfig(kind.name, url=kind.where(value))


def store_config(type: str | None, url: str | None, path: str | None) -> StoreConfig:
    """The store from ``init()`` arguments, else ``REMEMBER_STORE``, else memory."""
    if type is None:
        if url is not None or path is not None:
            located = [kind.name for kind in store_kinds() if not kind.in_process]
            raise ConfigurationError(f"A store's url= or path= needs its type= too: {_either(located)}.")
        env = os.environ.get("REMEMBER_STORE", "").strip()
        return parse_store_url(env) if env else StoreConfig(memory.MEMORY.name)
    kind = store_kind(type)
    if kind.in_process:
        return StoreConfig(kind.name)
    if kind.in_file and path:
        return StoreConfig(kind.name, path=str(path))
    named = f"A store of type={type!r}"
    example = (*kind.examples, *kind.schemes, kind.name)[0]
    if url:
        parsed = parse_store_url(url)
        if parsed.type != kind.name:
            raise ConfigurationError(
                f"{named} takes a URL like {example!r}; for {parsed.describe()} use type={parsed.type!r}."
            )
        return parsed
    needs = f"path={kind.where(example)!r} (or url={example!r})" if kind.in_file else f"url={example!r}"
    raise ConfigurationError(f"{named} needs {needs}.")


def _examples() -> list[str]:
    return [url for kind in store_kinds() for url in kind.examples]


def _either(choices: list[str]) -> str:
    """``'a', 'b' or 'c'``."""
    quoted = [repr(choice) for choice in choices]
    return f"{', '.join(quoted[:-1])} or {quoted[-1]}" if len(quoted) > 1 else "".join(quoted)


def secret_from_env() -> str | None:
    """``REMEMBER_SECRET``, where an empty value counts as unset."""
    value = os.environ.get("REMEMBER_SECRET", "")
    return value if value.strip() else None
