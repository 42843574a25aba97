"""``Ledger``: reading and changing kept tasks by compare-and-set, on the server's clock."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

from ..base import Clock
from ._record import TaskRecord
from ._store import TaskStore

__all__ = ["Change", "Ledger", "TaskConflictError"]

#: How often a change is tried again when another writer changed the task first.
ATTEMPTS = 50

#: What a change does to a record read at ``now``: the record to write, or the same one to write nothing.
Change = Callable[[TaskRecord, float], TaskRecord]


class TaskConflictError(Exception):
    """A task changed under every one of ``ATTEMPTS`` tries: the store is overloaded, or a writer loops."""


class Ledger:
    def __init__(self, store: TaskStore, clock: Callable[[], Clock]) -> None:
        self.store = store
        self._clock = clock

    def now(self) -> float:
        return self._clock().now()

    async def add(self, owner: str, record: TaskRecord, limit: int | None) -> None:
        await self.store.add(owner, record.id, record.kept(), record.expires_at, record.created, limit)

    async def read(self, owner: str, task_id: str) -> TaskRecord | None:
        seen = await self.store.load(owner, task_id, self.now())
        return None if seen is None else TaskRecord.from_kept(seen.record)

    async def change(self, owner: str, task_id: str, change: Change) -> TaskRecord | None:
        """The task after ``change`` (None: the owner has no such task); tried again on a concurrent write."""
        for attempt in range(ATTEMPTS):
            now = self.now()
            seen = await self.store.load(owner, task_id, now)
            record = None if seen is None else TaskRecord.from_kept(seen.record)
            if seen is None or record is None:
                return None
            changed = change(record, now)
            if changed is record:
                return record
            if await self.store.replace(owner, task_id, seen, changed.kept(), changed.expires_at, now):
                return changed
            await asyncio.sleep(min(0.2, 0.002 * 2**attempt) * random.random())
        raise TaskConflictError(f"task {task_id!r} changed under every one of {ATTEMPTS} tries")
