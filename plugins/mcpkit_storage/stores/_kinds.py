"""``StoreKind``: what one kind of store is and can do, registered by its package with ``register_store``, so that
configuration, start and the operator commands ask the registry instead of switching on store names."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from mcpkit import ConfigurationError

from ._redacted import without_password
from ._store import Store

__all__ = ["StoreKind", "StoreMaker", "kind_for_url", "register_store", "store_kind", "store_kinds"]


class StoreMaker(Protocol):
    """Makes a store at ``where`` (its checked URL, or its file's path); ``prefix`` is the key prefix of stores that
    share a server with other data, ``create=False`` opens only a store that is already there."""

    def __call__(self, where: str, *, prefix: str, create: bool) -> Store: ...


@dataclass(frozen=True, slots=True)
class StoreKind:
    """One kind of store: its name (``StoreConfig.type``), the URLs it takes, how it is made, and what it can do."""

    name: str
    #: How descriptions and errors name it: ``Redis Cluster``.
    label: str
    make: StoreMaker
    #: The URL prefixes it takes; none: only its name (``memory``).
    schemes: tuple[str, ...] = ()
    #: URLs of it as help texts and errors show them.
    examples: tuple[str, ...] = ()
    #: From one of its URLs to what ``make`` takes, refusing a URL it cannot use (``ConfigurationError``).
    locate: Callable[[str], str] | None = None
    #: Located by a file path (``StoreConfig.path``), not a URL.
    in_file: bool = False
    #: The secret kept beside the store, made on first use, when none is configured (SQLite's file).
    secret_beside: Callable[[str], str] | None = None
    #: That secret as it is, without making one (for operator commands); None when there is none yet.
    read_secret: Callable[[str], str | None] | None = None
    #: Deletes expired values by itself, so no purger runs beside it.
    expires: bool = False
    #: Keeps each owner's values in one place (a hash slot): owners carry a placement group (``Keyring(placed=True)``).
    placed: bool = False
    #: Lives in the server's process: one per server, with an ephemeral key, unseen by any other process.
    in_process: bool = False
    #: Its OpenTelemetry ``db.system.name`` (``postgresql``, ``redis``), where that is not its ``name``.
    db_system: str = ""

    @property
    def system(self) -> str:
        """What telemetry calls it: ``db.system.name``."""
        return self.db_system or self.name

    @property
    def needs_secret(self) -> bool:
        """Whether every server instance must be given the same secret: the store is reached by other processes
        and keeps none beside itself."""
        return not self.in_process and self.secret_beside is None

    def takes(self, url: str) -> bool:
        """Whether ``url`` names a store of this kind."""
        return url.startswith(self.schemes) if self.schemes else url == self.name

    def where(self, url: str) -> str:
        """What ``make`` takes for ``url``, one of this kind's URLs."""
        return self.locate(url) if self.locate is not None else url

    def describe(self, where: str) -> str:
        """``Redis at redis://host:6379/0``: the store at ``where``, as logs and messages name it (no password)."""
        if self.in_process:
            return f"{self.label} (this process only)"
        return f"{self.label} at {where if self.in_file else without_password(where)}"


#: The registered kinds by name, in the order they were registered.
_KINDS: dict[str, StoreKind] = {}


def register_store(kind: StoreKind) -> StoreKind:
    """Make ``kind`` known to configuration (``REMEMBER_STORE``, a plugin's ``init(type=...)``) and commands."""
    taken = _KINDS.get(kind.name)
    if taken is not None:
        raise ValueError(f"A store named {kind.name!r} is registered already ({taken.label}): choose another name.")
    for other in _KINDS.values():
        shared = set(kind.schemes) & set(other.schemes)
        if shared or other.takes(kind.name) or kind.takes(other.name):
            raise ValueError(
                f"The {kind.label} store's URLs ({', '.join(kind.schemes) or kind.name}) would be read as the "
                f"{other.label} store's: give it a scheme of its own."
            )
    _KINDS[kind.name] = kind
    return kind


def store_kind(name: str) -> StoreKind:
    """The kind registered as ``name``, else a ConfigurationError listing the kinds there are."""
    kind = _KINDS.get(name)
    if kind is None:
        names = [repr(known) for known in _KINDS]
        raise ConfigurationError(
            f"There is no store type {name!r}: the types are {', '.join(names[:-1])} and {names[-1]}."
        )
    return kind


def store_kinds() -> tuple[StoreKind, ...]:
    """Every registered kind, in the order they were registered."""
    return tuple(_KINDS.values())


def kind_for_url(url: str) -> StoreKind | None:
    """The kind whose URLs ``url`` is one of, if any."""
    return next((kind for kind in _KINDS.values() if kind.takes(url)), None)
