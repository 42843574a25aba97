"""``OtlpExport``: the OpenTelemetry SDK set up to send traces and metrics over OTLP/HTTP, for ``--otlp URL`` (the
SDK and its exporter are the optional ``otel`` extra; mcpkit itself records through the API only)."""

from __future__ import annotations

import importlib
import os
from typing import Any
from urllib.parse import urlsplit

from opentelemetry import metrics, trace

from ..base import ConfigurationError

__all__ = ["OtlpExport"]

_EXTRA = "pip install 'mcpkit[otel]' (opentelemetry-sdk and opentelemetry-exporter-otlp-proto-http)"


class OtlpExport:
    """Tracer and meter providers exporting to the OTLP/HTTP receiver at ``url`` (``http://HOST:4318``: spans to
    ``/v1/traces``, metrics to ``/v1/metrics``), batched; ``install()`` makes them the process's own."""

    def __init__(self, url: str, service_name: str, *, metric_interval: float = 60.0) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigurationError(
                f"--otlp takes the http:// or https:// URL of an OTLP/HTTP receiver (like http://127.0.0.1:4318), "
                f"not {url!r:.80}."
            )
        sdk = _modules()
        base = url.rstrip("/")
        resource = sdk["resources"].Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", service_name)})
        spans = sdk["trace_exporter"].OTLPSpanExporter(endpoint=f"{base}/v1/traces")
        self.tracer_provider: Any = sdk["trace"].TracerProvider(resource=resource)
        self.tracer_provider.add_span_processor(sdk["trace_export"].BatchSpanProcessor(spans))
        reader = sdk["metrics_export"].PeriodicExportingMetricReader(
            sdk["metric_exporter"].OTLPMetricExporter(endpoint=f"{base}/v1/metrics"),
            export_interval_millis=metric_interval * 1000,
        )
        self.meter_provider: Any = sdk["metrics"].MeterProvider(resource=resource, metric_readers=[reader])

    def install(self) -> None:
        """Make these the global providers, which every tracer and meter (the MCP SDK's too) records into."""
        trace.set_tracer_provider(self.tracer_provider)
        metrics.set_meter_provider(self.meter_provider)

    def shutdown(self) -> None:
        """Send what is still batched, then stop exporting."""
        self.tracer_provider.shutdown()
        self.meter_provider.shutdown()


def _modules() -> dict[str, Any]:
    """The SDK's modules, imported only when an export is asked for (they are an optional extra)."""
    names = {
        "resources": "opentelemetry.sdk.resources",
        "trace": "opentelemetry.sdk.trace",
        "trace_export": "opentelemetry.sdk.trace.export",
        "metrics": "opentelemetry.sdk.metrics",
        "metrics_export": "opentelemetry.sdk.metrics.export",
        "trace_exporter": "opentelemetry.exporter.otlp.proto.http.trace_exporter",
        "metric_exporter": "opentelemetry.exporter.otlp.proto.http.metric_exporter",
    }
    try:
        return {key: importlib.import_module(name) for key, name in names.items()}
    except ImportError as exc:
        raise ConfigurationError(
            f"Exporting over OTLP needs the OpenTelemetry SDK, missing here ({exc}): {_EXTRA}."
        ) from None
