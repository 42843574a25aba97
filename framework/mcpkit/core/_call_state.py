"""``CallState``: what one call carries beside its arguments, built where the call is served and read by ``Context``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.server import ServerRequestContext

    from ..elicitation import Answers
    from ..subscriptions import Services

__all__ = ["OUTSIDE_A_CALL", "CallState", "TaskProgress"]

#: How a task's run takes ``self.progress(done, total, message)``: as its status message (``mcpkit.tasks``).
TaskProgress = Callable[[float, float | None, str | None], Awaitable[None]]


@dataclass(slots=True)
class CallState:
    """The request a call serves, the server's services, and a 2026-07-28 round's params and answers; in a task's
    run also its progress writer, and ``to_task`` while an ``ask_first`` tool asks in the request (docs/tasks.md).
    One small object per call, made where the call is served: the only state a ``Context`` reads of its call."""

    request_context: ServerRequestContext[Any, Any] | None
    services: Services | None = None
    #: The request's params: the answers of its round are read from them when a question is asked.
    params: types.InputResponseRequestParams | None = None
    #: This round's answers, once a question has been asked (or, in a task's run, those it was given).
    answers: Answers | None = None
    task_progress: TaskProgress | None = None
    to_task: bool = False


#: The state of a context built outside a call, as in a unit test of the class: no request, nothing to ask.
OUTSIDE_A_CALL = CallState(None)
