"""``Workers``: the tasks this instance runs, each a fresh tool instance running ``execute`` in the background,
renewing its lease so that a task whose instance died, or that was cancelled elsewhere, ends (docs/architecture.md,
"Tasks")."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
import uuid
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from opentelemetry import trace
from opentelemetry.trace import SpanContext

from ..elicitation import Answers
from ..telemetry import Telemetry, tool_error_type
from ..tools import BoundTool, Dispatcher
from ._ledger import Ledger
from ._record import TaskRecord
from ._store import TaskQuotaError

__all__ = ["Workers", "crashed"]

logger = logging.getLogger("mcpkit")

#: How long a stopping server waits for its runs to record that they were stopped.
STOP_SECONDS = 5.0
#: The least time between two writes of a run's progress (its status message) to the store.
PROGRESS_EVERY = 0.5


@dataclass
class _Progress:
    """A run's progress: when it was last written (monotonic seconds) and the message not written yet."""

    written: float = -PROGRESS_EVERY
    text: str | None = None
    later: asyncio.TimerHandle | None = None  # the write of ``text`` once it is due
    writing: bool = False  # a write is under way: the next waits for its end

    def due(self) -> float:
        """When the message waiting (if any) may be written."""
        return self.written + PROGRESS_EVERY


def crashed(tool: str) -> dict[str, Any]:
    """The JSON-RPC error of a task whose tool raised an unexpected exception (logged under the error id)."""
    error_id = uuid.uuid4().hex[:12]
    logger.exception("task of tool %r raised an unexpected exception [error id %s]", tool, error_id)
    return {
        "code": types.INTERNAL_ERROR,
        "message": f"The tool {tool!r} failed on the server (error id {error_id}); the server log has the details.",
    }


class Workers:
    def __init__(self, ledger: Ledger, dispatcher: Dispatcher, lease: float, telemetry: Telemetry) -> None:
        self._ledger = ledger
        self._telemetry = telemetry
        #: The span of each task running here, for the ``tasks/*`` requests about it to link to.
        self._spans: dict[str, SpanContext] = {}
        self._dispatcher = dispatcher
        self.lease = lease
        self._beat = lease / 3
        self._bodies: dict[str, asyncio.Future[Any]] = {}
        self._works: set[asyncio.Task[None]] = set()
        self._stopping = False

    def running(self, task_id: str) -> bool:
        return task_id in self._bodies

    def span_of(self, task_id: str) -> SpanContext | None:
        """The span of the task's work, while it runs here."""
        return self._spans.get(task_id)

    def launch(self, owner: str, record: TaskRecord, bound: BoundTool, ctx: ServerRequestContext[Any, Any]) -> None:
        """Run ``record``'s call here, in the background (``ctx``: the request that started or resumed it)."""
        work = asyncio.get_running_loop().create_task(self._work(owner, record, bound, ctx))
        self._works.add(work)
        work.add_done_callback(self._works.discard)

    def cancel(self, task_id: str) -> None:
        body = self._bodies.get(task_id)
        if body is not None:
            body.cancel()

    async def close(self) -> None:
        """Stop every run; each records that the server stopped while it ran (failed), so no client waits on it."""
        self._stopping = True
        for body in list(self._bodies.values()):
            body.cancel()
        if self._works:
            await asyncio.wait(set(self._works), timeout=STOP_SECONDS)

    async def _work(
        self, owner: str, record: TaskRecord, bound: BoundTool, ctx: ServerRequestContext[Any, Any]
    ) -> None:
        with self._telemetry.task_span(bound.spec.name) as span:
            self._spans[record.id] = span.get_span_context()
            try:
                await self._run(owner, record, bound, ctx)
            finally:
                self._spans.pop(record.id, None)

    async def _run(self, owner: str, record: TaskRecord, bound: BoundTool, ctx: ServerRequestContext[Any, Any]) -> None:
        task_id, spec = record.id, bound.spec
        try:
            progress = _Progress()
            answers = Answers(dict(record.answers))
            reports = functools.partial(self._progress, owner, task_id, progress)
            instance = self._dispatcher.instance(bound, ctx, answers, reports)
            instance.task_id = task_id
            kwargs = spec.input_model.model_validate(dict(record.arguments)).__dict__
        except Exception:
            await self._end(owner, task_id, "failed", error=crashed(spec.name))
            return
        body = asyncio.ensure_future(self._dispatcher.run(bound, instance, record.arguments, kwargs))
        self._bodies[task_id] = body
        try:
            while not body.done():
                await asyncio.wait({body}, timeout=self._beat)
                if not body.done() and not await self._renew(owner, task_id):
                    body.cancel()  # ended elsewhere: cancelled through another instance, or reported dead
        finally:
            del self._bodies[task_id]
            if progress.later is not None:
                progress.later.cancel()  # the run's end replaces its status message
        if body.cancelled():
            if self._stopping:
                stopped = {
                    "code": types.INTERNAL_ERROR,
                    "message": "The server instance running this task stopped before it finished; call the tool again.",
                }
                await self._end(owner, task_id, "failed", error=stopped)
            return
        failure = body.exception()
        if isinstance(failure, MCPError):
            await self._end(owner, task_id, "failed", error=failure.error.model_dump(mode="json", exclude_none=True))
        elif failure is not None:
            try:
                raise failure
            except Exception:
                await self._end(owner, task_id, "failed", error=crashed(spec.name))
        else:
            result = body.result()
            if isinstance(result, types.InputRequiredResult):
                await self._ask(owner, task_id, result, answers)
            else:
                dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
                await self._end(owner, task_id, "completed", result=dumped)

    async def _renew(self, owner: str, task_id: str) -> bool:
        """Extend the run's lease; False when the task has ended meanwhile (or is gone)."""

        def renew(record: TaskRecord, now: float) -> TaskRecord:
            return record if record.terminal else record.leased(now + self.lease)

        try:
            renewed = await self._ledger.change(owner, task_id, renew)
        except Exception:  # the store is down: keep running, the next beat tries again
            logger.warning("could not renew the lease of task %s", task_id, exc_info=True)
            return True
        return renewed is not None and not renewed.terminal

    async def _end(self, owner: str, task_id: str, status: Any, **changes: Any) -> None:
        failure = tool_error_type(changes["result"]) if "result" in changes else str(changes["error"].get("code"))
        if failure is not None:  # in the task's span (the run's context): its error.type
            self._telemetry.failed(trace.get_current_span(), failure)

        def end(record: TaskRecord, now: float) -> TaskRecord:
            return record if record.terminal else record.ended(now, status, **changes)

        try:
            ended = await self._ledger.change(owner, task_id, end)
            if ended is not None and ended.status == status:  # not one cancelled meanwhile
                self._telemetry.task_status(status, ended.tool)
        except TaskQuotaError as exc:
            await self._ledger.overflow(owner, task_id, "result" if "result" in changes else "error", exc)
        except Exception:
            logger.exception("could not record the end (%s) of task %s", status, task_id)

    async def _ask(self, owner: str, task_id: str, asked: types.InputRequiredResult, answers: Answers) -> None:
        requests = {
            key: request.model_dump(mode="json", by_alias=True, exclude_none=True)
            for key, request in (asked.input_requests or {}).items()
        }
        given = dict(answers.given)

        def park(record: TaskRecord, now: float) -> TaskRecord:
            if record.terminal:
                return record
            message = "Waiting for the client to answer: " + ", ".join(sorted(requests))
            return record.but(
                now, status="input_required", message=message, requests=requests, answers=given, lease=None
            )

        try:
            parked = await self._ledger.change(owner, task_id, park)
            if parked is not None and parked.status == "input_required":
                self._telemetry.task_status("input_required", parked.tool)
        except TaskQuotaError as exc:
            await self._ledger.overflow(owner, task_id, "questions", exc)
        except Exception:
            logger.exception("could not record the questions of task %s", task_id)

    async def _progress(
        self, owner: str, task_id: str, progress: _Progress, done: float, total: float | None, message: str | None
    ) -> None:
        """``self.progress(...)`` in a task: its status message, written now or when ``PROGRESS_EVERY`` has passed."""
        progress.text = message or (f"{done:g} of {total:g}" if total is not None else f"{done:g}")
        if progress.later is not None or progress.writing:
            return  # a write is due soon (or under way, and the next one is), and takes the latest message
        wait = progress.due() - time.monotonic()
        if wait <= 0:
            await self._note(owner, task_id, progress, quiet=False)
        else:
            progress.later = asyncio.get_running_loop().call_later(wait, self._note_later, owner, task_id, progress)

    def _note_later(self, owner: str, task_id: str, progress: _Progress) -> None:
        progress.later = None
        work = asyncio.ensure_future(self._note(owner, task_id, progress))
        self._works.add(work)  # a stopping server waits for it too
        work.add_done_callback(self._works.discard)

    async def _note(self, owner: str, task_id: str, progress: _Progress, *, quiet: bool = True) -> None:
        """Write the waiting message (``quiet``: a failure is logged, as the run's own loop writes it)."""
        text, progress.text, progress.writing = progress.text, None, True

        def note(record: TaskRecord, now: float) -> TaskRecord:
            return record if record.terminal or record.message == text else record.but(now, message=text)

        try:
            await self._ledger.change(owner, task_id, note)
        except TaskQuotaError as exc:
            await self._ledger.overflow(owner, task_id, "progress message", exc)
            self.cancel(task_id)  # the task has ended: its run stops at its next await
        except Exception:
            if not quiet:
                raise
            logger.warning("could not record the progress of task %s", task_id, exc_info=True)
        finally:
            progress.writing, progress.written = False, time.monotonic()  # writes never overlap
            if progress.text is not None and progress.later is None:  # reported meanwhile
                loop = asyncio.get_running_loop()
                progress.later = loop.call_later(PROGRESS_EVERY, self._note_later, owner, task_id, progress)
