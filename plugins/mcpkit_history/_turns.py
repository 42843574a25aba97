"""``Turns``: one caller's heavy reads (a page of a long conversation, a search through one) run one at a time.

Four searches of a 60 MB conversation sent at once by one caller blocked every other caller for 31 s; with the work
in worker threads and each caller taking turns, a caller who sends many at once waits for its own, and the others'
calls go on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

__all__ = ["Turns"]


class Turns:
    """A lock per caller, kept only while someone holds or waits for it."""

    def __init__(self) -> None:
        self._locks: dict[str, tuple[anyio.Lock, list[int]]] = {}

    @asynccontextmanager
    async def taken(self, caller: str) -> AsyncIterator[None]:
        lock, users = self._locks.setdefault(caller, (anyio.Lock(), [0]))
        users[0] += 1
        try:
            async with lock:
                yield
        finally:
            users[0] -= 1
            if not users[0]:
                del self._locks[caller]

    def __len__(self) -> int:
        return len(self._locks)
