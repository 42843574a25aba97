"""``Ledger``: reading and changing kept tasks by compare-and-set, on the server's clock, within each owner's quota."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable
from typing import Literal

import mcp_types as types

from ..base import ERROR_META_KEY, Clock
from ._record import TaskRecord
from ._store import TaskQuota, TaskQuotaError, TaskStore

__all__ = ["Change", "Ledger", "Part", "TaskConflictError"]

logger = logging.getLogger("mcpkit")

#: How often a change is tried again when another writer changed the task first.
ATTEMPTS = 50

#: What a change does to a record read at ``now``: the record to write, or the same one to write nothing.
Change = Callable[[TaskRecord, float], TaskRecord]

#: What a run or its client adds to a task, which may not fit in the owner's bytes.
Part = Literal["result", "error", "progress message", "questions", "answers"]


class TaskConflictError(Exception):
    """A task changed under every one of ``ATTEMPTS`` tries: the store is overloaded, or a writer loops."""


class Ledger:
    def __init__(
        self, store: TaskStore, clock: Callable[[], Clock], *, limit: int | None, max_bytes: int | None
    ) -> None:
        self.store = store
        self._clock = clock
        #: How many tasks one owner may keep (ended ones until their ttl), and their records' bytes (None: no limit).
        self.limit = limit
        self.max_bytes = max_bytes

    def now(self) -> float:
        return self._clock().now()

    async def add(self, owner: str, record: TaskRecord) -> None:
        """Keep a new task; ``TaskQuotaError`` when the owner keeps as many tasks or bytes as it may."""
        quota = TaskQuota(self.limit, self.max_bytes)
        await self.store.add(owner, record.id, record.kept(), record.expires_at, record.created, quota)

    async def read(self, owner: str, task_id: str) -> TaskRecord | None:
        seen = await self.store.load(owner, task_id, self.now())
        return None if seen is None else TaskRecord.from_kept(seen.record)

    async def change(self, owner: str, task_id: str, change: Change) -> TaskRecord | None:
        """The task after ``change`` (None: the owner has no such task); tried again on a concurrent write.
        ``TaskQuotaError`` when the changed record would take the owner past its bytes (nothing written)."""
        quota = TaskQuota(None, self.max_bytes)
        for attempt in range(ATTEMPTS):
            now = self.now()
            seen = await self.store.load(owner, task_id, now)
            record = None if seen is None else TaskRecord.from_kept(seen.record)
            if seen is None or record is None:
                return None
            changed = change(record, now)
            if changed is record:
                return record
            if await self.store.replace(owner, task_id, seen, changed.kept(), changed.expires_at, now, quota):
                return changed
            await asyncio.sleep(min(0.2, 0.002 * 2**attempt) * random.random())
        raise TaskConflictError(f"task {task_id!r} changed under every one of {ATTEMPTS} tries")

    async def overflow(self, owner: str, task_id: str, part: Part, refused: TaskQuotaError) -> None:
        """End the task failed because its ``part`` did not fit in the owner's bytes (none of it is kept). The
        note always fits: a task keeps room for it until it ends (``NOTE_ROOM``)."""
        error = {
            "code": types.INTERNAL_ERROR,
            "message": f"The task's {part} made its record {refused.size:,} bytes as JSON, more than fits in what this "
            f"caller's tasks may keep ({self.bytes_named(refused.allowed)}); none of it was kept. Call the tool again "
            "asking for less (a large output belongs in a file or resource the result names), or once older tasks "
            "have expired.",
            "data": {ERROR_META_KEY: {"code": "TASK_BYTES"}},
        }

        def end(record: TaskRecord, now: float) -> TaskRecord:
            message = f"Its {part} did not fit in the task store."
            return record if record.terminal else record.ended(now, "failed", message, error=error)

        try:
            await self.change(owner, task_id, end)
        except Exception:
            logger.exception("could not record that the %s of task %s did not fit", part, task_id)

    def bytes_named(self, allowed: int) -> str:
        """The byte limit that refused a write, as a client reads it: the server's ``task_max_bytes``, or the
        lower quota of the store itself."""
        if self.max_bytes is not None and allowed >= self.max_bytes:
            return f"task_max_bytes={self.max_bytes:,} bytes"
        return f"the task store's own quota of {allowed:,} bytes"
