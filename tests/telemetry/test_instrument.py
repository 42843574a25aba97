"""Zero configuration (issue 38, item 6): ``opentelemetry-instrument python -m mcpkit run app.py`` with the standard
``OTEL_*`` variables exports the server's spans, a ``subscriptions/listen`` stream's among them, and the memory spans
under a call, continuing the official client's trace, to a real OTLP/HTTP receiver."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from helpdesk.test_end_to_end import Running, free_port
from telemetry.recording import PROVIDER, Receiver, assert_continues

SERVER = Path(__file__).resolve().parents[1] / "core" / "subscriptions_server.py"
HEADERS = {"Authorization": "Bearer nour-key-0123456789abcdef"}
#: How long the batch span processor may take to send what the calls recorded.
EXPORT_SECONDS = 20.0
STARTUP_SECONDS = 60.0


def received(receiver: Receiver) -> list[object]:
    return [
        span
        for path, body in list(receiver.received)
        if path == "/v1/traces"
        for resource in ExportTraceServiceRequest.FromString(body).resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    ]


def start(command: list[str], cwd: Path, env: dict[str, str], port: int) -> Running:
    output = cwd / "server.out"
    with output.open("wb") as sink:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=sink, stderr=sink)
    return Running(process, f"http://127.0.0.1:{port}/mcp", output)


def wait_until_listening(running: Running, port: int) -> None:
    """The instrumented start imports the SDK and its exporters first: slower than a plain one."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        assert running.process.poll() is None, running.output.read_text()
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"not listening on {port} within {STARTUP_SECONDS}s: {running.output.read_text()}")


@pytest.mark.skipif(shutil.which("opentelemetry-instrument") is None, reason="needs opentelemetry-distro (dev extra)")
async def test_opentelemetry_instrument_mcpkit_run_exports_the_listen_stream_and_a_call_with_its_memory_spans(
    receiver: Receiver, tmp_path: Path, spans: InMemorySpanExporter
) -> None:
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("OTEL_")},
        "OTEL_SERVICE_NAME": "instrumented-notes",
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_LOGS_EXPORTER": "none",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{receiver.server_port}",
        "OTEL_BSP_SCHEDULE_DELAY": "100",
        "NO_PROXY": "127.0.0.1",
    }
    command = [
        str(Path(sys.executable).with_name("opentelemetry-instrument")),
        *(sys.executable, "-m", "mcpkit", "run", f"{SERVER}:server", "--port", str(port)),
    ]
    running = start(command, tmp_path, env, port)
    process, output = running.process, running.output
    try:
        wait_until_listening(running, port)
        with PROVIDER.get_tracer("agent").start_as_current_span("agent turn") as turn:
            async with (
                httpx2.AsyncClient(headers=HEADERS, timeout=30) as http,
                Client(streamable_http_client(running.url, http_client=http), mode="2026-07-28") as watcher,
                Client(streamable_http_client(running.url, http_client=http), mode="2026-07-28") as editor,
                watcher.listen(resource_subscriptions=["notes://plan"]) as subscription,
            ):
                await editor.call_tool("edit_note", {"key": "plan", "text": "v2"})
                async with asyncio.timeout(10):
                    await anext(aiter(subscription))
        deadline = time.monotonic() + EXPORT_SECONDS
        # The edit writes the note and its change history (on by default) in one swap_many.
        wanted = {"subscriptions/listen", "tools/call edit_note", "swap_many memory"}
        while not wanted <= {span.name for span in received(receiver)}:  # type: ignore[attr-defined]
            assert time.monotonic() < deadline, (sorted({s.name for s in received(receiver)}), output.read_text())  # type: ignore[attr-defined]
            await asyncio.sleep(0.05)
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=10)
    call = assert_continues(receiver, "tools/call edit_note", turn, spans)
    [listen] = [span for span in received(receiver) if span.name == "subscriptions/listen"]  # type: ignore[attr-defined]
    assert listen.trace_id == call.trace_id
    [write] = [span for span in received(receiver) if span.name == "swap_many memory"]  # type: ignore[attr-defined]
    assert write.parent_span_id == call.span_id
    attributes = {item.key: item.value.string_value for item in write.attributes}
    assert attributes["db.system.name"] == "memory"
    assert attributes["mcpkit.memory.scope"] == "global"
