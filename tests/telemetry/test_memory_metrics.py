"""mcpkit's own metrics (issue 38, item 4), with bounded attributes and no caller, key or value in any: store
operation durations by store and operation, search durations by mode, quota refusals by limit, tasks by status."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from mcpkit import Server, StaticKeys, ToolContext, ToolError, app, tool
from mcpkit.testing import running
from mcpkit_remember import RememberPlugin
from mcpkit_storage import RememberQuotaError
from remember.test_semantic import Concepts
from tasks.support import Caller, serving
from telemetry.recording import PROVIDER
from telemetry.test_error_spans import points

MARKER = "marker-90c2d7aa"
SECRET = "remember-secret-for-the-memory-metrics-0123"


@tool(name="note", description="Keeps a note, then searches for it.")
class Note(ToolContext):
    async def execute(self, key: str, text: str) -> str:
        try:
            await self.remember.set(key, text, scope="user")
        except RememberQuotaError:
            return "full"
        return f"{len(await self.remember.search(text, scope='user'))} found"


@tool(name="background_note", description="Keeps a note, as a task.", task="required")
class BackgroundNote(ToolContext):
    async def execute(self, text: str) -> str:
        if text == "fail":
            raise ToolError("Refused.", code="NOTE_REFUSED")
        await self.remember.set("note", text, scope="user")
        return "kept"


def noting(reader: InMemoryMetricReader, tmp_path: Path) -> Server:
    plugin = RememberPlugin.init(
        type="sqlite", path=tmp_path / "notes.db", secret=SECRET, search=True, max_values=1, history=0
    )  # history=0: a change history would count against max_values

    @app(id="notes", tools=[Note, BackgroundNote], plugins=[plugin])
    class Notes: ...

    return Server(
        [Notes],
        auth=StaticKeys({"nour": "nour-key-0123456789"}),
        meter_provider=MeterProvider(metric_readers=[reader]),
    )


def attributes_of(reader: InMemoryMetricReader, metric: str) -> list[dict[str, Any]]:
    return [dict(point.attributes) for point in points(reader, metric)]


async def test_store_search_and_quota_metrics_are_bounded_by_the_server_s_own_names(tmp_path: Path) -> None:
    reader = InMemoryMetricReader()
    async with running(noting(reader, tmp_path)) as call_as:
        first = await call_as("nour").call("note", {"key": f"k-{MARKER}", "text": f"first {MARKER}"})
        second = await call_as("nour").call("note", {"key": f"other-{MARKER}", "text": "second"})
    assert "1 found" in str(first)
    assert "full" in str(second)
    storage = attributes_of(reader, "mcpkit.storage.operation.duration")
    assert {"db.system.name": "sqlite", "db.operation.name": "write"} in storage
    assert {"db.system.name": "sqlite", "db.operation.name": "write", "error.type": "QuotaExceededError"} in storage
    assert attributes_of(reader, "mcpkit.search.duration") == [{"mcpkit.search.mode": "lexical"}]
    [refused] = points(reader, "mcpkit.quota.refusals")
    assert (dict(refused.attributes), refused.value) == ({"mcpkit.quota.limit": "values"}, 1)
    everything = repr(reader.get_metrics_data())
    assert MARKER not in everything
    assert "nour" not in everything


async def test_tasks_are_counted_by_status_and_tool(tmp_path: Path) -> None:
    reader = InMemoryMetricReader()
    async with serving(noting(reader, tmp_path)) as http:
        caller = Caller(http, "nour-key-0123456789")
        done = await caller.start("background_note", {"text": "kept"})
        failed = await caller.start("background_note", {"text": "fail"})
        await caller.until(done, "completed")
        await caller.until(failed, "completed")
    counted = {
        (point.attributes["mcpkit.task.status"], point.attributes["gen_ai.tool.name"]): point.value
        for point in points(reader, "mcpkit.tasks")
    }
    # a tool error ends its task as ``completed`` with an ``isError`` result, as the tasks extension has it
    assert counted == {("working", "background_note"): 2, ("completed", "background_note"): 2}


@tool(name="keep_and_find", description="Keeps a note and searches it by meaning and words.")
class KeepAndFind(ToolContext):
    async def execute(self, text: str) -> str:
        await self.remember.set("note", text, scope="user")
        return f"{len(await self.remember.search(text, scope='user', mode='hybrid'))} found"


async def test_embeddings_are_spans_and_durations_and_a_search_is_timed_by_its_mode(
    spans: InMemorySpanExporter,
) -> None:
    reader = InMemoryMetricReader()
    plugin = RememberPlugin.init(type="memory", secret=SECRET, search=True, embedder=Concepts(), history=0)

    @app(id="meaning", tools=[KeepAndFind], plugins=[plugin])
    class Meaning: ...

    server = Server(
        [Meaning],
        auth=StaticKeys({"nour": "nour-key-0123456789"}),
        tracer_provider=PROVIDER,
        meter_provider=MeterProvider(metric_readers=[reader]),
    )
    async with running(server) as call_as:
        assert "1 found" in str(await call_as("nour").call("keep_and_find", {"text": f"a latte {MARKER}"}))
    [call] = [span for span in spans.get_finished_spans() if span.name == "tools/call keep_and_find"]
    assert call.context is not None
    inside = [
        span for span in spans.get_finished_spans() if span.parent and span.parent.span_id == call.context.span_id
    ]
    assert [span.name for span in inside] == ["embed memory", "write memory", "search memory"]
    assert inside[0].kind is SpanKind.INTERNAL
    assert (inside[0].attributes or {})["mcpkit.memory.count"] == 1
    assert attributes_of(reader, "mcpkit.embedding.duration") == [{"db.system.name": "memory"}]
    assert attributes_of(reader, "mcpkit.search.duration") == [{"mcpkit.search.mode": "hybrid"}]
    assert MARKER not in repr([(span.attributes, span.events) for span in spans.get_finished_spans()])
