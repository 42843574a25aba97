"""The call path: who is calling, validate the input, run plugins and the tool, map every failure."""

from __future__ import annotations

import functools
import logging
import math
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import mcp_types as types
from mcp.server import ServerRequestContext
from pydantic import ValidationError

from ..auth import missing_scopes
from ..base import (
    IDENTITY_SCOPE_KEY,
    PAGE_SIZE,
    Clock,
    Identity,
    ToolError,
    caller_key,
    client_group,
    error_result,
    page,
    validation_problems,
)
from ..core import DEFAULT_TURN_TIMEOUT, CallState, Context, Plugin, TaskProgress, ToolContext, caller_of, providers_for
from ..elicitation import Answers, InputNeeded
from ..http import LONE_SURROGATES_SCOPE_KEY, lone_surrogate_problems
from ..subscriptions import Services, switched
from ..ui import declares_ui, plain_tools
from ._capabilities import missing_capabilities
from ._rate_limits import RateLimit, RateLimiter
from ._schema_input import SchemaInputError
from ._shared_rate_limits import SharedRateLimiter
from ._threads import ToolThreads
from ._tool_spec import ToolSpec

__all__ = ["BoundTool", "Dispatcher", "TaskOffer"]

logger = logging.getLogger("mcpkit")


@dataclass(frozen=True, slots=True)
class BoundTool:
    """A tool spec with the plugins that wrap it (outermost first) and which hooks each overrides."""

    spec: ToolSpec
    providers: Mapping[str, Callable[[Context], object]]
    plugins: tuple[Plugin, ...]
    before: tuple[bool, ...]
    after: tuple[bool, ...]
    on_error: tuple[bool, ...]
    hooked: bool

    @classmethod
    def bind(cls, spec: ToolSpec, plugins: Sequence[Plugin]) -> BoundTool:
        providers = providers_for(spec.cls, plugins, f"tool {spec.name!r}")
        before = tuple(_overrides(p, "before_call") for p in plugins)
        after = tuple(_overrides(p, "after_call") for p in plugins)
        on_error = tuple(_overrides(p, "on_error") for p in plugins)
        return cls(spec, providers, tuple(plugins), before, after, on_error, any(before + after + on_error))


class TaskOffer(Protocol):
    """Where a call of a ``@tool(task=...)`` tool may become a task (``mcpkit.tasks``): the answer to send instead
    of running the tool in the request, or None to run it here; and whether a request's client can run tasks at all
    (a ``task="required"`` tool is listed only to those)."""

    def negotiated(self, ctx: ServerRequestContext[Any, Any]) -> bool: ...

    async def offer(
        self,
        bound: BoundTool,
        instance: ToolContext,
        state: CallState,
        arguments: Mapping[str, Any],
        kwargs: dict[str, Any],
    ) -> Any: ...


def _overrides(plugin: Plugin, hook: str) -> bool:
    return getattr(type(plugin), hook) is not getattr(Plugin, hook)


class Dispatcher:
    """Serves ``tools/list`` and ``tools/call`` for one server."""

    def __init__(
        self,
        tools: Mapping[str, BoundTool],
        clock: Callable[[], Clock],
        *,
        list_permitted_only: bool = False,
        rate_limit: RateLimit | None = None,
        shared_limits: SharedRateLimiter | None = None,
        services: Services | None = None,
        threads: ToolThreads | None = None,
    ) -> None:
        self._every = dict(tools)  # declared, in order; ``_tools`` holds the enabled ones
        self._tools = {name: bound for name, bound in tools.items() if bound.spec.enabled}
        self._services = services
        self._clock = clock
        # Rate limits: the server's, over every tool, and each tool's own; None when there are none at all.
        # Counted in this process, or in Redis for every instance (``shared_limits``).
        self._rate_limit = rate_limit
        limited = rate_limit is not None or any(
            bound.spec.rate_limit or bound.spec.mount_limits for bound in self._every.values()
        )
        self._limiter: RateLimiter | SharedRateLimiter | None = (
            None if not limited else shared_limits if shared_limits is not None else RateLimiter()
        )
        self._listing, self._untasked = _listings(self._tools)
        # With list_permitted_only, a caller is not shown the tools whose OAuth scopes its token lacks.
        self._scoped = list_permitted_only and any(bound.spec.scopes for bound in self._every.values())
        # A host that renders no MCP Apps views is shown the tools without them (``mcpkit.ui.plain_tools``).
        self._with_ui = any(bound.spec.ui is not None for bound in self._every.values())
        #: Where calls of task tools go first (set by the server when it serves tasks).
        self.tasks: TaskOffer | None = None
        self._threads = threads or ToolThreads(DEFAULT_TURN_TIMEOUT)

    def bound(self, name: str) -> BoundTool | None:
        """The tool called ``name``, declared and enabled, or None."""
        return self._tools.get(name)

    def names(self) -> tuple[str, ...]:
        """Every declared tool, enabled or not."""
        return tuple(self._every)

    def enabled_names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def switch(self, names: Iterable[str], enabled: bool) -> bool:
        """Enable or disable declared tools (``Server.enable``/``disable``); whether the list changed."""
        on = switched(self._tools, names, enabled)
        if on is None:
            return False
        self._tools = {name: bound for name, bound in self._every.items() if name in on}
        self._listing, self._untasked = _listings(self._tools)
        return True

    def input_schema(self, name: str) -> Mapping[str, Any] | None:
        bound = self._tools.get(name)
        return None if bound is None else bound.spec.input_schema

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        cursor = params.cursor if params is not None else None
        if self._services is not None:
            self._services.list_changes.listed("tools", ctx)
        listing = self._listing
        if self._untasked is not None and (self.tasks is None or not self.tasks.negotiated(ctx)):
            listing = self._untasked  # a task="required" tool is offered only to a client that can run it
        if self._with_ui and not declares_ui(ctx.session.client_capabilities):
            listing = types.ListToolsResult(tools=plain_tools(listing.tools))
        if not self._scoped or ctx.request is None:  # stdio is not limited by scope
            if cursor is None and len(listing.tools) <= PAGE_SIZE:
                return listing  # built once: most servers list fewer tools than a page
            listed = listing.tools
        else:
            identity = ctx.request.scope.get(IDENTITY_SCOPE_KEY)
            listed = [
                tool for tool in listing.tools if not missing_scopes(self._tools[tool.name].spec.scopes, identity)
            ]
        tools, next_cursor = page(listed, cursor, "tools")
        return types.ListToolsResult(tools=tools, next_cursor=next_cursor)

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        bound = self._tools.get(params.name)
        if bound is None:
            return error_result(
                "UNKNOWN_TOOL", f"There is no tool named {params.name!r}; call tools/list to see the tools offered."
            )
        spec = bound.spec
        if spec.scopes and ctx.request is not None:
            lacking = missing_scopes(spec.scopes, ctx.request.scope.get(IDENTITY_SCOPE_KEY))
            if lacking:  # the HTTP gate answers 403 first; this holds wherever the gate could not see the tool
                return error_result(
                    "INSUFFICIENT_SCOPE",
                    f"Calling {spec.name!r} needs the OAuth scope(s) {' '.join(sorted(lacking))}, which the caller's "
                    "token does not grant: sign in again asking for them.",
                )
        if spec.requires:
            missing = missing_capabilities(spec.requires, ctx.session.client_capabilities, spec.name)
            if missing is not None:
                raise missing
        if self._limiter is not None and ctx.request is not None:
            refused = await self._over_limit(ctx.request, spec)
            if refused is not None:
                return refused
        arguments = params.arguments or {}
        if ctx.request is not None and LONE_SURROGATES_SCOPE_KEY in ctx.request.scope:
            places = ctx.request.scope[LONE_SURROGATES_SCOPE_KEY]
            return error_result("INVALID_INPUT", _invalid(spec.name, lone_surrogate_problems(places)))
        try:
            validated = spec.input_model.model_validate(arguments)
            state = CallState(ctx, self._services, params)
            instance = spec.cls(caller_of(ctx), self._clock(), spec.declared_name, spec.app_id, bound.providers, state)
        except ValidationError as exc:
            return error_result("INVALID_INPUT", _describe(spec.name, exc))
        except SchemaInputError as exc:  # a hand-written input_schema, checked with jsonschema
            return error_result("INVALID_INPUT", _invalid(spec.name, exc.problems))
        except Exception:
            return _internal_error(spec.name)
        if spec.task is not None and self.tasks is not None:
            offered = await self.tasks.offer(bound, instance, state, arguments, validated.__dict__)
            if offered is not None:
                return offered  # type: ignore[no-any-return]  # a task's answer, in its wire form
        if not bound.hooked:
            try:
                return spec.output.convert(await self._execute(spec, instance, validated.__dict__))
            except ToolError as exc:
                return error_result(exc.code, exc.message)
            except InputNeeded as needed:  # 2026-07-28: the client answers, then calls again
                return needed.result()
            except Exception:
                return _internal_error(spec.name)
        return await self._call_wrapped(bound, instance, arguments, validated.__dict__)

    async def _execute(self, spec: ToolSpec, instance: ToolContext, kwargs: dict[str, Any]) -> Any:
        if spec.is_async:
            return await instance.execute(**kwargs)
        ctx = instance.request_context
        request = None if ctx is None else ctx.request
        caller = "local" if request is None else caller_key(request.scope)
        return await self._threads.run(caller, functools.partial(instance.execute, **kwargs))

    def instance(
        self, bound: BoundTool, ctx: ServerRequestContext[Any, Any], answers: Answers, progress: TaskProgress
    ) -> ToolContext:
        """A fresh instance of ``bound``'s class for a task's run started by ``ctx``, with the answers the task was
        given and where its progress goes."""
        spec = bound.spec
        state = CallState(ctx, self._services, None, answers, progress)
        return spec.cls(caller_of(ctx), self._clock(), spec.declared_name, spec.app_id, bound.providers, state)

    async def run(
        self, bound: BoundTool, instance: ToolContext, arguments: Mapping[str, Any], kwargs: dict[str, Any]
    ) -> types.CallToolResult | types.InputRequiredResult:
        """Run the plugins' hooks and ``execute`` as a call does, for a task: a ``ToolError`` is an error result, a
        question an ``InputRequiredResult``; any other exception is raised, after the plugins' ``on_error``."""
        return await self._call_wrapped(bound, instance, arguments, kwargs, crash=True)

    async def close(self) -> None:
        """Let go of the shared rate limits' Redis connections (the server stops serving)."""
        if isinstance(self._limiter, SharedRateLimiter):
            await self._limiter.aclose()

    async def _over_limit(self, request: Any, spec: ToolSpec) -> types.CallToolResult | None:
        """RATE_LIMITED when the caller has used up the server's or this tool's rate limit (stdio is not limited)."""
        assert self._limiter is not None
        identity: Identity | None = request.scope.get(IDENTITY_SCOPE_KEY)
        client = request.client
        who = (
            ("user", identity.user_id)
            if identity is not None
            else ("address", client_group(client.host if client else ""))
        )
        wanted = [((who, ""), self._rate_limit)] if self._rate_limit is not None else []
        wanted.extend(((who, "mount:" + path), limit) for path, limit in spec.mount_limits)
        if spec.rate_limit is not None:
            wanted.append(((who, spec.name), spec.rate_limit))
        now = self._clock().monotonic()
        if isinstance(self._limiter, SharedRateLimiter):
            wait, refusing = await self._limiter.take(wanted, now)
        else:
            wait, refusing = self._limiter.take(wanted, now)
        if refusing < 0:
            return None
        (_, bucket), limit = wanted[refusing]
        what = repr(spec.name) if bucket else "calls to this server"
        if bucket.startswith("mount:"):
            what = f"calls to the tools mounted as {bucket[6:]!r}"
        seconds = math.ceil(wait * 10) / 10
        return error_result(
            "RATE_LIMITED",
            f"Too many {what} from this caller (at most {limit}); retry in {seconds:g} s.",
            retry_after_seconds=seconds,
        )

    async def _call_wrapped(
        self,
        bound: BoundTool,
        instance: ToolContext,
        arguments: Mapping[str, Any],
        kwargs: dict[str, Any],
        *,
        crash: bool = False,
    ) -> types.CallToolResult | types.InputRequiredResult:
        """Run the plugins' hooks around ``execute``; an error is told to the plugins still wrapping the call."""
        plugins = bound.plugins
        inside = 0  # plugins[:inside] have run before_call and not yet after_call
        try:
            for index, plugin in enumerate(plugins):
                if bound.before[index]:
                    await plugin.before_call(instance, arguments)
                inside = index + 1
            value = await self._execute(bound.spec, instance, kwargs)
            for index in range(len(plugins) - 1, -1, -1):
                inside = index
                if bound.after[index]:
                    value = await plugins[index].after_call(instance, value)
            return bound.spec.output.convert(value)
        except InputNeeded as needed:  # not a failure: the round ends with a question
            return needed.result()
        except Exception as exc:
            for index in range(inside - 1, -1, -1):
                if bound.on_error[index]:
                    try:
                        await plugins[index].on_error(instance, exc)
                    except Exception:
                        logger.exception("plugin %s failed in on_error", plugins[index].plugin_name)
            if isinstance(exc, ToolError):
                return error_result(exc.code, exc.message)
            if crash:
                raise
            return _internal_error(bound.spec.name)


def _listings(tools: Mapping[str, BoundTool]) -> tuple[types.ListToolsResult, types.ListToolsResult | None]:
    """The ``tools/list`` answer, and the one for clients that cannot run tasks (None when every tool would be in
    it: no enabled tool is ``task="required"``)."""
    listing = types.ListToolsResult(tools=[bound.spec.wire for bound in tools.values()])
    if all(bound.spec.task != "required" for bound in tools.values()):
        return listing, None
    return listing, types.ListToolsResult(
        tools=[bound.spec.wire for bound in tools.values() if bound.spec.task != "required"]
    )


def _internal_error(tool_name: str) -> types.CallToolResult:
    """Log the exception being handled under a short id; tell the client only the id."""
    error_id = uuid.uuid4().hex[:12]
    logger.exception("tool %r raised an unexpected exception [error id %s]", tool_name, error_id)
    return error_result(
        "INTERNAL_ERROR",
        f"The tool {tool_name!r} failed on the server (error id {error_id}); the server log has the details.",
    )


def _describe(tool_name: str, exc: ValidationError) -> str:
    return _invalid(tool_name, validation_problems(exc))


def _invalid(tool_name: str, problems: Sequence[str]) -> str:
    return f"Invalid input for tool {tool_name!r}: {'; '.join(problems)}. Fix the arguments and call again."
