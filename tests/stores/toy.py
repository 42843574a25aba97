"""A store of the tests' own, added by registration alone: the memory store's code under ``toy://NAME``, one store
per name in this process, registered as a store other processes would reach (so it needs a configured secret)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import mcpkit_storage.stores._kinds as kinds
from mcpkit_storage.stores import Store, StoreKind, register_store
from mcpkit_storage.stores.memory._memory_store import MemoryStore


class ToyStore(MemoryStore):
    """Nested dicts, reached by name: every ``toy://NAME`` made in this process is the same store."""


#: The toy stores made so far, by name.
SHELVES: dict[str, ToyStore] = {}


def make_toy(where: str, *, prefix: str, create: bool) -> Store:
    return SHELVES.setdefault(where, ToyStore())


TOY = StoreKind(name="toy", label="Toy", make=make_toy, schemes=("toy://",), examples=("toy://NAME",))


@pytest.fixture
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[StoreKind]:
    """``TOY`` registered for one test; the registry as it was, and no toy store, afterwards."""
    monkeypatch.setattr(kinds, "_KINDS", dict(kinds._KINDS))
    yield register_store(TOY)
    SHELVES.clear()
