"""The OpenTelemetry SDK as the telemetry tests record with: one global tracer provider (a process may set it only
once) that records only while a test holds the ``spans`` fixture and is the API's no-op otherwise, so the rest of the
suite (the docs' examples too) sees what a process without an SDK sees, whichever runs first; and a tiny OTLP/HTTP
receiver."""

from __future__ import annotations

from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.context import Context
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, ALWAYS_ON, Sampler, SamplingResult
from opentelemetry.trace import Link, NoOpTracer, Span, SpanKind, Tracer
from opentelemetry.trace import TracerProvider as AnyTracerProvider
from opentelemetry.util.types import Attributes


class _Switch(Sampler):
    """Samples every span while ``on``, none otherwise."""

    on = False

    def should_sample(
        self,
        parent_context: Context | None,
        trace_id: int,
        name: str,
        kind: SpanKind | None = None,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        trace_state: Any = None,
    ) -> SamplingResult:
        chosen = ALWAYS_ON if self.on else ALWAYS_OFF
        return chosen.should_sample(parent_context, trace_id, name, kind, attributes, links, trace_state)

    def get_description(self) -> str:
        return "on while a test records"


SWITCH = _Switch()
EXPORTER = InMemorySpanExporter()
PROVIDER = TracerProvider(sampler=SWITCH)
PROVIDER.add_span_processor(SimpleSpanProcessor(EXPORTER))
_NO_OP = NoOpTracer()


class _SwitchedTracer(Tracer):
    """``PROVIDER``'s tracer while a test records, the no-op tracer otherwise: an SDK that samples nothing still
    makes valid (unsampled) span contexts, which the official client would send as its ``traceparent``, and a server
    with a provider of its own (as the docs' examples have) would then record nothing under it."""

    def __init__(self, recording: Tracer) -> None:
        self._recording = recording

    def _chosen(self) -> Tracer:
        return self._recording if SWITCH.on else _NO_OP

    def start_span(self, *args: Any, **kwargs: Any) -> Span:
        return self._chosen().start_span(*args, **kwargs)

    def start_as_current_span(self, *args: Any, **kwargs: Any) -> Any:
        return self._chosen().start_as_current_span(*args, **kwargs)


class _SwitchedProvider(AnyTracerProvider):
    """The global tracer provider of the test process: see ``_SwitchedTracer``."""

    def get_tracer(self, *args: Any, **kwargs: Any) -> Tracer:
        return _SwitchedTracer(PROVIDER.get_tracer(*args, **kwargs))


GLOBAL = _SwitchedProvider()


class Receiver(ThreadingHTTPServer):
    """A tiny OTLP/HTTP receiver on 127.0.0.1: keeps each POST's path and body."""

    def __init__(self) -> None:
        self.received: list[tuple[str, bytes]] = []
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.received.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def assert_continues(receiver: Receiver, name: str, turn: Span, spans: InMemorySpanExporter) -> Any:
    """The one span named ``name`` the receiver got, checked to be in ``turn``'s trace under the official client's
    span that sent the request (``MCP send NAME``); returned for more checks."""
    served = [
        span
        for path, body in receiver.received
        if path == "/v1/traces"
        for resource in ExportTraceServiceRequest.FromString(body).resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
        if span.name == name
    ]
    [span] = served
    [sent] = [mine for mine in spans.get_finished_spans() if mine.name == f"MCP send {name}"]
    assert int.from_bytes(span.trace_id, "big") == turn.get_span_context().trace_id
    assert int.from_bytes(span.parent_span_id, "big") == sent.context.span_id
    return span
