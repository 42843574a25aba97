"""What leaves the server as telemetry (issue 38): an OTLP/HTTP export reaches a real receiver, and nothing in it, no
span attribute, event or metric point, nor any line of the audit log or of a Prometheus scrape, carries a value a tool
wrote, its key, the caller's bearer token or REMEMBER_SECRET, in either era."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf.json_format import MessageToJson
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from core._support import body_of, call_legacy, call_modern, open_legacy_session, running
from helpdesk.test_end_to_end import Running, free_port, reply_for, wait_until_listening
from mcpkit import AuditLog, ConfigurationError, OtlpExport, Server, StaticKeys, ToolContext, app, tool
from mcpkit_remember import RememberPlugin
from telemetry.recording import PROVIDER, Receiver, assert_continues

MARKER = "marker-7d1c3a9e"
KEY = "nour-otel-key-0123456789abcdef"
SECRET = "remember-secret-for-the-otel-test-0123456789"


@tool(name="keep", description="Keeps a note under a key of the caller's choosing, and reads it back.")
class Keep(ToolContext):
    async def execute(self, key: str, note: str) -> str:
        await self.remember.set(key, note, scope="user")
        kept = await self.remember.get(key, scope="user")
        return f"kept {kept}"


async def test_an_otlp_export_reaches_a_receiver_and_carries_no_value_key_token_or_secret(
    receiver: Receiver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REMEMBER_SECRET", SECRET)
    export = OtlpExport(f"http://127.0.0.1:{receiver.server_port}", "otel-test")
    plugin = RememberPlugin.init(type="sqlite", path=tmp_path / "kept.db")

    @app(id="notes", tools=[Keep], plugins=[plugin])
    class Notes: ...

    audit = AuditLog(tmp_path / "audit.jsonl")
    server = Server(
        [Notes],
        auth=StaticKeys({"nour": KEY}),
        tracer_provider=export.tracer_provider,
        meter_provider=export.meter_provider,
        telemetry_resource_uris=True,
        audit=audit,
    )
    note = {"key": f"key-{MARKER}", "note": f"{MARKER} password={KEY} {SECRET}"}
    async with running(server.http_app()) as http:
        modern = body_of(await call_modern(http, "keep", note, token=KEY))
        session = await open_legacy_session(http, token=KEY)
        legacy = body_of(await call_legacy(http, session, "keep", note, token=KEY))
    assert MARKER in repr(modern["result"])
    assert MARKER in repr(legacy["result"])
    export.shutdown()
    audit.close()
    scraped = Server([Notes], auth=StaticKeys({"nour": KEY}), prometheus=True)  # the same calls, scraped
    async with running(scraped.http_app()) as http:
        assert "error" not in body_of(await call_modern(http, "keep", note, token=KEY))
        metrics_text = (await http.get("/metrics", headers={"Authorization": f"Bearer {KEY}"})).text
    assert "mcpkit_storage_operation_duration_seconds" in metrics_text
    audit_text = (tmp_path / "audit.jsonl").read_text()
    # In each era: the set's read of the value's bytes and its history (one line), its write of both (one line per
    # entry: the change history is on by default), then the tool's read back of the value.
    operations = [line["operation"] for line in map(json.loads, audit_text.splitlines())]
    assert operations == ["read", "write", "write", "read"] * 2

    traces = [ExportTraceServiceRequest.FromString(body) for path, body in receiver.received if path == "/v1/traces"]
    meters = [ExportMetricsServiceRequest.FromString(body) for path, body in receiver.received if path == "/v1/metrics"]
    spans = [
        span
        for request in traces
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    ]
    assert sorted(span.name for span in spans if span.name.startswith("tools/call")) == ["tools/call keep"] * 2
    metric_names = {
        metric.name
        for request in meters
        for resource in request.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
    }
    assert "mcp.server.operation.duration" in metric_names
    exported = [MessageToJson(request) for request in [*traces, *meters]]
    raw = b"".join(body for _, body in receiver.received)
    assert any('"gen_ai.tool.name"' in text and '"keep"' in text for text in exported)  # the scan sees attributes
    memory_spans = sorted(span.name for span in spans if span.name.endswith(" sqlite"))
    # In each era: the keep's read of the value's bytes and its history, its write of both, then its read.
    assert memory_spans == ["read sqlite"] * 4 + ["swap_many sqlite"] * 2
    assert any('"mcpkit.memory.key"' in text for text in exported)  # and the memory spans' attributes
    for secret in (MARKER, KEY, SECRET):
        assert not any(secret in text for text in exported), secret
        assert secret.encode() not in raw, secret
        assert secret not in audit_text, secret
        assert secret not in metrics_text, secret


def test_a_help_desk_call_is_one_trace_from_the_client_to_python_m_mcpkit_helpdesk_otlp(
    receiver: Receiver, tmp_path: Path, spans: InMemorySpanExporter
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in {"HELPDESK_KEYS", "REMEMBER_SECRET", "REMEMBER_STORE"}}
    port = free_port()
    command = ["-m", "mcpkit_helpdesk", "--port", str(port), "--otlp", f"http://127.0.0.1:{receiver.server_port}"]
    with (tmp_path / "helpdesk.out").open("wb") as sink:
        process = subprocess.Popen([sys.executable, *command], cwd=tmp_path, env=env, stdout=sink, stderr=sink)
    running = Running(process, f"http://127.0.0.1:{port}/mcp", tmp_path / "helpdesk.out")
    try:
        wait_until_listening(running, port)
        with PROVIDER.get_tracer("agent").start_as_current_span("agent turn") as turn:
            reply_for(running.url, "nour-demo-key", "legacy")
        running.stop()  # SIGTERM: what is batched still goes out
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    served = assert_continues(receiver, "tools/call draft_reply", turn, spans)
    under = [
        span
        for path, body in receiver.received
        if path == "/v1/traces"
        for resource in ExportTraceServiceRequest.FromString(body).resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
        if span.parent_span_id == served.span_id
    ]
    assert "read memory" in [span.name for span in under]  # the signature's read, with its store


def test_otlp_takes_an_http_url() -> None:
    with pytest.raises(ConfigurationError, match="--otlp takes the http:// or https:// URL"):
        OtlpExport("127.0.0.1:4318", "otel-test")
