"""``KeyedLocks``: one lock per key, made on demand and dropped when nobody holds or waits for it."""

from __future__ import annotations

import asyncio
from collections.abc import Hashable
from types import TracebackType

__all__ = ["KeyedLocks"]


class KeyedLocks:
    """``async with locks.hold(key):`` — callers with equal keys take turns.

    ``update()`` uses it so the writers of one process queue up instead of racing each
    other's compare-and-set; only writers in other processes can still make it retry.
    """

    def __init__(self) -> None:
        self._held: dict[Hashable, _Held] = {}

    def hold(self, key: Hashable) -> _Held:
        held = self._held.get(key)
        if held is None:
            held = self._held[key] = _Held(self, key)
        return held

    def __len__(self) -> int:
        return len(self._held)

    def _release(self, held: _Held) -> None:
        if held.users == 0:
            del self._held[held.key]


class _Held:
    __slots__ = ("key", "lock", "owner", "users")

    def __init__(self, owner: KeyedLocks, key: Hashable) -> None:
        self.owner = owner
        self.key = key
        self.lock = asyncio.Lock()  # mcpkit serves on asyncio; its uncontended acquire never yields
        self.users = 0

    async def __aenter__(self) -> None:
        self.users += 1
        try:
            await self.lock.acquire()
        except BaseException:
            self.users -= 1
            self.owner._release(self)
            raise

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.lock.release()
        self.users -= 1
        self.owner._release(self)
