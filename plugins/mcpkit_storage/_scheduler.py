"""``EmbedScheduler``: the turns at one embedder, shared fairly, so one caller's long values cannot starve another
caller's searches.

Every call to the embedder takes a turn, and ``slots`` turns run at once (one for a local model, which uses every
core already). When a turn ends, the next goes to a search's query before any batch of values, though never more
than ``QUERIES_IN_A_ROW`` queries while a batch waits (so a flood of searches cannot starve the writes either); among
the queries, and among the batches, the callers waiting take one turn each in turn (round robin), so a caller with
many batches waiting gets one turn, then each other waiting caller gets one. A turn that does not come within its
``wait`` is given up (``EmbedderBusyError``): nothing waits on the embedder without a deadline.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager

import anyio

__all__ = ["QUERIES_IN_A_ROW", "EmbedScheduler", "EmbedderBusyError"]

#: Queries served one after another, at most, while a batch of values waits for its turn.
QUERIES_IN_A_ROW = 8


class EmbedderBusyError(Exception):
    """No turn at the embedder came within the wait (other callers' embeddings went first)."""


class _Line:
    """Turns of one kind waiting, by caller: the callers in the order they first came, each served one at a time."""

    __slots__ = ("_callers",)

    def __init__(self) -> None:
        self._callers: OrderedDict[Hashable, deque[asyncio.Future[None]]] = OrderedDict()

    def __bool__(self) -> bool:
        return bool(self._callers)

    def join(self, caller: Hashable, turn: asyncio.Future[None]) -> None:
        waiting = self._callers.get(caller)
        if waiting is None:
            self._callers[caller] = deque([turn])  # a caller new to the line goes to its end
        else:
            waiting.append(turn)

    def __len__(self) -> int:
        return sum(len(waiting) for waiting in self._callers.values())

    def leave(self, caller: Hashable, turn: asyncio.Future[None]) -> None:
        """Take out a turn that stopped waiting (unless ``next`` passed over it already)."""
        waiting = self._callers.get(caller)
        if waiting is not None and turn in waiting:
            waiting.remove(turn)
            if not waiting:
                del self._callers[caller]

    def next(self) -> asyncio.Future[None]:
        """The first caller's oldest turn; that caller goes to the end of the line if it has more."""
        caller, waiting = next(iter(self._callers.items()))
        turn = waiting.popleft()
        if waiting:
            self._callers.move_to_end(caller)
        else:
            del self._callers[caller]
        return turn


class EmbedScheduler:
    """``async with scheduler.turn(caller, query=..., wait=...):`` around each call to the embedder."""

    __slots__ = ("_batches", "_queries", "_queries_in_a_row", "_running", "slots")

    def __init__(self, slots: int = 1) -> None:
        #: How many turns run at once.
        self.slots = slots
        self._running = 0
        self._queries = _Line()
        self._batches = _Line()
        self._queries_in_a_row = 0

    @asynccontextmanager
    async def turn(self, caller: Hashable, *, query: bool, wait: float) -> AsyncIterator[None]:
        """A turn for ``caller`` (a query's, or a batch of values'), held for the block; ``EmbedderBusyError`` when
        none came within ``wait`` seconds."""
        if self._running < self.slots:  # a free slot: nobody waits (turns wait only while every slot is taken)
            self._running += 1
        else:
            await self._wait(caller, query, wait)
        try:
            yield
        finally:
            self._pass_on()

    @property
    def waiting(self) -> int:
        """How many turns wait now."""
        return len(self._queries) + len(self._batches)

    async def _wait(self, caller: Hashable, query: bool, wait: float) -> None:
        line = self._queries if query else self._batches
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        line.join(caller, turn)
        try:
            with anyio.fail_after(wait):
                await turn
        except BaseException as exc:  # the wait ran out, or the call was cancelled
            if turn.done() and not turn.cancelled():  # handed the turn as the wait ended: pass it on
                self._pass_on()
            else:  # (a task cancelled while it waits cancels the future it awaits)
                line.leave(caller, turn)
            if isinstance(exc, TimeoutError):
                raise EmbedderBusyError(f"no turn at the embedder within {wait:g} s") from None
            raise

    def _pass_on(self) -> None:
        """End a turn: its slot goes to the next turn still waiting, or is free."""
        while self._queries or self._batches:
            query = bool(self._queries) and (not self._batches or self._queries_in_a_row < QUERIES_IN_A_ROW)
            turn = (self._queries if query else self._batches).next()
            if turn.done():  # cancelled, its task not yet back to ``leave``: passed over
                continue
            self._queries_in_a_row = self._queries_in_a_row + 1 if query else 0
            turn.set_result(None)
            return
        self._queries_in_a_row = 0
        self._running -= 1
