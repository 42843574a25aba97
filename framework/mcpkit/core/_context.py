"""``Context``: what a tool, resource or prompt class sees of its call; ``ToolContext``, the tools' base class.

One instance serves one request. ``ResourceContext`` (``_resources.py``) and ``PromptContext``
(``_prompts.py``) subclass ``Context`` beside ``ToolContext``, so that plugin attributes such as
``self.remember`` and ``self.caller`` work the same in all three.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import mcp_types as types

from ..elicitation import (
    DEFAULT_QUESTION_TIMEOUT,
    Elicited,
    ask,
    elicit_request,
    elicited,
    sample_request,
    unavailable,
)
from ..reporting import ClientLog, report_progress
from ._call_state import OUTSIDE_A_CALL, CallState

if TYPE_CHECKING:
    from mcp.server import ServerRequestContext

    from ..base import Clock
    from ._caller import Caller

__all__ = ["BecomesTask", "Context", "ToolContext"]

#: name -> factory building the attribute for one call (contributed by plugins).
Providers = Mapping[str, Callable[["Context"], object]]


class Context:
    """The base of ``ToolContext``, ``ResourceContext`` and ``PromptContext``.

    ``self.caller`` is who is calling, ``self.clock`` the server's clock, ``self.name`` the tool, resource or
    prompt called and ``self.app_id`` its app. Plugins add attributes (``RememberPlugin`` adds
    ``self.remember``); each is built on first use, so a call pays only for what it touches.
    """

    #: What kind of thing the class is: ``"tool"``, ``"resource"`` or ``"prompt"``.
    kind: ClassVar[str] = "tool"
    caller: Caller
    clock: Clock
    name: str
    app_id: str
    _state: CallState = OUTSIDE_A_CALL

    def __init__(
        self,
        caller: Caller,
        clock: Clock,
        name: str,
        app_id: str,
        providers: Providers,
        state: CallState = OUTSIDE_A_CALL,
    ) -> None:
        self.caller = caller
        self.clock = clock
        self.name = name
        self.app_id = app_id
        self._providers = providers
        self._state = state

    @property
    def request_context(self) -> ServerRequestContext[Any, Any] | None:
        """The SDK's context of the request being served (None outside one, as in a unit test of the class)."""
        return self._state.request_context

    @property
    def log(self) -> ClientLog:
        """Log messages to the client: ``await self.log.info("...")`` (docs/progress-and-logging.md)."""
        services = self._state.services
        return ClientLog(self, services.log_levels if services is not None else None)

    async def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Tell the client how far the call has got (``notifications/progress``); nothing if it did not ask.

        ``done`` must grow from one call to the next; ``total`` is what it grows to, when known. In a task, it
        becomes the task's ``statusMessage`` instead, which the client sees when it polls (docs/tasks.md).
        """
        to_task = self._state.task_progress
        if to_task is not None:
            await to_task(done, total, message)
            return
        await report_progress(self, done, total, message)

    async def notify_resource_updated(self, uri: str) -> None:
        """Tell the clients watching ``uri`` that it changed (docs/resources.md#subscriptions)."""
        services = self._state.services
        if services is not None:
            await services.subscriptions.updated(uri)

    async def close_stream(self) -> bool:
        """Close this call's SSE stream while it goes on (SEP-1699 polling): the client reconnects after the
        server's retry interval with ``Last-Event-ID`` and receives everything sent meanwhile, the result
        included. Only 2025-11-25 sessions on a server with resumable streams have such a stream; elsewhere
        nothing happens and this returns False (docs/progress-and-logging.md)."""
        ctx = self.request_context
        close = None if ctx is None else ctx.close_sse_stream
        if close is None:
            return False
        await close()
        return True

    def client_can(self, capability: str) -> bool:
        """Whether this call can ask the client through ``capability`` (``"elicitation"``, ``"sampling"``,
        ``"roots"``): the client declared it, and its connection can carry the question."""
        return unavailable(self._state, capability) is None

    async def elicit(self, message: str, schema: Any, *, key: str | None = None) -> Elicited[Any]:
        """Ask the user (form mode); ``schema`` is a pydantic model or TypedDict of flat fields, or a JSON Schema.

        Returns ``Elicited(action, content)``, ``content`` validated as ``schema`` when accepted. On 2026-07-28
        the call ends here until the client answers, and runs again from the start (docs/elicitation.md).
        A client that cannot be asked gets the tool error ``INPUT_UNAVAILABLE``: check ``client_can`` first.
        """
        request, adapter = elicit_request(message, schema)
        answer = await ask(self._state, key, request, "elicitation", "ask the user", self._question_timeout())
        return elicited(answer, adapter)

    async def sample(
        self,
        messages: str | list[str | types.SamplingMessage],
        *,
        max_tokens: int = 1000,
        system_prompt: str | None = None,
        key: str | None = None,
    ) -> types.CreateMessageResult:
        """Ask the client's model (``sampling/createMessage``); a string is one user message."""
        request = sample_request([messages] if isinstance(messages, str) else messages, max_tokens, system_prompt)
        answer = await ask(self._state, key, request, "sampling", "ask the client's model", self._question_timeout())
        return (
            answer
            if isinstance(answer, types.CreateMessageResult)
            else types.CreateMessageResult.model_validate(answer)
        )

    async def roots(self, *, key: str | None = None) -> list[types.Root]:
        """The client's roots (``roots/list``): the folders or repositories it lets the server work in."""
        timeout = self._question_timeout()
        answer = await ask(self._state, key, types.ListRootsRequest(), "roots", "list the client's roots", timeout)
        result = answer if isinstance(answer, types.ListRootsResult) else types.ListRootsResult.model_validate(answer)
        return list(result.roots)

    def _question_timeout(self) -> float:
        services = self._state.services
        return DEFAULT_QUESTION_TIMEOUT if services is None else services.question_timeout

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: build a plugin attribute lazily.
        providers: Providers = self.__dict__.get("_providers", {})
        factory = providers.get(name)
        if factory is None:
            given = sorted(f"{type(getattr(f, '__self__', f)).__name__} adds {n!r}" for n, f in providers.items())
            hint = f" Its plugins: {'; '.join(given)}." if given else " No plugin adds attributes to it."
            raise AttributeError(
                f"{type(self).__name__} has no attribute {name!r}.{hint} "
                f"Attributes such as 'remember' come from plugins: add the plugin to the app's plugins=[...]."
            )
        value = factory(self)
        self.__dict__[name] = value
        return value


class BecomesTask(BaseException):
    """Raised by ``run_as_task()`` in the request of an ``ask_first`` tool: the call goes on as a task. A
    ``BaseException``, so that a tool's own ``except Exception`` does not keep the call in the request."""


class ToolContext(Context):
    """Subclass it, decorate it with ``@tool``, and write ``async def execute(self, ...)``.

    Inside ``execute``: ``self.caller`` is who is calling, ``self.clock`` the
    server's clock, ``self.tool_name`` and ``self.app_id`` where the call landed (as
    declared: a mounted tool's clients call it with its mount's prefix).
    Plugins add attributes (``RememberPlugin`` adds ``self.remember``); each is
    built on first use, so a tool pays only for what it touches.
    """

    kind: ClassVar[str] = "tool"
    tool_name: str
    #: The task this call runs as (docs/tasks.md), or None when it answers in the request.
    task_id: str | None = None

    def __init__(
        self,
        caller: Caller,
        clock: Clock,
        tool_name: str,
        app_id: str,
        providers: Providers,
        state: CallState = OUTSIDE_A_CALL,
    ) -> None:
        # Context.__init__'s assignments, inline: this runs on every tool call.
        self.caller = caller
        self.clock = clock
        self.name = self.tool_name = tool_name
        self.app_id = app_id
        self._providers = providers
        self._state = state

    async def run_as_task(self) -> None:
        """Go on as a task: in an ``@tool(task=..., ask_first=True)`` tool, the questions asked so far were answered
        in the request; the client now gets a task, and ``execute`` runs again in it, from the start, with those
        answers. Elsewhere (already a task, or a client without the tasks extension) it does nothing."""
        if self._state.to_task:
            raise BecomesTask()
