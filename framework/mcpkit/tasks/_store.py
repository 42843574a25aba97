"""``TaskStore``: where tasks are kept, one owner at a time; ``MemoryTaskStore``, the in-process default.

A store keeps JSON records at (owner, task id) with a deadline, and changes them only by compare-and-set, so two
instances behind a load balancer (one running the task, one answering ``tasks/cancel``) never lose each other's
writes. The owner is the caller's identity as the server established it, so a task is found only by the caller
who started it: another caller asking for its id finds nothing, as for an id that never existed. The remember
plugin's store keeps them durably and sealed (``mcpkit_storage.VaultTaskStore``, docs/tasks.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple, Protocol, runtime_checkable

__all__ = ["MemoryTaskStore", "StoredTask", "TaskQuotaError", "TaskStore"]


class StoredTask(NamedTuple):
    """A kept record and the version it was read at (opaque; given back to ``replace``)."""

    record: Mapping[str, Any]
    version: object


class TaskQuotaError(Exception):
    """The owner keeps as many tasks as it may already; nothing was written."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the caller keeps {limit} tasks already")
        self.limit = limit


@runtime_checkable
class TaskStore(Protocol):
    """What the tasks of a server are kept in. ``now`` is the server clock's wall time; every method skips records
    past their deadline."""

    async def add(
        self,
        owner: str,
        task_id: str,
        record: Mapping[str, Any],
        expires_at: float | None,
        now: float,
        limit: int | None,
    ) -> None:
        """Keep a new task, readable by ``load`` as soon as this returns (on every instance); ``TaskQuotaError``
        when the owner keeps ``limit`` live tasks already."""
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
    ) -> bool:
        """Write ``record`` if the task is still as ``seen``; False (nothing written) when it changed meanwhile."""
        ...


class MemoryTaskStore:
    """Tasks in this process's memory: gone with it, and not shared with other instances (the default)."""

    def __init__(self) -> None:
        self._owners: dict[str, dict[str, tuple[Mapping[str, Any], int, float | None]]] = {}
        self._versions = 0

    def __repr__(self) -> str:
        return f"MemoryTaskStore({sum(len(tasks) for tasks in self._owners.values())} tasks)"

    def _held(self, owner: str, now: float) -> dict[str, tuple[Mapping[str, Any], int, float | None]]:
        """The owner's live tasks (the expired ones dropped; an owner left with none is forgotten, so callers
        asking about tasks they do not have leave nothing behind)."""
        tasks = self._owners.get(owner, {})
        for task_id in [t for t, kept in tasks.items() if kept[2] is not None and kept[2] <= now]:
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
        limit: int | None,
    ) -> None:
        tasks = self._held(owner, now)
        if limit is not None and len(tasks) >= limit:
            raise TaskQuotaError(limit)
        self._owners[owner] = tasks
        tasks[task_id] = (dict(record), self._next(), expires_at)

    async def load(self, owner: str, task_id: str, now: float) -> StoredTask | None:
        kept = self._held(owner, now).get(task_id)
        return None if kept is None else StoredTask(kept[0], kept[1])

    async def replace(
        self,
        owner: str,
        task_id: str,
        seen: StoredTask,
        record: Mapping[str, Any],
        expires_at: float | None,
        now: float,
    ) -> bool:
        tasks = self._held(owner, now)
        kept = tasks.get(task_id)
        if kept is None or kept[1] != seen.version:
            return False
        tasks[task_id] = (dict(record), self._next(), expires_at)
        return True
