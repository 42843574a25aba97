"""A task's work (issue 38) runs in a span of its own, ``task {tool}``, in a new trace linked to the ``tools/call``
that started it; a ``tasks/get`` while it runs links to it; a task that fails says why by its code."""

from __future__ import annotations

import asyncio

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from mcpkit import Server, ToolContext, ToolError, app, tool
from tasks.support import Caller, serving
from telemetry.recording import PROVIDER

HELD = asyncio.Event()
RELEASE = asyncio.Event()


@tool(name="long_job", description="Works until the test lets it finish, as a task.", task="required")
class LongJob(ToolContext):
    async def execute(self) -> str:
        HELD.set()
        await RELEASE.wait()
        return "done"


@tool(name="doomed_job", description="Fails as a tool, as a task.", task="required")
class DoomedJob(ToolContext):
    async def execute(self) -> str:
        raise ToolError("The job failed.", code="JOB_FAILED")


@app(id="jobs", tools=[LongJob, DoomedJob])
class Jobs:
    """Task tools."""


def named(spans: InMemorySpanExporter, name: str) -> ReadableSpan:
    [span] = [span for span in spans.get_finished_spans() if span.name == name]
    return span


async def test_a_tasks_work_is_linked_to_the_call_that_started_it_and_tasks_get_to_the_work(
    spans: InMemorySpanExporter,
) -> None:
    HELD.clear()
    RELEASE.clear()
    async with serving(Server([Jobs], allow_anonymous=True, tracer_provider=PROVIDER)) as http:
        caller = Caller(http, None)
        task_id = await caller.start("long_job")
        await asyncio.wait_for(HELD.wait(), 10)
        assert (await caller.get(task_id)).result is not None
        RELEASE.set()
        await caller.until(task_id, "completed")
    started = named(spans, "tools/call long_job")
    work = named(spans, "task long_job")
    [asked, *_] = [span for span in spans.get_finished_spans() if span.name == "tasks/get"]
    assert work.parent is None
    assert work.context.trace_id != started.context.trace_id
    assert [link.context.span_id for link in work.links] == [started.context.span_id]
    assert (work.attributes or {})["gen_ai.tool.name"] == "long_job"
    assert work.status.status_code is not StatusCode.ERROR
    assert [link.context.span_id for link in asked.links] == [work.context.span_id]


async def test_a_failed_task_s_span_has_its_code(spans: InMemorySpanExporter) -> None:
    async with serving(Server([Jobs], allow_anonymous=True, tracer_provider=PROVIDER)) as http:
        caller = Caller(http, None)
        task_id = await caller.start("doomed_job")
        await caller.until(task_id, "completed", "failed")
    work = named(spans, "task doomed_job")
    assert work.status.status_code is StatusCode.ERROR
    assert (work.attributes or {})["error.type"] == "JOB_FAILED"
