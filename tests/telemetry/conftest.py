"""Fixtures of the telemetry tests: the spans recorded during a test, and a metric reader of its own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from telemetry.recording import EXPORTER, PROVIDER, SWITCH


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """The spans every tracer records during the test (the SDK's client spans too: the global provider)."""
    if trace.get_tracer_provider() is not PROVIDER:
        trace.set_tracer_provider(PROVIDER)
    EXPORTER.clear()
    SWITCH.on = True
    try:
        yield EXPORTER
    finally:
        SWITCH.on = False
        EXPORTER.clear()


@pytest.fixture
def metric_reader() -> InMemoryMetricReader:
    """A reader of this test's metrics: give ``MeterProvider(metric_readers=[reader])`` to the server under test."""
    return InMemoryMetricReader()
