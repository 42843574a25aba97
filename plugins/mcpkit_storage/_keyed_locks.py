"""``KeyedLocks``: callers with equal keys take turns; a key costs nothing once nobody holds or waits for it.

Remember's ``update`` takes a turn per key, so the writers of one process queue up instead of racing each other's
compare-and-set; history takes one per caller for its heavy reads (a page of a long conversation, a search through
one), so a caller who sends many at once waits for its own while the others' calls go on (four searches of a 60 MB
conversation sent at once by one caller blocked every other caller for 31 s).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager

__all__ = ["KeyedLocks"]


class KeyedLocks:
    """``async with locks.held(key):``, or on a hot path ``if not locks.take(key): await locks.wait(key)`` and
    then ``locks.give(key)`` in a ``finally``: first come, first served.

    A turn taken without waiting is one dict entry: no lock object, no future (every uncontended update takes
    one, so it is kept to that).
    """

    __slots__ = ("_turns",)

    def __init__(self) -> None:
        # key -> None (held, nobody waiting) or the waiters' futures, first come first: present while held.
        self._turns: dict[Hashable, deque[asyncio.Future[None]] | None] = {}

    def take(self, key: Hashable) -> bool:
        """Take the key's turn when nobody holds it (True); else False, and ``wait`` for it."""
        if key in self._turns:
            return False
        self._turns[key] = None
        return True

    async def wait(self, key: Hashable) -> None:
        """Wait until the holder (and those who came before) ``give`` the key's turn to this caller."""
        waiters = self._turns[key]  # held: ``take`` said so, with no await since
        if waiters is None:
            waiters = self._turns[key] = deque()
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiters.append(turn)
        try:
            await turn
        except BaseException:  # cancelled (or its coroutine closed)
            if turn.done() and not turn.cancelled():  # handed the turn, then stopped: pass it on
                self.give(key)
            else:
                turn.cancel()  # still queued: ``give`` skips it
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
