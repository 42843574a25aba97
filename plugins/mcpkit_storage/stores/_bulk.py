"""Bulk writing: a store told that a long run of writes is coming (an import) may take it more cheaply."""

from __future__ import annotations

import contextlib
from contextlib import AbstractAsyncContextManager
from typing import Protocol, cast

from ._store import Store

__all__ = ["BulkStore", "bulk_writes"]


class BulkStore(Store, Protocol):
    """A store with a cheaper way to take a long run of writes, told of it with ``bulk``: the SQLite store merges
    its search index in larger steps, less often, while in it."""

    def bulk(self) -> AbstractAsyncContextManager[None]:
        """A context in which the run of writes goes; leaving it settles what the run left (the SQLite store merges
        it)."""


def bulk_writes(store: Store) -> AbstractAsyncContextManager[None]:
    """``store.bulk()`` for a store that has it (``BulkStore``), else a context that changes nothing."""
    if callable(getattr(store, "bulk", None)):
        return cast(BulkStore, store).bulk()
    return contextlib.nullcontext()
