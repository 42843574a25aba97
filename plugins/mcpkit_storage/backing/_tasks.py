"""``VaultTaskStore``: the server's tasks kept in a plugin's store, sealed like every value (docs/tasks.md)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from mcpkit import StoredTask, TaskQuota, TaskQuotaError

from ..base import Place
from ..stores import Quota, QuotaExceededError
from ..vault import Observed, Vault

__all__ = ["TASKS_BUCKET", "VaultTaskStore"]

#: The bucket each caller's tasks are kept in.
TASKS_BUCKET = "tasks"


class VaultTaskStore:
    """A ``mcpkit.TaskStore`` over a ``Vault`` (``vault``: the started vault, read when first needed); ``max_bytes``:
    the store's own quota of bytes per owner and bucket, which bounds the tasks bucket too (None: no limit)."""

    def __init__(self, vault: Callable[[], Vault], max_bytes: int | None = None) -> None:
        self._vault = vault
        self.max_bytes = max_bytes

    def __repr__(self) -> str:
        return f"VaultTaskStore({self._vault().store!r})"

    @staticmethod
    def _place(owner: str) -> Place:
        return Place(owner, TASKS_BUCKET)

    def _quota(self, tasks: int | None, asked: int | None) -> Quota | None:
        """The bucket quota of a write: ``tasks`` values, and the lower of the bytes asked and the store's own."""
        limits = [limit for limit in (asked, self.max_bytes) if limit is not None]
        most = min(limits) if limits else None
        return None if tasks is None and most is None else Quota(values=tasks, bytes=most)

    async def add(
        self,
        owner: str,
        task_id: str,
        record: Mapping[str, Any],
        expires_at: float | None,
        now: float,
        quota: TaskQuota,
    ) -> None:
        vault, place = self._vault(), self._place(owner)
        observed = await vault.observe(place, task_id, now)
        if observed.found is not None:
            raise ValueError(f"a task {task_id!r} exists already")  # ids are 192 random bits: never in practice
        text, quoted = json.dumps(record), self._quota(quota.tasks, quota.bytes)
        try:
            written = await vault.swap(place, task_id, observed, text, expires_at, now, quoted, indexed=False)
        except QuotaExceededError as exc:
            raise TaskQuotaError("tasks" if exc.limit == "values" else "bytes", exc.allowed, len(text)) from None
        if not written:
            raise ValueError(f"another writer made task {task_id!r} at the same moment")

    async def load(self, owner: str, task_id: str, now: float) -> StoredTask | None:
        observed = await self._vault().observe(self._place(owner), task_id, now)
        if observed.found is None or not isinstance(observed.found.value, dict):
            return None
        return StoredTask(observed.found.value, observed)

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
        observed = seen.version
        if not isinstance(observed, Observed):
            raise TypeError(f"{seen!r} was not read from this store")
        text, quoted = json.dumps(record), self._quota(None, quota.bytes)
        try:
            return await self._vault().swap(
                self._place(owner), task_id, observed, text, expires_at, now, quoted, indexed=False
            )
        except QuotaExceededError as exc:
            raise TaskQuotaError("bytes", exc.allowed, len(text)) from None
