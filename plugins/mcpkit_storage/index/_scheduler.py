"""``EmbedScheduler``: the turns at one embedder, shared fairly, so one caller's long values cannot starve another
caller's searches."""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Hashable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import anyio

__all__ = ["EmbedScheduler", "EmbedderBusyError"]


class EmbedderBusyError(Exception):
    """No turn at the embedder came within the wait (other callers' embeddings went first)."""


class _Lane:
    """Turns of one kind: ``slots`` at once, the others waiting by caller, the callers in the order they were last
    served (one new to the lane after them all).

    A caller keeps its place in that order after its turn, even with nothing more waiting: one who sends its batches
    one after another is between two of them when its turn ends, and must not lose its place to those with many
    waiting.
    """

    __slots__ = ("_callers", "_running", "_slots", "_waiting")

    def __init__(self, slots: int) -> None:
        self._slots = slots
        self._running = 0
        self._callers: OrderedDict[Hashable, deque[asyncio.Future[None]]] = OrderedDict()
        self._waiting = 0  # turns in the callers' queues (a cancelled one until it leaves, or is passed over)

    @asynccontextmanager
    async def turn(self, caller: Hashable, wait: float) -> AsyncIterator[None]:
        if self._running < self._slots:  # a free slot: nobody waits (turns wait only while every slot is taken)
            self._running += 1
            waiting = self._callers.pop(caller, None)
            self._callers[caller] = deque() if waiting is None else waiting  # served now: last in the order
        else:
            await self._wait(caller, wait)
        try:
            yield
        finally:
            self._pass_on()

    async def _wait(self, caller: Hashable, wait: float) -> None:
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiting = self._callers.get(caller)
        if waiting is None:
            waiting = self._callers[caller] = deque()
        waiting.append(turn)
        self._waiting += 1
        try:
            with anyio.fail_after(wait):
                await turn
        except BaseException as exc:  # the wait ran out, or the call was cancelled
            if turn.done() and not turn.cancelled():  # handed the turn as the wait ended: pass it on
                self._pass_on()
            elif turn in waiting:  # (a task cancelled while it waits cancels the future it awaits)
                waiting.remove(turn)
                self._waiting -= 1
            if isinstance(exc, TimeoutError):
                raise EmbedderBusyError(f"no turn at the embedder within {wait:g} s") from None
            raise

    def _pass_on(self) -> None:
        """End a turn: its slot goes to the oldest turn of the waiting caller served longest ago (who goes last in
        the order now; callers ahead of it with nothing waiting leave the order), or is free."""
        while self._waiting:
            caller, waiting = next(iter(self._callers.items()))
            if not waiting:
                del self._callers[caller]
                continue
            self._callers.move_to_end(caller)
            self._waiting -= 1
            turn = waiting.popleft()
            if not turn.done():  # (a cancelled one, its task not yet back to take it out: passed over)
                turn.set_result(None)
                return
        self._running -= 1
        if not self._running:
            self._callers.clear()  # nobody waits or runs: the order told only those who did

    def __len__(self) -> int:
        return self._waiting


class EmbedScheduler:
    """``async with scheduler.turn(caller, query=..., wait=...):`` around each call to the embedder."""

    __slots__ = ("_batches", "_queries", "slots")

    def __init__(self, slots: int = 1) -> None:
        #: How many turns of each lane run at once.
        self.slots = slots
        self._queries = _Lane(slots)
        self._batches = _Lane(slots)

    @property
    def waiting(self) -> int:
        """How many turns wait now."""
        return len(self._queries) + len(self._batches)

    def turn(self, caller: Hashable, *, query: bool, wait: float) -> AbstractAsyncContextManager[None]:
        """A turn for ``caller`` (a search's query, or a batch of values), held for the block; ``EmbedderBusyError``
        when none came within ``wait`` seconds."""
        return (self._queries if query else self._batches).turn(caller, wait)
