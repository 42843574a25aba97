"""``Tasks``: long-running tool calls as tasks (SEP-2663, ``io.modelcontextprotocol/tasks``), each kept under its
caller, bounded in number and bytes, and found from any instance (docs/tasks.md; docs/architecture.md, "Tasks")."""

from __future__ import annotations

import inspect
import logging
import secrets
from collections.abc import Callable, Mapping
from typing import Any

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError

from ..base import (
    Clock,
    ConfigurationError,
    checked_optional_seconds,
    checked_optional_whole,
    checked_seconds,
    error_result,
)
from ..core import BecomesTask, CallState, ToolContext
from ..telemetry import Telemetry
from ..tools import BoundTool, Dispatcher
from ._ledger import Ledger
from ._record import TaskRecord
from ._store import MemoryTaskStore, TaskQuotaError, TaskStore
from ._wire import (
    EXTENSION,
    MODERN,
    SentParams,
    TaskParams,
    UpdateTaskParams,
    admitted,
    checked_answer,
    missing_extension,
    negotiated,
    owner_of,
)
from ._worker import Workers, crashed

__all__ = ["DEFAULT_LEASE", "DEFAULT_LIMIT", "DEFAULT_MAX_BYTES", "DEFAULT_POLL_MS", "DEFAULT_TTL", "Tasks"]

logger = logging.getLogger("mcpkit")

#: How long a task is kept after it starts (seconds), unless ``Server(task_ttl=...)`` says otherwise.
DEFAULT_TTL = 3600.0
#: How many tasks one caller may keep at once (ended ones count until their ttl), unless ``task_limit`` says.
DEFAULT_LIMIT = 100
#: How many bytes one caller's task records may take in all, unless ``task_max_bytes`` says: as much as the remember
#: plugin lets a caller keep in one scope, so a durable store's own quota and this one agree by default.
DEFAULT_MAX_BYTES = 16 * 1024 * 1024
#: The least ``task_max_bytes``: room for a task of a few arguments and the note that may end it.
LEAST_MAX_BYTES = 4096
#: How long a running task's instance may stay silent before the task is reported failed (renewed every third).
DEFAULT_LEASE = 30.0
#: How often clients are asked to poll.
DEFAULT_POLL_MS = 1000


class Tasks:
    """Serves the tasks extension for one server: the ``tools/call`` side (``offer``) and the ``tasks/*`` methods."""

    def __init__(
        self,
        dispatcher: Dispatcher,
        clock: Callable[[], Clock],
        *,
        ttl: float | None = DEFAULT_TTL,
        limit: int | None = DEFAULT_LIMIT,
        lease: float = DEFAULT_LEASE,
        max_bytes: int | None = DEFAULT_MAX_BYTES,
        poll_ms: int = DEFAULT_POLL_MS,
        telemetry: Telemetry,
    ) -> None:
        checked_optional_seconds("task_ttl", ttl)
        checked_seconds("task_lease", lease)
        checked_optional_whole("task_limit", limit, unit="tasks")
        checked_optional_whole("task_max_bytes", max_bytes, least=LEAST_MAX_BYTES, unit="bytes")
        self._dispatcher = dispatcher
        self._clock = clock
        self.ttl = ttl
        self.poll_ms = poll_ms
        self.ledger = Ledger(MemoryTaskStore(), clock, limit=limit, max_bytes=max_bytes)
        self.workers = Workers(self.ledger, dispatcher, lease, telemetry)
        self._telemetry = telemetry

    def use(self, store: TaskStore) -> None:
        """Keep tasks in ``store`` (a plugin's, once it has started) instead of this process's memory."""
        if not isinstance(store, TaskStore):
            raise ConfigurationError(f"{store!r} is not a task store: it needs add(), load() and replace().")
        for method in ("add", "replace"):
            parameters = inspect.signature(getattr(store, method)).parameters.values()
            if not any(p.name == "quota" or p.kind is p.VAR_KEYWORD for p in parameters):
                raise ConfigurationError(
                    f"{store!r}.{method}() takes no 'quota': task stores are now given a TaskQuota (tasks and bytes) "
                    "in place of the old 'limit'; update it as the TaskStore protocol says (CHANGELOG.md)."
                )
        self.ledger.store = store

    @property
    def store(self) -> TaskStore:
        return self.ledger.store

    def methods(self) -> list[tuple[str, type[types.RequestParams], Any]]:
        """The requests this extension adds to the server: (method, params model, handler)."""
        return [("tasks/get", SentParams, self.get), ("tasks/update", SentParams, self.update),
                ("tasks/cancel", SentParams, self.cancel)]  # fmt: skip

    @staticmethod
    def advertised() -> dict[str, dict[str, Any]]:
        """What goes under ``capabilities.extensions``."""
        return {EXTENSION: {}}

    # -- tools/list and tools/call -------------------------------------------------------

    @staticmethod
    def negotiated(ctx: ServerRequestContext[Any, Any]) -> bool:
        """Whether this request's client can be answered with a task (2026-07-28, the extension declared)."""
        return negotiated(ctx)

    async def offer(
        self,
        bound: BoundTool,
        instance: ToolContext,
        state: CallState,
        arguments: Mapping[str, Any],
        kwargs: dict[str, Any],
    ) -> Any:
        """A task for this call, when its client declared the extension; None to answer in the request."""
        spec, ctx = bound.spec, state.request_context
        assert ctx is not None  # a tools/call request's
        if not negotiated(ctx):
            if spec.task == "required":
                raise missing_extension(f"Calling {spec.name!r}", ctx.protocol_version or MODERN)
            return None
        given: Mapping[str, Any] = {}
        if spec.ask_first:  # the questions first, answered in the request (multi-round), then the task
            state.to_task = True
            try:
                return await self._dispatcher.run(bound, instance, arguments, kwargs)
            except BecomesTask:
                given = {} if state.answers is None else dict(state.answers.given)
            except MCPError:
                raise
            except Exception:
                error = crashed(spec.name)
                return error_result("INTERNAL_ERROR", error["message"])
        return await self._create(bound, arguments, given, ctx)

    async def _create(
        self,
        bound: BoundTool,
        arguments: Mapping[str, Any],
        answers: Mapping[str, Any],
        ctx: ServerRequestContext[Any, Any],
    ) -> Any:
        now = self.ledger.now()
        record = TaskRecord(
            id=secrets.token_urlsafe(24),  # 192 random bits: all that keeps a task to one of several behind an address
            tool=bound.spec.name,
            arguments=dict(arguments),
            status="working",
            created=now,
            updated=now,
            ttl=self.ttl,
            poll_ms=self.poll_ms,
            answers=dict(answers),
            lease=now + self.workers.lease,
        )
        owner = owner_of(ctx)
        try:
            await self.ledger.add(owner, record)
        except TaskQuotaError as exc:
            return self._refused(exc)
        except Exception:
            error = crashed(bound.spec.name)  # logged with the store's exception
            return error_result("TASKS_UNAVAILABLE", "The task could not be kept: " + error["message"])
        self._telemetry.task_status("working", record.tool)
        self.workers.launch(owner, record, bound, ctx)
        return {"resultType": "task", **record.task()}

    def _refused(self, exc: TaskQuotaError) -> types.CallToolResult:
        """The tool error of a task the caller has no room for: ``TASK_LIMIT`` (tasks) or ``TASK_BYTES``."""
        kept = f"a task counts until its ttl ({_seconds(self.ttl)}) after it started"
        if exc.limit == "tasks":
            return error_result(
                "TASK_LIMIT",
                f"This caller keeps {exc.allowed} tasks already, the most it may; {kept}. Wait for older ones to "
                "expire, then call again.",
            )
        record = f"This task's record would be {exc.size:,} bytes as JSON (its arguments, mostly)"
        limit = self.ledger.bytes_named(exc.allowed)
        if exc.size > exc.allowed:
            return error_result(
                "TASK_BYTES",
                f"{record}, more than this caller's tasks may keep in all ({limit}). Send less: pass large inputs by "
                "reference (a URL, a file name, a resource) rather than in the arguments.",
            )
        return error_result(
            "TASK_BYTES",
            f"{record}, and with this caller's other tasks that passes what they may keep ({limit}); {kept}. Wait "
            "for older ones to expire, or send less (large inputs by reference).",
        )

    # -- tasks/* ------------------------------------------------------------------------

    async def get(self, ctx: ServerRequestContext[Any, Any], sent: SentParams) -> dict[str, Any]:
        params = admitted(ctx, "tasks/get", sent, TaskParams)
        record = await self.ledger.change(owner_of(ctx), params.task_id, self._reap)
        Telemetry.link(self.workers.span_of(params.task_id))
        if record is None:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Failed to retrieve task: there is no task {params.task_id!r} for this caller (it may have expired).",
            )
        return record.detailed()

    def _reap(self, record: TaskRecord, now: float) -> TaskRecord:
        """A working task whose instance stopped renewing its lease (it died) is failed, never left working."""
        if record.status != "working" or record.lease is None or record.lease > now:
            return record
        if self.workers.running(record.id):  # ours and alive (a beat held up by a busy loop)
            return record
        error = {
            "code": types.INTERNAL_ERROR,
            "message": "The server instance running this task stopped before it finished; call the tool again.",
        }
        return record.ended(now, "failed", "The instance running it stopped.", error=error)

    async def update(self, ctx: ServerRequestContext[Any, Any], sent: SentParams) -> dict[str, Any]:
        params = admitted(ctx, "tasks/update", sent, UpdateTaskParams)
        resumed: list[TaskRecord] = []

        def answer(record: TaskRecord, now: float) -> TaskRecord:
            if record.status != "input_required":
                return record
            taken = {
                key: checked_answer(key, record.requests[key], value)
                for key, value in params.input_responses.items()
                if key in record.requests  # other keys (never asked, or answered already) are ignored
            }
            if not taken:
                return record
            left = {key: request for key, request in record.requests.items() if key not in taken}
            answers = {**record.answers, **taken}
            if left:
                return record.but(now, requests=left, answers=answers)
            changed = record.but(now, status="working", message=None, requests={}, answers=answers)
            changed = changed.leased(now + self.workers.lease)
            resumed[:] = [changed]
            return changed

        owner = owner_of(ctx)
        try:
            record = await self.ledger.change(owner, params.task_id, answer)
        except TaskQuotaError as exc:
            await self.ledger.overflow(owner, params.task_id, "answers", exc)
            return {}
        if resumed and record is resumed[0]:
            bound = self._dispatcher.bound(record.tool)
            if bound is None:
                await self._gone(owner, record)
            else:
                self.workers.launch(owner, record, bound, ctx)
        return {}

    async def _gone(self, owner: str, record: TaskRecord) -> None:
        message = f"The tool {record.tool!r} is no longer offered."
        error = {"code": types.INTERNAL_ERROR, "message": message}

        def end(current: TaskRecord, now: float) -> TaskRecord:
            return current if current.terminal else current.ended(now, "failed", message, error=error)

        await self.ledger.change(owner, record.id, end)

    async def cancel(self, ctx: ServerRequestContext[Any, Any], sent: SentParams) -> dict[str, Any]:
        params = admitted(ctx, "tasks/cancel", sent, TaskParams)

        def cancel(record: TaskRecord, now: float) -> TaskRecord:
            return record if record.terminal else record.ended(now, "cancelled", "Cancelled at the client's request.")

        record = await self.ledger.change(owner_of(ctx), params.task_id, cancel)
        if record is not None:  # this caller's task: stop its run, if it is here (else its next beat stops it)
            self._telemetry.task_status(record.status, record.tool)
            self.workers.cancel(record.id)
        return {}  # the same empty acknowledgement for any id, as the extension says

    async def close(self) -> None:
        await self.workers.close()


def _seconds(ttl: float | None) -> str:
    return "no limit" if ttl is None else f"{ttl:g} s"
