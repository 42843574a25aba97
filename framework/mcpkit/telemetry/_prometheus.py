"""``PrometheusScrape``: the server's metrics in a meter provider of their own, read by a Prometheus reader into a
registry of their own, so that ``GET /metrics`` serves this server's metrics and nothing else's (the SDK and the
Prometheus exporter are the optional ``otel`` extra)."""

from __future__ import annotations

import importlib
from typing import Any

from ..base import ConfigurationError

__all__ = ["PrometheusScrape"]

_EXTRA = "pip install 'mcpkit[otel]' (opentelemetry-sdk and opentelemetry-exporter-prometheus)"


class PrometheusScrape:
    """A meter provider whose metrics ``render()`` gives in Prometheus' text format."""

    def __init__(self) -> None:
        try:
            client = importlib.import_module("prometheus_client")
            exporter = importlib.import_module("opentelemetry.exporter.prometheus")
            sdk_metrics = importlib.import_module("opentelemetry.sdk.metrics")
        except ImportError as exc:
            raise ConfigurationError(
                f"Server(prometheus=True) needs the OpenTelemetry SDK and its Prometheus exporter, missing here "
                f"({exc}): {_EXTRA}."
            ) from None
        self._client = client
        self._registry = client.CollectorRegistry(auto_describe=True)
        reader = exporter.PrometheusMetricReader(registry=self._registry)
        #: The provider the server's instruments record into.
        self.meter_provider: Any = sdk_metrics.MeterProvider(metric_readers=[reader])

    def render(self) -> tuple[bytes, str]:
        """The metrics as a scrape returns them, and their content type."""
        return self._client.generate_latest(self._registry), self._client.CONTENT_TYPE_LATEST
