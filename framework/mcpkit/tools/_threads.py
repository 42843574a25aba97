"""``ToolThreads``: the worker threads synchronous tools run in, a fair share per caller, every wait bounded.

A synchronous tool (``def execute``) holds a thread for as long as it runs. anyio's default pool has 40 for the
whole process, so two callers within their request limits could take them all, and everyone's thread work would
queue behind theirs with no deadline. Here each caller runs at most ``per_caller`` synchronous tools at once, out of
``total`` threads of their own; a call that cannot have its thread within ``wait`` seconds ends with ``TOOL_BUSY``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread

from ..base import ToolError

__all__ = ["PER_CALLER", "TOTAL", "ToolThreads"]

#: Synchronous tools one caller may run at once.
PER_CALLER = 8
#: Synchronous tools the server runs at once, in all.
TOTAL = 64


class ToolThreads:
    """Runs synchronous tools in threads: ``per_caller`` at once per caller, ``total`` in all."""

    def __init__(self, wait: float, per_caller: int = PER_CALLER, total: int = TOTAL) -> None:
        self._wait = wait
        self._per_caller = per_caller
        self._total = total
        self._callers: dict[str, anyio.CapacityLimiter] = {}  # present while the caller runs or waits for one
        self._all: anyio.CapacityLimiter | None = None  # made in the event loop, at the first call
        self._unlimited: anyio.CapacityLimiter | None = None

    async def run(self, caller: str, work: Callable[[], Any]) -> Any:
        """``work()`` in a thread, on ``caller``'s share; ``TOOL_BUSY`` when no thread comes within the wait."""
        if self._all is None or self._unlimited is None:
            self._all, self._unlimited = anyio.CapacityLimiter(self._total), anyio.CapacityLimiter(math.inf)
        mine = self._callers.get(caller)
        if mine is None:
            mine = self._callers[caller] = anyio.CapacityLimiter(self._per_caller)
        try:
            await self._acquire(
                mine, f"{self._per_caller} of your synchronous tool calls are running already (the most at once)"
            )
            try:
                await self._acquire(self._all, f"the server's {self._total} threads for synchronous tools are all busy")
                try:
                    return await anyio.to_thread.run_sync(work, limiter=self._unlimited)
                finally:
                    self._all.release()
            finally:
                mine.release()
        finally:
            statistics = mine.statistics()
            if not statistics.borrowed_tokens and not statistics.tasks_waiting:
                self._callers.pop(caller, None)

    async def _acquire(self, limiter: anyio.CapacityLimiter, why: str) -> None:
        try:
            with anyio.fail_after(self._wait):
                await limiter.acquire()
        except TimeoutError:
            raise ToolError(
                f"This tool could not start within {self._wait:g} seconds: {why}. Wait for them to finish, then "
                "call it again.",
                code="TOOL_BUSY",
            ) from None
