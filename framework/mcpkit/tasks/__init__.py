"""Tasks (SEP-2663, the ``io.modelcontextprotocol/tasks`` extension of 2026-07-28): a long tool call answered
with a task the client polls, kept per caller in a ``TaskStore`` (this process's memory by default, or the remember
plugin's store), run in the background with a lease so that a dead instance's tasks are reported failed."""

from ._record import TERMINAL, TaskRecord, TaskStatus
from ._store import MemoryTaskStore, StoredTask, TaskQuota, TaskQuotaError, TaskStore
from ._tasks import DEFAULT_LEASE, DEFAULT_LIMIT, DEFAULT_MAX_BYTES, DEFAULT_POLL_MS, DEFAULT_TTL, Tasks
from ._wire import EXTENSION

__all__ = [
    "DEFAULT_LEASE",
    "DEFAULT_LIMIT",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_POLL_MS",
    "DEFAULT_TTL",
    "EXTENSION",
    "TERMINAL",
    "MemoryTaskStore",
    "StoredTask",
    "TaskQuota",
    "TaskQuotaError",
    "TaskRecord",
    "TaskStatus",
    "TaskStore",
    "Tasks",
]
