"""The client's trace continues in the server (issue 38): a ``traceparent`` the official client puts in
``params._meta`` (or, without one, an HTTP ``traceparent`` header) parents the server's span, in both eras; and the
server's own requests to the client (sampling, elicitation, roots) carry the trace on in their ``params._meta``."""

from __future__ import annotations

from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from core._support import LEGACY, MODERN, URL, official_client, post_modern, running
from mcpkit.testing._transport import StreamingASGITransport
from telemetry.recording import PROVIDER
from telemetry.test_server_spans import everything

AGENT = PROVIDER.get_tracer("agent")


def named(spans: InMemorySpanExporter, name: str, kind: SpanKind) -> ReadableSpan:
    [span] = [span for span in spans.get_finished_spans() if span.name == name and span.kind is kind]
    return span


@pytest.mark.parametrize("protocol", [MODERN, LEGACY])
async def test_a_trace_the_official_client_starts_continues_in_the_server(
    protocol: str, spans: InMemorySpanExporter
) -> None:
    asgi = everything().http_app()
    async with asgi.router.lifespan_context(asgi), official_client(asgi, protocol) as client:
        with AGENT.start_as_current_span("agent turn") as turn:
            result = await client.call_tool("test_simple_text", {})
    assert not result.is_error
    sent = named(spans, "MCP send tools/call test_simple_text", SpanKind.CLIENT)
    served = named(spans, "tools/call test_simple_text", SpanKind.SERVER)
    assert sent.context.trace_id == served.context.trace_id == turn.get_span_context().trace_id
    assert served.parent is not None
    assert served.parent.span_id == sent.context.span_id
    assert served.parent.is_remote


async def test_without_meta_the_http_traceparent_header_parents_the_span(spans: InMemorySpanExporter) -> None:
    trace_id, parent_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    async with running(everything().http_app()) as http:
        await post_modern(
            http,
            "tools/call",
            {"name": "test_simple_text", "arguments": {}},
            name="test_simple_text",
            headers={"traceparent": f"00-{trace_id}-{parent_id}-01"},
        )
    served = named(spans, "tools/call test_simple_text", SpanKind.SERVER)
    assert served.context.trace_id == int(trace_id, 16)
    assert served.parent is not None
    assert served.parent.span_id == int(parent_id, 16)


@pytest.mark.parametrize("mode", ["native", "propagation"])
async def test_the_servers_own_request_to_the_client_carries_the_trace_on(
    mode: str, spans: InMemorySpanExporter
) -> None:
    seen: list[dict[str, Any]] = []

    async def sample(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        seen.append(dict(params.meta or {}))
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="hi"), model="m")

    asgi = everything(telemetry=mode).http_app()
    async with asgi.router.lifespan_context(asgi):
        http = httpx2.AsyncClient(transport=StreamingASGITransport(asgi), timeout=30)  # questions live
        async with (
            http,
            Client(streamable_http_client(URL, http_client=http), mode="legacy", sampling_callback=sample) as client,
        ):
            with AGENT.start_as_current_span("agent turn") as turn:
                result = await client.call_tool("test_sampling", {"prompt": "Say hi"})
    assert not result.is_error, result
    asked = named(spans, "MCP send sampling/createMessage", SpanKind.CLIENT)
    assert asked.parent is not None
    if mode == "native":  # under the server's span
        assert asked.parent.span_id == named(spans, "tools/call test_sampling", SpanKind.SERVER).context.span_id
    else:  # no server span: straight under the client's, whose context the server made current
        assert (
            asked.parent.span_id == named(spans, "MCP send tools/call test_sampling", SpanKind.CLIENT).context.span_id
        )
    [meta] = seen
    _, trace_id, parent_id, _ = meta["traceparent"].split("-")
    assert int(trace_id, 16) == turn.get_span_context().trace_id
    assert int(parent_id, 16) == asked.context.span_id
