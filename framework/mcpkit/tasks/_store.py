"""``TaskStore``: where tasks are kept, one owner at a time; ``MemoryTaskStore``, the in-process default.

A store keeps JSON records at (owner, task id) with a deadline, and changes them only by compare-and-set, so two
instances behind a load balancer (one running the task, one answering ``tasks/cancel``) never lose each other's
writes. The owner is the caller's identity as the server established it, so a task is found only by the caller
who started it: another caller asking for its id finds nothing, as for an id that never existed. Each owner's tasks
are bounded in number and in bytes (``TaskQuota``). The remember plugin's store keeps them durably and sealed
(``mcpkit_storage.VaultTaskStore``, docs/tasks.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal, NamedTuple, Protocol, runtime_checkable

__all__ = ["MemoryTaskStore", "StoredTask", "TaskQuota", "TaskQuotaError", "TaskStore", "size_of"]


class StoredTask(NamedTuple):
    """A kept record and the version it was read at (opaque; given back to ``replace``)."""

    record: Mapping[str, Any]
    version: object


class TaskQuota(NamedTuple):
    """What one owner may keep: live tasks (ended ones count until their deadline) and the bytes of their records
    (None: no limit)."""

    tasks: int | None
    bytes: int | None


class TaskQuotaError(Exception):
    """A write would take the owner past its ``TaskQuota``: ``limit`` says which (``"tasks"`` or ``"bytes"``),
    ``allowed`` how many the owner may keep, ``size`` the bytes of the record refused (as JSON). Nothing was written."""

    def __init__(self, limit: Literal["tasks", "bytes"], allowed: int, size: int) -> None:
        super().__init__(f"the caller's tasks would pass their quota of {allowed:,} {limit} ({size:,}-byte record)")
        self.limit: Literal["tasks", "bytes"] = limit
        self.allowed = allowed
        self.size = size


def size_of(record: Mapping[str, Any]) -> int:
    """The bytes a record counts against ``TaskQuota.bytes``: its JSON (``json.dumps`` as the stores write it)."""
    return len(json.dumps(record))


@runtime_checkable
class TaskStore(Protocol):
    """What the tasks of a server are kept in. ``now`` is the server clock's wall time; every method skips records
    past their deadline. A write that would take the owner past its ``quota`` raises ``TaskQuotaError`` and writes
    nothing, except a replacement that does not grow the record: that one is always written."""

    async def add(
        self,
        owner: str,
        task_id: str,
        record: Mapping[str, Any],
        expires_at: float | None,
        now: float,
        quota: TaskQuota,
    ) -> None:
        """Keep a new task, readable by ``load`` as soon as this returns (on every instance)."""
        ...

    async def load(self, owner: str, task_id: str, now: float) -> StoredTask | None:
        """The owner's live task ``task_id``, or None."""
        ...

    async def replace(
        self,
        owner: str,
        task_id: str,
        seen: StoredTask,
        record: Mapping[str, Any],
        expires_at: float | None,
        now: float,
        quota: TaskQuota,
    ) -> bool:
        """Write ``record`` if the task is still as ``seen``; False (nothing written) when it changed meanwhile
        (``quota.tasks`` does not apply: the task is kept already)."""
        ...


class _Kept(NamedTuple):
    record: Mapping[str, Any]
    version: int
    expires_at: float | None
    size: int


class MemoryTaskStore:
    """Tasks in this process's memory: gone with it, and not shared with other instances (the default)."""

    def __init__(self) -> None:
        self._owners: dict[str, dict[str, _Kept]] = {}
        self._versions = 0

    def __repr__(self) -> str:
        return f"MemoryTaskStore({sum(len(tasks) for tasks in self._owners.values())} tasks)"

    def _held(self, owner: str, now: float) -> dict[str, _Kept]:
        """The owner's live tasks (the expired ones dropped; an owner left with none is forgotten, so callers
        asking about tasks they do not have leave nothing behind)."""
        tasks = self._owners.get(owner, {})
        for task_id in [t for t, kept in tasks.items() if kept.expires_at is not None and kept.expires_at <= now]:
            del tasks[task_id]
        if not tasks:
            self._owners.pop(owner, None)
        return tasks

    def _next(self) -> int:
        self._versions += 1
        return self._versions

    async def add(
        self,
        owner: str,
        task_id: str,
        record: Mapping[str, Any],
        expires_at: float | None,
        now: float,
        quota: TaskQuota,
    ) -> None:
        tasks, size = self._held(owner, now), size_of(record)
        if quota.tasks is not None and len(tasks) >= quota.tasks:
            raise TaskQuotaError("tasks", quota.tasks, size)
        if quota.bytes is not None and sum(kept.size for kept in tasks.values()) + size > quota.bytes:
            raise TaskQuotaError("bytes", quota.bytes, size)
        self._owners[owner] = tasks
        tasks[task_id] = _Kept(dict(record), self._next(), expires_at, size)

    async def load(self, owner: str, task_id: str, now: float) -> StoredTask | None:
        kept = self._held(owner, now).get(task_id)
        return None if kept is None else StoredTask(kept.record, kept.version)

    async def replace(
        self,
        owner: str,
        task_id: str,
        seen: StoredTask,
        record: Mapping[str, Any],
        expires_at: float | None,
        now: float,
        quota: TaskQuota,
    ) -> bool:
        tasks = self._held(owner, now)
        kept = tasks.get(task_id)
        if kept is None or kept.version != seen.version:
            return False
        size = size_of(record)
        grown = size - kept.size
        if quota.bytes is not None and grown > 0 and sum(other.size for other in tasks.values()) + grown > quota.bytes:
            raise TaskQuotaError("bytes", quota.bytes, size)
        tasks[task_id] = _Kept(dict(record), self._next(), expires_at, size)
        return True
