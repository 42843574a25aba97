"""A failing request's span and duration say why it failed (issue 38): a tool error by mcpkit's error code, an
unknown tool and a protocol error by their JSON-RPC code, a request refused at admission by ``TOO_MANY_CALLS``
(and counted); no exception text on any span."""

from __future__ import annotations

import asyncio
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from core._support import ACCEPT, LEGACY, body_of, call_modern, open_legacy_session, running
from mcpkit import Server, ToolContext, ToolError, app, tool
from telemetry.recording import PROVIDER

HELD = asyncio.Event()
RELEASE = asyncio.Event()


@tool(name="fail", description="Always fails, as a tool.")
class Fail(ToolContext):
    async def execute(self) -> str:
        raise ToolError("The desk is closed.", code="DESK_CLOSED")


@tool(name="crash", description="Always crashes with a message that must never be recorded.")
class Crash(ToolContext):
    async def execute(self) -> str:
        raise RuntimeError("crash-marker-5150")


@tool(name="hold", description="Holds its caller's slot until the test lets it go.")
class Hold(ToolContext):
    async def execute(self) -> str:
        HELD.set()
        await RELEASE.wait()
        return "let go"


@app(id="desk", tools=[Fail, Crash, Hold])
class Desk:
    """Tools that fail in each way."""


def desk(reader: InMemoryMetricReader) -> Server:
    meters = MeterProvider(metric_readers=[reader])
    return Server([Desk], allow_anonymous=True, tracer_provider=PROVIDER, meter_provider=meters)


def server_span(spans: InMemorySpanExporter, name: str) -> ReadableSpan:
    [span] = [span for span in spans.get_finished_spans() if span.kind is SpanKind.SERVER and span.name == name]
    return span


def points(reader: InMemoryMetricReader, metric: str) -> list[Any]:
    data = reader.get_metrics_data()
    assert data is not None
    found = [
        point
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for each in scope.metrics
        if each.name == metric
        for point in each.data.data_points
    ]
    return found


async def test_a_tool_error_is_recorded_by_its_code(spans: InMemorySpanExporter) -> None:
    reader = InMemoryMetricReader()
    async with running(desk(reader).http_app()) as http:
        result = body_of(await call_modern(http, "fail"))["result"]
    assert result["isError"] is True
    span = server_span(spans, "tools/call fail")
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description is None
    assert (span.attributes or {})["error.type"] == "DESK_CLOSED"
    [point] = points(reader, "mcp.server.operation.duration")
    assert dict(point.attributes) == {
        "mcp.method.name": "tools/call",
        "mcp.protocol.version": "2026-07-28",
        "gen_ai.tool.name": "fail",
        "error.type": "DESK_CLOSED",
    }
    assert point.count == 1


async def test_a_crash_is_recorded_by_its_code_and_never_by_its_text(spans: InMemorySpanExporter) -> None:
    reader = InMemoryMetricReader()
    async with running(desk(reader).http_app()) as http:
        result = body_of(await call_modern(http, "crash"))["result"]
    code = result["_meta"]["mcpkit/error"]["code"]
    span = server_span(spans, "tools/call crash")
    assert (span.attributes or {})["error.type"] == code
    assert "crash-marker-5150" not in repr(span.to_json())


async def test_an_unknown_tool_is_recorded_by_its_code(spans: InMemorySpanExporter) -> None:
    reader = InMemoryMetricReader()
    async with running(desk(reader).http_app()) as http:
        answer = body_of(await call_modern(http, "no_such_tool"))
    expected = str(answer["error"]["code"]) if "error" in answer else answer["result"]["_meta"]["mcpkit/error"]["code"]
    span = server_span(spans, "tools/call no_such_tool")
    assert span.status.status_code is StatusCode.ERROR
    assert (span.attributes or {})["error.type"] == expected
    [point] = points(reader, "mcp.server.operation.duration")
    assert point.attributes["error.type"] == expected
    assert point.attributes["gen_ai.tool.name"] == "_OTHER"  # a name the client chose adds no series


async def test_an_unknown_method_is_recorded_as_other_on_the_metric(spans: InMemorySpanExporter) -> None:
    reader = InMemoryMetricReader()
    async with running(desk(reader).http_app()) as http:
        session = await open_legacy_session(http)
        message = {"jsonrpc": "2.0", "id": 5, "method": "no/such-method-4711", "params": {}}
        headers = {**ACCEPT, "Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY}
        answer = body_of(await http.post("/mcp", json=message, headers=headers))
    assert answer["error"]["code"] == -32601
    methods = {point.attributes["mcp.method.name"] for point in points(reader, "mcp.server.operation.duration")}
    assert "_OTHER" in methods
    assert not any("4711" in method for method in methods)


async def test_a_refused_request_is_counted_and_has_an_error_span(spans: InMemorySpanExporter) -> None:
    HELD.clear()
    RELEASE.clear()
    reader = InMemoryMetricReader()
    async with running(desk(reader).http_app(calls_per_caller=1)) as http:
        holding = asyncio.create_task(call_modern(http, "hold"))
        await asyncio.wait_for(HELD.wait(), 10)
        refused = await call_modern(http, "fail")
        RELEASE.set()
        assert (await holding).status_code == 200
    assert refused.status_code == 429
    span = server_span(spans, "tools/call")
    assert span.status.status_code is StatusCode.ERROR
    assert (span.attributes or {})["error.type"] == "TOO_MANY_CALLS"
    [point] = points(reader, "mcpkit.admission.refusals")
    assert dict(point.attributes) == {"mcpkit.refusal.reason": "TOO_MANY_CALLS"}
    assert point.value == 1
