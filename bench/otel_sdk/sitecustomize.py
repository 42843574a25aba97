"""Put first on ``PYTHONPATH`` by ``bench.otel_cost``: the OpenTelemetry SDK configured as a deployment would have it
(a batch span processor, a metric reader), exporting nowhere, so the count is what recording costs, not the network."""

from collections.abc import Sequence

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult


class _Dropped(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


_traces = TracerProvider()
_traces.add_span_processor(BatchSpanProcessor(_Dropped()))
trace.set_tracer_provider(_traces)
metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))
