"""The call path: who is calling, validate the input, run plugins and the tool, map every failure."""

from __future__ import annotations

import functools
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import mcp_types as types
from mcp.server import ServerRequestContext
from pydantic import ValidationError

from ._caller import STATELESS_PROTOCOL, Caller
from ._clock import Clock
from ._context import ToolContext
from ._credentials import Identity
from ._errors import ToolError
from ._gate import IDENTITY_SCOPE_KEY
from ._plugin import Plugin
from ._results import error_result
from ._tool_spec import ToolSpec

__all__ = ["BoundTool", "Dispatcher", "LocalConnection", "local_connection"]

logger = logging.getLogger("mcpkit")

_ANON_NAMESPACE = uuid.UUID("0b4f3c8e-6a43-4c36-9b1e-2d2f6f3f7a10")


@dataclass(frozen=True, slots=True)
class LocalConnection:
    """A stdio connection: one local person (or nobody) and one session for its lifetime."""

    identity: Identity | None
    session_id: str


#: Set while serving stdio; HTTP requests carry their caller in the ASGI scope instead.
local_connection: ContextVar[LocalConnection | None] = ContextVar("mcpkit_local_connection", default=None)


@dataclass(frozen=True, slots=True)
class BoundTool:
    """A tool spec with the plugins that wrap it, their hooks picked out once."""

    spec: ToolSpec
    providers: Mapping[str, Callable[[ToolContext], object]]
    before: tuple[Plugin, ...]
    after: tuple[Plugin, ...]
    on_error: tuple[Plugin, ...]

    @classmethod
    def bind(cls, spec: ToolSpec, plugins: Sequence[Plugin]) -> BoundTool:
        providers: dict[str, Callable[[ToolContext], object]] = {}
        for plugin in plugins:
            providers.update(plugin.attributes())
        return cls(
            spec=spec,
            providers=providers,
            before=tuple(p for p in plugins if _overrides(p, "before_call")),
            after=tuple(p for p in reversed(plugins) if _overrides(p, "after_call")),
            on_error=tuple(p for p in reversed(plugins) if _overrides(p, "on_error")),
        )


def _overrides(plugin: Plugin, hook: str) -> bool:
    return getattr(type(plugin), hook) is not getattr(Plugin, hook)


class Dispatcher:
    """Serves ``tools/list`` and ``tools/call`` for one server."""

    def __init__(self, tools: Mapping[str, BoundTool], clock: Callable[[], Clock]) -> None:
        self._tools = dict(tools)
        self._clock = clock
        self._listing = types.ListToolsResult(tools=[bound.spec.wire for bound in self._tools.values()])

    def input_schema(self, name: str) -> Mapping[str, Any] | None:
        bound = self._tools.get(name)
        return None if bound is None else bound.spec.input_schema

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return self._listing

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        bound = self._tools.get(params.name)
        if bound is None:
            return error_result(
                "UNKNOWN_TOOL", f"There is no tool named {params.name!r}; call tools/list to see the tools offered."
            )
        spec = bound.spec
        arguments = params.arguments or {}
        try:
            validated = spec.input_model.model_validate(arguments)
        except ValidationError as exc:
            return error_result("INVALID_INPUT", _describe(spec.name, exc))
        instance = spec.cls(_caller(ctx), self._clock(), spec.name, spec.app_id, bound.providers)
        try:
            for plugin in bound.before:
                await plugin.before_call(instance, arguments)
            kwargs = validated.__dict__
            if spec.is_async:
                value = await instance.execute(**kwargs)
            else:
                value = await anyio.to_thread.run_sync(functools.partial(instance.execute, **kwargs))
            for plugin in bound.after:
                value = await plugin.after_call(instance, value)
            return spec.output.convert(value)
        except Exception as exc:
            for plugin in bound.on_error:
                try:
                    await plugin.on_error(instance, exc)
                except Exception:
                    logger.exception("plugin %s failed in on_error for tool %r", plugin.plugin_name, spec.name)
            if isinstance(exc, ToolError):
                return error_result(exc.code, exc.message)
            error_id = uuid.uuid4().hex[:12]
            logger.exception("tool %r raised an unexpected exception [error id %s]", spec.name, error_id)
            return error_result(
                "INTERNAL_ERROR",
                f"The tool {spec.name!r} failed on the server (error id {error_id}); the server log has the details.",
            )


def _caller(ctx: ServerRequestContext[Any, Any]) -> Caller:
    version = ctx.protocol_version
    request = ctx.request
    identity: Identity | None
    session_id: str | None
    if request is not None:
        identity = request.scope.get(IDENTITY_SCOPE_KEY)
        session_id = None if version == STATELESS_PROTOCOL else request.headers.get("mcp-session-id")
    else:
        local = local_connection.get()
        identity = local.identity if local is not None else None
        session_id = local.session_id if local is not None else None
    if session_id is not None:
        anonymous_id = f"anon:{uuid.uuid5(_ANON_NAMESPACE, session_id).hex}"
    else:
        anonymous_id = f"anon:{uuid.uuid4().hex}"
    if identity is None:
        return Caller(None, "anonymous", None, {}, session_id, version, anonymous_id)
    return Caller(identity.user_id, identity.kind, identity.label, identity.claims, session_id, version, anonymous_id)


def _describe(tool_name: str, exc: ValidationError) -> str:
    problems = []
    for error in exc.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in error["loc"]) or "(arguments)"
        problems.append(f"{where}: {error['msg']}")
    return f"Invalid input for tool {tool_name!r}: {'; '.join(problems)}. Fix the arguments and call again."
