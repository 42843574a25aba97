"""Fixtures of the telemetry tests: the spans recorded during a test, and an OTLP/HTTP receiver."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from telemetry.recording import EXPORTER, GLOBAL, SWITCH, Receiver


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """The spans every tracer records during the test (the SDK's client spans too: the global provider)."""
    if trace.get_tracer_provider() is not GLOBAL:
        trace.set_tracer_provider(GLOBAL)
    EXPORTER.clear()
    SWITCH.on = True
    try:
        yield EXPORTER
    finally:
        SWITCH.on = False
        EXPORTER.clear()


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    serving = Receiver()
    thread = threading.Thread(target=serving.serve_forever, daemon=True)
    thread.start()
    try:
        yield serving
    finally:
        serving.shutdown()
        serving.server_close()
