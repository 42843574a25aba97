"""The memory store's registration: one per server, in its process."""

from __future__ import annotations

from .. import Store, StoreKind, register_store
from ._memory_store import MemoryStore

__all__ = ["MEMORY"]


def _make(where: str, *, prefix: str, create: bool) -> Store:
    return MemoryStore()


MEMORY = register_store(StoreKind(name="memory", label="memory", make=_make, in_process=True))
