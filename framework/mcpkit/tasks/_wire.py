"""The tasks extension on the wire (SEP-2663): its identifier, the params of ``tasks/get``, ``tasks/update`` and
``tasks/cancel``, who may send them, and the errors that refuse them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeVar

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import decode_header_value, encode_header_value
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..base import client_group, validation_problems
from ..core import caller_of

__all__ = [
    "EXTENSION",
    "MODERN",
    "SentParams",
    "TaskParams",
    "UpdateTaskParams",
    "admitted",
    "checked_answer",
    "missing_extension",
    "negotiated",
    "owner_of",
]

#: The extension's identifier, under ``capabilities.extensions`` on both sides.
EXTENSION = "io.modelcontextprotocol/tasks"
#: The protocol revision the extension belongs to: no task is made, nor served, on an older one.
MODERN = "2026-07-28"


class TaskParams(types.RequestParams):
    """``tasks/get`` and ``tasks/cancel``: which task (``requestState`` is accepted and not used: mcpkit keeps a
    task's state on the server, so it never sends one)."""

    task_id: str = Field(alias="taskId", min_length=1, max_length=200)
    request_state: str | None = Field(default=None, alias="requestState")


class UpdateTaskParams(TaskParams):
    """``tasks/update``: answers to the questions the task asked, by their keys."""

    input_responses: dict[str, Any] = Field(alias="inputResponses")


class SentParams(types.RequestParams):
    """A ``tasks/*`` request's params as sent, for ``admitted`` to check: the SDK's own check of a params model
    refuses with 'Invalid request parameters' and no word of what is wrong."""

    model_config = ConfigDict(extra="allow")


_Params = TypeVar("_Params", bound=TaskParams)

#: What each model needs, said to a client that sent something else.
_NEEDS = {
    TaskParams: "params.taskId (the id the tools/call that started the task returned)",
    UpdateTaskParams: "params.taskId (the id the tools/call that started the task returned) and "
    "params.inputResponses (an object of answers by the keys of the task's inputRequests)",
}


def negotiated(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether this request's client declared the tasks extension (2026-07-28 only: each request declares its own)."""
    if ctx.protocol_version != MODERN:
        return False
    declared = ctx.session.client_capabilities
    extensions = None if declared is None else declared.extensions
    return bool(extensions) and EXTENSION in extensions  # type: ignore[operator]  # checked non-empty


def missing_extension(what: str, spoken: str = MODERN) -> MCPError:
    """``-32021``: ``what`` needs the tasks extension, which the client did not declare on this request (or, on an
    older protocol ``spoken``, cannot: it needs a client speaking 2026-07-28)."""
    data = types.MissingRequiredClientCapabilityErrorData(
        required_capabilities=types.ClientCapabilities(extensions={EXTENSION: {}})
    ).model_dump(by_alias=True, exclude_none=True)
    message = (
        f"{what} needs the client capability extensions[{EXTENSION!r}] (the tasks extension), which this request "
        "did not declare in _meta['io.modelcontextprotocol/clientCapabilities']."
        if spoken == MODERN
        else f"{what} runs only as a task, which needs a client speaking protocol {MODERN} with the tasks extension "
        f"({EXTENSION}); this session speaks {spoken}: connect with a client that does."
    )
    return MCPError(types.MISSING_REQUIRED_CLIENT_CAPABILITY, message, data=data)


def admitted(ctx: ServerRequestContext[Any, Any], method: str, sent: SentParams, model: type[_Params]) -> _Params:
    """``sent`` as ``model``, once ``method`` is for this server to serve. Refused, in this order: another protocol
    era (-32601), a client that did not declare the extension (-32021), params that are not ``model``'s (-32602,
    saying what is wrong), or an HTTP ``Mcp-Name`` header that is not the task id (-32020)."""
    if ctx.protocol_version != MODERN:
        raise MCPError(
            types.METHOD_NOT_FOUND,
            f"{method} belongs to the tasks extension of protocol {MODERN}; "
            f"this request speaks {ctx.protocol_version}.",
        )
    if not negotiated(ctx):
        raise missing_extension(method)
    try:
        params = model.model_validate(sent.model_dump(by_alias=True, exclude_unset=True))
    except ValidationError as exc:
        raise MCPError(
            types.INVALID_PARAMS, f"{method} needs {_NEEDS[model]}: {'; '.join(validation_problems(exc))}."
        ) from None
    if ctx.request is not None:
        named = decode_header_value(ctx.request.headers.get("mcp-name"))
        if named is None or named.strip() != params.task_id:
            problem = (
                f"This request has no Mcp-Name header, which on {method} repeats params.taskId"
                if named is None
                else f"The Mcp-Name header says {named[:100]!r} but params.taskId is {params.task_id!r}"
            )
            raise MCPError(
                types.HEADER_MISMATCH, f"{problem} (SEP-2663): send 'Mcp-Name: {encode_header_value(params.task_id)}'."
            )
    return params


def owner_of(ctx: ServerRequestContext[Any, Any]) -> str:
    """Whose tasks the caller of ``ctx`` sees and is counted for: a signed-in user's own (the identity remembered
    values are kept under, so a purge of the user takes them too); an anonymous caller's address (IPv6: its /64,
    behind a trusted proxy the client it names), so one anonymous client never fills the others' quota."""
    caller = caller_of(ctx)
    if caller.user_id is not None:
        return json.dumps(["u", caller.user_id])
    scope = getattr(ctx.request, "scope", None)
    client = scope.get("client") if isinstance(scope, dict) else None
    return json.dumps(["anon", client_group(client[0]) if client else "local"])


_ANSWERS: Mapping[str, type[BaseModel]] = {
    "elicitation/create": types.ElicitResult,
    "sampling/createMessage": types.CreateMessageResult,
    "roots/list": types.ListRootsResult,
}


def checked_answer(key: str, request: Mapping[str, Any], answer: Any) -> Any:
    """The answer to the question ``key`` in its wire form, or ``-32602`` naming what is wrong with it."""
    model = _ANSWERS.get(str(request.get("method")))
    if model is None:
        return answer
    try:
        return model.model_validate(answer).model_dump(mode="json", by_alias=True, exclude_none=True)
    except ValidationError as exc:
        raise MCPError(
            types.INVALID_PARAMS,
            f"inputResponses[{key!r}] is not an answer to {request.get('method')}: "
            f"{'; '.join(validation_problems(exc))}.",
        ) from None
