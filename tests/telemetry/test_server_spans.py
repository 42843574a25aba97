"""Every MCP method the conformance server answers gets one SERVER span per the MCP semantic conventions, in both
eras (issue 38): named ``{mcp.method.name} {target}``, with the method, the era, the request id, the session (a
2025-11-25 session only), the tool or prompt name, and never a resource URI unless the app opts in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx2
import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from conformance.server import EverythingApp
from core._support import ACCEPT, LEGACY, MODERN, body_of, open_legacy_session, post_modern, running
from mcpkit import ConfigurationError, Server
from tasks.support import Caller, serving
from telemetry.recording import PROVIDER

#: (method, params, target) the walk sends in both eras: every request method the conformance server answers.
WALK: list[tuple[str, dict[str, Any], str | None]] = [
    ("tools/list", {}, None),
    ("tools/call", {"name": "test_simple_text", "arguments": {}}, "test_simple_text"),
    ("resources/list", {}, None),
    ("resources/templates/list", {}, None),
    ("resources/read", {"uri": "test://static-text"}, None),
    ("prompts/list", {}, None),
    ("prompts/get", {"name": "test_simple_prompt"}, "test_simple_prompt"),
    (
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
            "argument": {"name": "arg1", "value": ""},
        },
        None,
    ),
]
#: Methods of one era only.
LEGACY_ONLY: list[tuple[str, dict[str, Any], str | None]] = [
    ("ping", {}, None),
    ("resources/subscribe", {"uri": "test://watched-resource"}, None),
    ("resources/unsubscribe", {"uri": "test://watched-resource"}, None),
    ("logging/setLevel", {"level": "info"}, None),
]
MODERN_ONLY: list[tuple[str, dict[str, Any], str | None]] = [("server/discover", {}, None)]


def everything(reader: InMemoryMetricReader | None = None, **options: Any) -> Server:
    meters = MeterProvider(metric_readers=[reader]) if reader is not None else None
    return Server(
        [EverythingApp],
        name="mcpkit-conformance",
        allow_anonymous=True,
        tracer_provider=PROVIDER,
        meter_provider=meters,
        **options,
    )


def server_spans(spans: InMemorySpanExporter) -> list[ReadableSpan]:
    return [span for span in spans.get_finished_spans() if span.kind is SpanKind.SERVER]


async def post_legacy(
    http: httpx2.AsyncClient, session: str, method: str, params: Mapping[str, Any], request_id: int
) -> httpx2.Response:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(params)}
    headers = {**ACCEPT, "Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY}
    return await http.post("/mcp", json=message, headers=headers)


def assert_conformant(
    span: ReadableSpan, method: str, target: str | None, era: str, session: str | None, request_id: str | None
) -> None:
    attributes = dict(span.attributes or {})
    assert span.name == (f"{method} {target}" if target else method)
    assert span.kind is SpanKind.SERVER
    assert attributes["mcp.method.name"] == method
    assert attributes["mcp.protocol.version"] == era
    assert attributes.get("jsonrpc.request.id") == request_id
    assert attributes.get("mcp.session.id") == session
    assert attributes.get("gen_ai.tool.name") == (target if method == "tools/call" else None)
    assert attributes.get("gen_ai.prompt.name") == (target if method == "prompts/get" else None)
    assert "mcp.resource.uri" not in attributes
    assert span.status.status_code is not StatusCode.ERROR, (span.name, attributes)


async def test_every_method_has_a_conformant_span_in_the_2026_era(spans: InMemorySpanExporter) -> None:
    async with running(everything().http_app()) as http:
        for method, params, target in WALK + MODERN_ONLY:
            spans.clear()
            response = await post_modern(http, method, params, name=target or params.get("uri"))
            assert "error" not in body_of(response), (method, response.text)
            [span] = server_spans(spans)
            assert_conformant(span, method, target, MODERN, None, "1")


async def test_every_method_has_a_conformant_span_in_the_2025_era(spans: InMemorySpanExporter) -> None:
    async with running(everything().http_app()) as http:
        session = await open_legacy_session(http)
        for request_id, (method, params, target) in enumerate(WALK + LEGACY_ONLY, start=1):
            response = await post_legacy(http, session, method, params, request_id)
            assert "error" not in body_of(response), (method, response.text)
            [span] = [span for span in server_spans(spans) if span.attributes["mcp.method.name"] == method]
            assert_conformant(span, method, target, LEGACY, session, str(request_id))
    [initialize] = [span for span in server_spans(spans) if span.name == "initialize"]
    assert_conformant(initialize, "initialize", None, LEGACY, None, "0")  # the session is minted by its answer
    [initialized] = [span for span in server_spans(spans) if span.name == "notifications/initialized"]
    assert_conformant(initialized, "notifications/initialized", None, LEGACY, session, None)


async def test_a_resource_uri_is_recorded_only_when_the_app_opts_in(spans: InMemorySpanExporter) -> None:
    for opted, expected in ((False, None), (True, "test://static-text")):
        spans.clear()
        async with running(everything(telemetry_resource_uris=opted).http_app()) as http:
            await post_modern(http, "resources/read", {"uri": "test://static-text"}, name="test://static-text")
        [span] = server_spans(spans)
        assert span.name == "resources/read"
        assert (span.attributes or {}).get("mcp.resource.uri") == expected


@pytest.mark.parametrize("mode", ["propagation", "off"])
async def test_propagation_and_off_record_no_server_span(mode: str, spans: InMemorySpanExporter) -> None:
    reader = InMemoryMetricReader()
    async with running(everything(reader, telemetry=mode).http_app()) as http:
        response = await post_modern(
            http, "tools/call", {"name": "test_simple_text", "arguments": {}}, name="test_simple_text"
        )
        assert "result" in body_of(response)
    assert server_spans(spans) == []
    assert reader.get_metrics_data() is None or not reader.get_metrics_data().resource_metrics


def test_a_mode_that_is_not_one_of_the_three_fails_when_the_server_is_built() -> None:
    with pytest.raises(ConfigurationError, match=r"one of 'native', 'propagation', 'off', not 'nativ'"):
        everything(telemetry="nativ")


async def test_the_tasks_methods_have_conformant_spans(spans: InMemorySpanExporter) -> None:
    async with serving(everything()) as http:
        caller = Caller(http, None)
        task_id = await caller.start("slow_compute", {"seconds": 30})
        assert (await caller.get(task_id)).result is not None
        assert (await caller.update(task_id, {})).error is None
        assert (await caller.cancel(task_id)).result is not None
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        [span] = [span for span in server_spans(spans) if span.name == method]
        assert_conformant(span, method, None, MODERN, None, "1")
