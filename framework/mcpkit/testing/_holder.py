"""Keep an async context manager open in a task of its own.

anyio task groups (inside the SDK's session manager and client) must be exited by
the task that entered them, but pytest runs a fixture's setup, the test and the
teardown in different tasks. A holder task enters and exits on their behalf.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Generic, TypeVar

__all__ = ["Holder"]

T = TypeVar("T")


class Holder(Generic[T]):
    """``value = await holder.open()`` ... ``await holder.close()``, from any tasks of one loop."""

    def __init__(self, factory: Callable[[], AbstractAsyncContextManager[T]]) -> None:
        self._factory = factory
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def open(self) -> T:
        ready: asyncio.Future[T] = asyncio.get_running_loop().create_future()

        async def hold() -> None:
            try:
                async with self._factory() as value:
                    ready.set_result(value)
                    await self._stop.wait()
            except BaseException as exc:
                if not ready.done():
                    ready.set_exception(exc)
                    return
                raise

        self._task = asyncio.get_running_loop().create_task(hold())
        return await ready

    async def close(self) -> None:
        if self._task is None:
            return
        self._stop.set()
        task, self._task = self._task, None
        await task
