"""Asking the client while a tool runs: ``self.elicit`` (the user), ``self.sample`` (its model), ``self.roots``,
as live requests on 2025-11-25 and as ``InputRequiredResult`` rounds on 2026-07-28 (docs/elicitation.md; the rounds
and their sealed ``requestState``: docs/architecture.md, "How a request flows")."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from pydantic import TypeAdapter, ValidationError

from ..base import ToolError, validation_problems

__all__ = [
    "DEFAULT_QUESTION_TIMEOUT",
    "Answers",
    "Asking",
    "Elicited",
    "InputNeeded",
    "answers_of",
    "ask",
    "unavailable",
]

MODERN = "2026-07-28"
#: How long a live question (2025-11-25) waits for the client's answer, unless ``Server(question_timeout=...)`` says.
DEFAULT_QUESTION_TIMEOUT = 120.0
T = TypeVar("T")


class Asking(Protocol):
    """What asking the client needs of the call that asks (its ``CallState``): the request it serves, and on
    2026-07-28 the request's params, whose answers are read into ``answers`` when the first question is asked."""

    @property
    def request_context(self) -> ServerRequestContext[Any, Any] | None: ...

    @property
    def params(self) -> types.InputResponseRequestParams | None: ...

    answers: Answers | None


@dataclass(frozen=True, slots=True)
class Elicited(Generic[T]):
    """The user's answer: ``action`` is ``"accept"`` (then ``content`` holds the validated values), ``"decline"``
    or ``"cancel"`` (then ``content`` is None)."""

    action: Literal["accept", "decline", "cancel"]
    content: T | None = None

    @property
    def accepted(self) -> bool:
        return self.action == "accept"


class InputNeeded(BaseException):
    """Raised inside a 2026-07-28 call by the first question not answered yet; the dispatcher answers the call
    with an ``InputRequiredResult`` naming it and carrying the answers so far. A ``BaseException``, so that a
    tool's own ``except Exception`` around a question does not swallow the end of the round."""

    def __init__(self, key: str, answers: Answers) -> None:
        super().__init__(key)
        self.key = key
        self.answers = answers

    def result(self) -> types.InputRequiredResult:
        """Every question this round asked and found unanswered (several when they were asked together)."""
        return types.InputRequiredResult(
            input_requests=dict(self.answers.pending), request_state=json.dumps({"answers": self.answers.given})
        )


class Answers:
    """The answers a 2026-07-28 call has so far (from ``requestState`` and ``inputResponses``), and the
    questions' running count."""

    def __init__(self, given: dict[str, Any]) -> None:
        self.given = given
        self.asked = 0
        self.pending: dict[str, types.InputRequest] = {}  # asked this round, not answered yet

    def next_key(self, key: str | None) -> str:
        self.asked += 1
        return key if key is not None else f"ask-{self.asked}"


def answers_of(params: types.InputResponseRequestParams) -> Answers:
    """The answers the client sent with this round; a ``requestState`` not of this shape counts as none (it was
    minted by this server and verified by the SDK's boundary, so only an older release could have written it)."""
    given: dict[str, Any] = {}
    if params.request_state:
        try:
            state = json.loads(params.request_state)
        except ValueError:
            state = {}
        if isinstance(state, dict) and isinstance(state.get("answers"), dict):
            given.update(state["answers"])
    for key, response in (params.input_responses or {}).items():
        given[key] = response.model_dump(mode="json", by_alias=True, exclude_none=True)
    return Answers(given)


def _unavailable(what: str, why: str) -> ToolError:
    return ToolError(f"This tool needs to {what}, but {why}.", code="INPUT_UNAVAILABLE")


def unavailable(context: Asking, capability: str) -> str | None:
    """Why this call cannot ask the client through ``capability`` (``"elicitation"``, ...), or None if it can."""
    ctx = context.request_context
    if ctx is None:
        return "it is not serving a request"
    declared = ctx.session.client_capabilities
    if declared is None or getattr(declared, capability, None) is None:
        return f"the client did not declare the {capability!r} capability"
    if ctx.protocol_version == MODERN:
        if context.answers is None and context.params is None:
            return "only tool calls, prompts/get and resources/read can ask on 2026-07-28"
        return None
    if not ctx.session.can_send_request:
        return (
            "this 2025-11-25 request does not accept an event stream, which a question needs "
            "(the client must send Accept: application/json, text/event-stream)"
        )
    return None


async def ask(
    context: Asking,
    key: str | None,
    request: types.InputRequest,
    capability: str,
    what: str,
    answer_within: float = DEFAULT_QUESTION_TIMEOUT,
) -> Any:
    """The client's answer to ``request``: live on 2025-11-25 (within ``answer_within`` seconds, else
    ``INPUT_TIMEOUT``), from this round's answers on 2026-07-28.

    Returns the raw result dict (2026-07-28) or model (2025-11-25); ``InputNeeded`` ends a 2026-07-28 round.
    """
    why = unavailable(context, capability)
    if why is not None:
        raise _unavailable(what, why)
    ctx = context.request_context
    assert ctx is not None  # checked by unavailable()
    if ctx.protocol_version == MODERN:
        answers = context.answers
        if answers is None:
            assert context.params is not None  # checked by unavailable()
            answers = context.answers = answers_of(context.params)
        name = answers.next_key(key)
        if name in answers.given:
            return answers.given[name]
        answers.pending[name] = request  # questions asked together (asyncio.gather) all reach the client
        raise InputNeeded(name, answers)
    related = ServerMessageMetadata(related_request_id=ctx.request_id)  # on the call's own stream
    try:
        return await ctx.session.send_request(
            request, _RESULTS[request.method], request_read_timeout_seconds=answer_within, metadata=related
        )
    except MCPError as exc:
        if exc.error.code != types.REQUEST_TIMEOUT:
            raise
    raise ToolError(
        f"This tool needed to {what}, and the client gave no answer within {answer_within:g} seconds (the server's "
        "question_timeout), so the call ended. Call it again when the question can be answered.",
        code="INPUT_TIMEOUT",
    )


_RESULTS: Mapping[str, Any] = {
    "elicitation/create": types.ElicitResult,
    "sampling/createMessage": types.CreateMessageResult,
    "roots/list": types.ListRootsResult,
}


def elicit_request(message: str, schema: Any) -> tuple[types.ElicitRequest, TypeAdapter[Any] | None]:
    """The ``elicitation/create`` request for ``schema`` (a pydantic model, a TypedDict, or a JSON Schema dict)."""
    adapter: TypeAdapter[Any] | None = None
    if isinstance(schema, Mapping):
        requested = dict(schema)
    else:
        adapter = TypeAdapter(schema)
        requested = adapter.json_schema()
        requested.pop("title", None)
    if requested.get("type") != "object":
        raise TypeError(f"elicit() asks for an object: give a pydantic model or TypedDict, not {schema!r:.60}")
    params = types.ElicitRequestFormParams(message=message, requested_schema=requested)
    return types.ElicitRequest(params=params), adapter


def elicited(answer: Any, adapter: TypeAdapter[Any] | None) -> Elicited[Any]:
    result = answer if isinstance(answer, types.ElicitResult) else types.ElicitResult.model_validate(answer)
    if result.action != "accept":
        return Elicited(result.action)
    content = result.content or {}
    if adapter is not None:
        try:
            content = adapter.validate_python(content)
        except ValidationError as exc:
            problems = "; ".join(validation_problems(exc))
            raise ToolError(
                f"The answer does not fit what was asked ({problems}); ask again.", code="INVALID_ANSWER"
            ) from None
    return Elicited("accept", content)


def sample_request(
    messages: Sequence[str | types.SamplingMessage], max_tokens: int, system_prompt: str | None
) -> types.CreateMessageRequest:
    wire = [
        types.SamplingMessage(role="user", content=types.TextContent(type="text", text=m)) if isinstance(m, str) else m
        for m in messages
    ]
    params = types.CreateMessageRequestParams(messages=wire, max_tokens=max_tokens, system_prompt=system_prompt)
    return types.CreateMessageRequest(params=params)
