"""``KeyedLocks``: callers with equal keys take turns, each waiting at most ``timeout`` seconds for its own; a key
costs nothing once nobody holds or waits for it."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager

from mcpkit import DEFAULT_TURN_TIMEOUT

__all__ = ["KeyedLocks", "TurnTimeoutError"]


class TurnTimeoutError(Exception):
    """A turn did not come within ``timeout`` seconds: the holders before it are still at work."""

    def __init__(self, timeout: float = DEFAULT_TURN_TIMEOUT) -> None:
        super().__init__(f"waited {timeout:g} seconds for its turn")
        self.timeout = timeout


class KeyedLocks:
    """``async with locks.held(key):``, or on a hot path ``if not locks.take(key): await locks.wait(key)`` and
    then ``locks.give(key)`` in a ``finally``: first come, first served.

    A turn taken without waiting is one dict entry: no lock object, no future (every uncontended update takes
    one, so it is kept to that).
    """

    __slots__ = ("_turns", "timeout")

    def __init__(self, timeout: float = DEFAULT_TURN_TIMEOUT) -> None:
        # key -> None (held, nobody waiting) or the waiters' futures, first come first: present while held.
        self._turns: dict[Hashable, deque[asyncio.Future[None]] | None] = {}
        self.timeout = timeout

    def take(self, key: Hashable) -> bool:
        """Take the key's turn when nobody holds it (True); else False, and ``wait`` for it."""
        if key in self._turns:
            return False
        self._turns[key] = None
        return True

    async def wait(self, key: Hashable) -> None:
        """Wait until the holder (and those who came before) ``give`` the key's turn to this caller;
        ``TurnTimeoutError`` after ``timeout`` seconds, out of the queue."""
        waiters = self._turns[key]  # held: ``take`` said so, with no await since
        if waiters is None:
            waiters = self._turns[key] = deque()
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiters.append(turn)
        try:
            async with asyncio.timeout(self.timeout):
                await turn
        except BaseException as stopped:  # timed out, cancelled (or its coroutine closed)
            if turn.done() and not turn.cancelled():  # handed the turn, then stopped: pass it on
                self.give(key)
            else:
                turn.cancel()  # still queued: ``give`` skips it
            if isinstance(stopped, TimeoutError):
                raise TurnTimeoutError(self.timeout) from None
            raise

    def give(self, key: Hashable) -> None:
        """End the holder's turn: the next live waiter holds the key now, or nobody does."""
        waiters = self._turns[key]
        while waiters:
            turn = waiters.popleft()
            if not turn.done():
                turn.set_result(None)
                return
        del self._turns[key]

    @asynccontextmanager
    async def held(self, key: Hashable) -> AsyncIterator[None]:
        """The key's turn, for the block."""
        if not self.take(key):
            await self.wait(key)
        try:
            yield
        finally:
            self.give(key)

    def __len__(self) -> int:
        """How many keys are held now."""
        return len(self._turns)
