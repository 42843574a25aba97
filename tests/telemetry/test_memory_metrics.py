"""mcpkit's own metrics (issue 38, item 4), with bounded attributes and no caller, key or value in any: store
operation durations by store and operation, search durations by mode, quota refusals by limit, tasks by status."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from mcpkit import Server, StaticKeys, ToolContext, ToolError, app, tool
from mcpkit.testing import running
from mcpkit_remember import RememberPlugin
from mcpkit_storage import RememberQuotaError
from tasks.support import Caller, serving
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
    plugin = RememberPlugin.init(type="sqlite", path=tmp_path / "notes.db", secret=SECRET, search=True, max_values=1)

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
