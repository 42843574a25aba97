"""The tasks extension (SEP-2663) for the official ``mcp`` client, which has no tasks API yet: ``TasksExtension``
claims the ``resultType: "task"`` a call answers with and follows the task to its end (so ``call_tool`` returns the
tool's result), and ``ToolTask`` drives one by hand: ``tasks/get``, ``tasks/update``, ``tasks/cancel``. Both send
their JSON-RPC requests through the client's own session, so on its transport, with its headers and credentials."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import mcp_types as types
from mcp import MCPError
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientRequestContext, ClientSession
from pydantic import BaseModel, TypeAdapter

__all__ = ["ENDED", "TaskCancelledError", "TaskStarted", "TaskStatus", "TasksExtension", "ToolTask"]

EXTENSION = "io.modelcontextprotocol/tasks"
#: The statuses a task ends in.
ENDED = ("completed", "failed", "cancelled")
_INPUT_REQUEST: TypeAdapter[types.InputRequest] = TypeAdapter(types.InputRequest)


class TaskStarted(types.Result):
    """What a call answers when it became a task: ``resultType: "task"``, the task's id and how often to poll."""

    result_type: Literal["task"]
    task_id: str
    status: str
    poll_interval_ms: int | None = None
    ttl_ms: int | None = None


class TaskStatus(types.Result):
    """A ``tasks/get`` answer: ``status`` (``working``, ``input_required``, ``completed``, ``failed``, ``cancelled``),
    its ``status_message``, the ``input_requests`` it waits on, and at the end its ``result`` or ``error`` (JSON)."""

    task_id: str
    status: str
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    input_requests: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class TaskCancelledError(RuntimeError):
    """The task ended ``cancelled``: it has no result."""

    def __init__(self, task_id: str) -> None:
        super().__init__(f"Task {task_id} was cancelled: it has no result.")
        self.task_id = task_id


class _TaskParams(types.RequestParams):
    task_id: str


class _UpdateParams(_TaskParams):
    input_responses: dict[str, Any]


class _GetTask(types.Request[_TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"  # SEP-2663: the task id in the Mcp-Name header too


class _UpdateTask(types.Request[_UpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    name_param = "taskId"


class _CancelTask(types.Request[_TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    name_param = "taskId"


class ToolTask:
    """One task, driven through ``session``; polls every ``poll_interval`` seconds (None: what the server asks)."""

    def __init__(self, session: ClientSession, started: TaskStarted, poll_interval: float | None = None) -> None:
        self.id = started.task_id
        self.started = started
        self._session = session
        asked_ms = started.poll_interval_ms if started.poll_interval_ms is not None else 1000
        self.poll_interval = poll_interval if poll_interval is not None else asked_ms / 1000
        self._answered: set[str] = set()

    def __repr__(self) -> str:
        return f"<ToolTask {self.id}>"

    async def get(self) -> TaskStatus:
        """``tasks/get``: where the task is now."""
        return await self._session.send_request(_GetTask(params=_TaskParams(task_id=self.id)), TaskStatus)

    async def wait(self, *statuses: str) -> TaskStatus:
        """Poll until the task is in one of ``statuses`` (by default: one it ends in), and return it there; an
        ``AssertionError`` if it ends in another (it never leaves an end)."""
        wanted = statuses or ENDED
        while True:
            status = await self.get()
            if status.status in wanted:
                return status
            if status.status in ENDED:
                outcome = status.error or status.result or {}
                waited = " or ".join(wanted)
                raise AssertionError(
                    f"Task {self.id} ended {status.status!r} while waited for as {waited}: {outcome!r:.300}"
                )
            await asyncio.sleep(self.poll_interval)

    async def answer(self, responses: Mapping[str, Any] | None = None) -> None:
        """``tasks/update`` with ``responses`` (question key -> answer, such as ``{"action": "accept", "content":
        {...}}``); without them, the questions the task waits on are answered by the client's own callbacks."""
        if responses is None:
            responses = await self._answers_to((await self.get()).input_requests or {})
        given = {key: _wire(answer) for key, answer in responses.items()}
        self._answered.update(given)
        params = _UpdateParams(task_id=self.id, input_responses=given)
        await self._session.send_request(_UpdateTask(params=params), types.EmptyResult)

    async def cancel(self) -> None:
        """``tasks/cancel``: stop the work (an ended task stays as it ended)."""
        await self._session.send_request(_CancelTask(params=_TaskParams(task_id=self.id)), types.EmptyResult)

    async def result(self) -> types.CallToolResult:
        """Follow the task to its end as a client would, answering its questions with the client's callbacks: the
        tool's result (``completed``, an error result included), ``MCPError`` (``failed``) or ``TaskCancelledError``."""
        while (status := await self.get()).status not in ENDED:
            asked = {key: ask for key, ask in (status.input_requests or {}).items() if key not in self._answered}
            if status.status == "input_required" and asked:
                await self.answer(await self._answers_to(asked))
            else:
                await asyncio.sleep(self.poll_interval)
        return _ended(status)

    async def _answers_to(self, requests: Mapping[str, Any]) -> dict[str, Any]:
        answers: dict[str, Any] = {}
        for key, raw in requests.items():
            request = _INPUT_REQUEST.validate_python(raw)
            context = ClientRequestContext(session=self._session, request_id=key, meta=None)
            answer = await self._session.dispatch_input_request(context, request)
            if isinstance(answer, types.ErrorData):
                raise MCPError.from_error_data(answer)
            answers[key] = answer
        return answers


class TasksExtension(ClientExtension):
    """``mcp.Client(..., extensions=[TasksExtension()])`` declares the tasks extension; a call that becomes a task
    is then followed to its end (``tasks/get`` every ``poll_interval`` seconds, questions answered through
    ``tasks/update`` with the client's callbacks), and ``call_tool`` returns the tool's result as for any call."""

    identifier = EXTENSION

    def __init__(self, *, poll_interval: float | None = None) -> None:
        self.poll_interval = poll_interval

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=TaskStarted, resolve=self._follow)]

    async def _follow(self, started: TaskStarted, context: ClaimContext) -> types.CallToolResult:
        return await ToolTask(context.session, started, self.poll_interval).result()


def _ended(status: TaskStatus) -> types.CallToolResult:
    if status.status == "completed":
        return types.CallToolResult.model_validate(status.result or {}, by_name=False)
    if status.status == "failed":
        raise MCPError.from_error_data(types.ErrorData.model_validate(status.error or {"code": -32603, "message": ""}))
    raise TaskCancelledError(status.task_id)


def _wire(answer: Any) -> Any:
    return answer.model_dump(by_alias=True, mode="json", exclude_none=True) if isinstance(answer, BaseModel) else answer
