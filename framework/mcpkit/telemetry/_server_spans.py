"""``ServerSpans``: the SDK middleware that opens the one SERVER span of each MCP message per the MCP conventions
(it takes the place of the SDK's own, docs/observability.md says why), and records its duration."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server._otel import OpenTelemetryMiddleware  # replaced by ServerSpans; probed by a test
from mcp.shared.exceptions import MCPError
from opentelemetry import context, propagate, trace
from opentelemetry.context import Context
from opentelemetry.trace import SpanKind, StatusCode
from pydantic import ValidationError

from ..base import ERROR_META_KEY
from ._audit import CallNote, forget_call, noted_call
from ._telemetry import Telemetry

__all__ = ["ServerSpans", "install_server_spans", "tool_error_type"]

#: The era without sessions: its requests carry no ``Mcp-Session-Id``.
_STATELESS_ERA = "2026-07-28"
#: The error types whose method or tool name the client chose and the server does not have.
_METHOD_NOT_FOUND = str(types.METHOD_NOT_FOUND)
_UNKNOWN_TOOL = "UNKNOWN_TOOL"
#: How many attribute sets a ``ServerSpans`` keeps (each a method, a target, an era, an outcome: the same few come
#: back request after request); past it, it starts again, so made-up names sent by a client cannot fill memory.
_KEPT = 1024


class ServerSpans:
    """Wraps every inbound message: continues the client's trace and, in ``native`` mode, records the span and the
    ``mcp.server.operation.duration`` point (no-ops, and no attributes built, when no SDK records them)."""

    def __init__(self, telemetry: Telemetry) -> None:
        self._telemetry = telemetry
        self._tracer = telemetry.tracer
        self._duration = telemetry.instruments.operation_duration
        #: (method, target, era) -> a span's name and the attributes every such request's span carries.
        self._opened: dict[tuple[str, str | None, str], tuple[str, dict[str, str]]] = {}
        #: (method, target, era, error type) -> a duration point's attributes.
        self._points: dict[tuple[str, str | None, str, str | None], dict[str, str]] = {}

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        parent = _parent(ctx)
        if not self._telemetry.native:
            if parent is None:
                return await call_next(ctx)
            token = context.attach(parent)
            try:
                return await call_next(ctx)
            finally:
                context.detach(token)
        method = ctx.method
        target = _target(ctx)
        session = _session(ctx)
        if session is not None:
            self._telemetry.session_seen(session)
        error_type: str | None = None
        started = time.perf_counter()
        name, attributes = self._opening(ctx, target)
        # start_span and attach by hand: start_as_current_span's two context managers cost more than the span's
        # own work when no SDK records it.
        span = self._tracer.start_span(name, context=parent, kind=SpanKind.SERVER)
        recording = span.is_recording()
        if recording:  # one set_attributes: the SDK takes its lock and checks the attributes once per call
            if ctx.request_id is not None or session is not None:
                attributes = dict(attributes)
                if ctx.request_id is not None:
                    attributes["jsonrpc.request.id"] = str(ctx.request_id)
                if session is not None:
                    attributes["mcp.session.id"] = session
            span.set_attributes(attributes)
        token = context.attach(trace.set_span_in_context(span, parent))
        try:
            result = await call_next(ctx)
        except MCPError as exc:
            error_type = str(exc.error.code)
            raise
        except ValidationError:
            error_type = str(types.INVALID_PARAMS)
            raise
        except Exception as exc:
            error_type = type(exc).__qualname__
            raise
        else:
            if method == "tools/call":
                error_type = tool_error_type(result)
            return result
        finally:
            context.detach(token)
            if error_type is not None and recording:
                span.set_attribute("error.type", error_type)
                if error_type.lstrip("-").isdigit():
                    span.set_attribute("rpc.response.status_code", error_type)
                span.set_status(StatusCode.ERROR)  # no description: an exception's text may carry a value
            span.end()
            self._duration.record(time.perf_counter() - started, self._point(ctx, target, error_type))

    def _opening(self, ctx: ServerRequestContext[Any, Any], target: str | None) -> tuple[str, dict[str, str]]:
        """The span's name and the attributes every request of its method, target and era carries, made once."""
        opened = (ctx.method, target, ctx.protocol_version)
        found = self._opened.get(opened)
        if found is None:
            if len(self._opened) >= _KEPT:
                self._opened.clear()
            attributes = {"mcp.method.name": ctx.method, "mcp.protocol.version": ctx.protocol_version}
            if ctx.method == "tools/call":
                attributes["gen_ai.operation.name"] = "execute_tool"
                if target is not None:
                    attributes["gen_ai.tool.name"] = target
            elif ctx.method == "prompts/get" and target is not None:
                attributes["gen_ai.prompt.name"] = target
            found = self._opened[opened] = (f"{ctx.method} {target}" if target else ctx.method, attributes)
        if self._telemetry.resource_uris and ctx.params and ctx.method not in ("tools/call", "prompts/get"):
            uri = ctx.params.get("uri")
            if isinstance(uri, str):
                return found[0], {**found[1], "mcp.resource.uri": uri}
        return found

    def _point(self, ctx: ServerRequestContext[Any, Any], target: str | None, error_type: str | None) -> dict[str, str]:
        """A duration point's attributes (``_point``), made once per method, target, era and outcome."""
        pointed = (ctx.method, target, ctx.protocol_version, error_type)
        found = self._points.get(pointed)
        if found is None:
            if len(self._points) >= _KEPT:
                self._points.clear()
            found = self._points[pointed] = _point(ctx, target, error_type)
        return found


class _AuditedSpans(ServerSpans):
    """``ServerSpans`` that also note each call for the audit log (only a server with ``audit=...`` pays for it)."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        request_id = None if ctx.request_id is None else str(ctx.request_id)
        token = noted_call(CallNote(ctx.method, _target(ctx), request_id, _session(ctx)))
        try:
            if self._telemetry.mode == "off":
                return await call_next(ctx)
            return await super().__call__(ctx, call_next)
        finally:
            forget_call(token)


def install_server_spans(telemetry: Telemetry, middleware: list[Any]) -> None:
    """Put ``ServerSpans`` in the place of the SDK's own span middleware in ``middleware`` (``off``: neither, unless
    an audit log needs each call noted)."""
    middleware[:] = [layer for layer in middleware if not isinstance(layer, OpenTelemetryMiddleware)]
    if telemetry.audit is not None:
        middleware.insert(0, _AuditedSpans(telemetry))
    elif telemetry.mode != "off":
        middleware.insert(0, ServerSpans(telemetry))


def _point(ctx: ServerRequestContext[Any, Any], target: str | None, error_type: str | None) -> dict[str, str]:
    """A duration point's attributes, bounded by what the server offers: a method or tool the server does not have
    (the client's to choose) is ``_OTHER``, as the conventions have it, so no client can add series."""
    method = "_OTHER" if error_type == _METHOD_NOT_FOUND else ctx.method
    point = {"mcp.method.name": method, "mcp.protocol.version": ctx.protocol_version}
    if target is not None and method == "tools/call":
        point["gen_ai.tool.name"] = "_OTHER" if error_type == _UNKNOWN_TOOL else target
    if error_type is not None:
        point["error.type"] = error_type
    return point


def _target(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The tool or prompt a message names (never a resource URI: those may name a person)."""
    if ctx.method not in ("tools/call", "prompts/get") or not ctx.params:
        return None
    name = ctx.params.get("name")
    return name if isinstance(name, str) and len(name) <= 128 else None


def _session(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The ``Mcp-Session-Id`` of a 2025-11-25 request over HTTP (stdio and 2026-07-28 have none)."""
    request = ctx.request
    if request is None or ctx.protocol_version == _STATELESS_ERA:
        return None
    headers = getattr(request, "headers", None)
    session = headers.get("mcp-session-id") if headers is not None else None
    return session if isinstance(session, str) else None


def _parent(ctx: ServerRequestContext[Any, Any]) -> Context | None:
    """The client's trace context: ``traceparent``/``tracestate`` in ``params._meta``, else in the HTTP headers."""
    found = _extracted(ctx.meta)
    if found is None and ctx.request is not None:
        headers = getattr(ctx.request, "headers", None)
        if headers is not None and "traceparent" in headers:
            found = _extracted(headers)
    return found


def _extracted(carrier: Mapping[str, Any] | None) -> Context | None:
    if not carrier or "traceparent" not in carrier:
        return None
    try:
        found = propagate.extract(carrier)
    except (ValueError, TypeError):
        return None
    return found if trace.get_current_span(found).get_span_context().is_valid else None


def tool_error_type(result: object) -> str | None:
    """The ``error.type`` of a ``tools/call`` result: mcpkit's error code when it is an ``isError`` result."""
    if isinstance(result, types.CallToolResult):
        failed, meta = result.is_error, result.meta
    elif isinstance(result, Mapping):
        failed, meta = result.get("isError") is True, result.get("_meta")
    else:
        return None
    if not failed:
        return None
    error = meta.get(ERROR_META_KEY) if isinstance(meta, Mapping) else None
    code = error.get("code") if isinstance(error, Mapping) else None
    return code if isinstance(code, str) and code.isupper() and len(code) <= 64 else "tool_error"
