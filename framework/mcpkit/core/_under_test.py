"""The store a test puts plugins on: while ``under_test(store)`` is active, a plugin that would read its store from
the environment (``RememberPlugin`` reads ``REMEMBER_STORE``) keeps its data in ``store`` instead, so a test run in a
shell with production settings never reaches production."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = ["StoreUnderTest", "current_test", "store_under_test", "under_test"]


@dataclass(frozen=True, eq=False)
class StoreUnderTest:
    """One ``under_test(url)`` block: equal only to itself, so a server started in two tests on ``"memory"`` gets
    two stores, not the first test's values in the second."""

    url: str


_STORE: ContextVar[StoreUnderTest | None] = ContextVar("mcpkit_store_under_test", default=None)


def store_under_test() -> str | None:
    """The store (a URL, such as ``"memory"``) ``mcpkit.testing`` gives plugins now, or None outside its fixtures and
    ``running()``; a plugin reads it when the server is built (``setup``) and again when it starts (``startup``)."""
    current = _STORE.get()
    return None if current is None else current.url


def current_test() -> StoreUnderTest | None:
    """The ``under_test`` block under way (None: none), which a plugin keeps an in-process store for."""
    return _STORE.get()


@contextlib.contextmanager
def under_test(store: str | None) -> Iterator[None]:
    """Servers built and started inside keep data in ``store`` where they would read the environment (None: they
    read the environment, as when serving)."""
    token = _STORE.set(None if store is None else StoreUnderTest(store))
    try:
        yield
    finally:
        _STORE.reset(token)
