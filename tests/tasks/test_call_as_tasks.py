"""Tasks through the fixtures (issue 36): a ``tasks=True`` client follows a task to its result as any call, in both
eras (2025-11-25 has no tasks: the tool answers in the request); ``start_task`` hands the task over to poll, answer,
cancel and read by hand; the official client does the same with ``TasksExtension``."""

from __future__ import annotations

import asyncio

import httpx2
import mcp_types as types
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from mcpkit import Server
from mcpkit.testing import CallAs, TaskCancelledError, TasksExtension, TaskStatus, ToolCallError, error_code
from tasks.support import KEYS, MODERN, build, gate, saw

only_2026 = pytest.mark.parametrize("mcp_protocol", [MODERN])


@pytest.fixture
def mcpkit_server() -> Server:
    return build()


async def test_a_tasks_client_follows_a_task_to_its_result_answering_its_question(call_as: CallAs) -> None:
    alice = call_as("alice", tasks=True, elicit={"ok": True})

    assert await alice.call("asking", {"what": "report.pdf"}) == 'report.pdf: accept {"ok": true}'
    assert [question.message for question in alice.asked] == ["Delete report.pdf?"]


async def test_without_the_extension_a_task_tool_answers_in_the_request(call_as: CallAs) -> None:
    alice = call_as("alice")

    assert await alice.call("carrying", {"text": "in the request"}) == "in the request"
    with pytest.raises(ValueError, match=r"call_as\('alice', tasks=True\)"):
        await alice.start_task("carrying", {"text": "x"})


async def test_a_task_tools_error_is_a_tool_error_as_for_any_call(call_as: CallAs) -> None:
    with pytest.raises(ToolCallError) as refused:
        await call_as("alice", tasks=True).call("failing")

    assert refused.value.code == "NO_REPORT"


@only_2026
async def test_a_started_task_is_polled_answered_through_tasks_update_and_read(call_as: CallAs) -> None:
    alice = call_as("alice", tasks=True, elicit=[])  # can be asked, with no answer of its own: the test answers

    task = await alice.start_task("asking", {"what": "report.pdf"})
    parked = await task.wait("input_required")
    [(key, question)] = (parked.input_requests or {}).items()
    await task.answer({key: {"action": "accept", "content": {"ok": True}}})
    done = await task.wait()
    result = await task.result()

    assert isinstance(parked, TaskStatus)
    assert question["params"]["message"] == "Delete report.pdf?"
    assert done.status == "completed"
    assert result.content[0].text == 'report.pdf: accept {"ok": true}'  # type: ignore[union-attr]


@only_2026
async def test_a_started_task_answers_its_question_with_the_clients_own_answers(call_as: CallAs) -> None:
    alice = call_as("alice", tasks=True, elicit="decline")
    task = await alice.start_task("asking", {"what": "report.pdf"})
    await task.wait("input_required")

    await task.answer()

    assert (await task.result()).content[0].text == "report.pdf: decline null"  # type: ignore[union-attr]
    assert [question.kind for question in alice.asked] == ["elicit"]


@only_2026
async def test_waiting_for_a_status_a_task_ended_without_says_how_it_ended(call_as: CallAs) -> None:
    task = await call_as("alice", tasks=True).start_task("asking", {"what": "report.pdf"})  # cannot be asked

    with pytest.raises(
        AssertionError, match=r"ended 'completed' while waited for as input_required: .*INPUT_UNAVAILABLE"
    ):
        await task.wait("input_required")


@only_2026
async def test_a_cancelled_task_stops_its_work_and_has_no_result(call_as: CallAs) -> None:
    gate("long")
    task = await call_as("alice", tasks=True).start_task("held", {"gate": "long"})
    await saw(("started", "long"))

    await task.cancel()

    assert (await task.wait()).status == "cancelled"
    await saw(("cancelled", "long"))
    with pytest.raises(TaskCancelledError, match=task.id):
        await task.result()


@only_2026
async def test_a_task_reports_progress_as_its_status_message(call_as: CallAs) -> None:
    release = gate("quarter")
    task = await call_as("alice", tasks=True).start_task("reporting", {"gate": "quarter"})

    while True:  # a client polls; the tool runs on this loop meanwhile
        status = await task.get()
        if status.status_message is not None:
            break
        await asyncio.sleep(task.poll_interval)
    release.set()

    assert status.status_message == "Read the first quarter"
    assert (await task.result()).content[0].text == "reported"  # type: ignore[union-attr]


@only_2026
async def test_a_failed_task_is_an_error_with_its_code_and_a_tool_error_is_a_result(call_as: CallAs) -> None:
    alice = call_as("alice", tasks=True)

    failed_as_tool = await (await alice.start_task("failing")).result()
    with pytest.raises(MCPError) as crashed:
        await (await alice.start_task("crashing")).result()

    assert failed_as_tool.is_error
    assert error_code(failed_as_tool) == "NO_REPORT"
    assert crashed.value.error.code == -32603
    assert "secret internals" not in str(crashed.value)


@only_2026
async def test_start_task_says_so_when_the_call_answered_in_the_request(call_as: CallAs) -> None:
    with pytest.raises(AssertionError, match=r"plain answered in the request \(2026-07-28\), not with a task"):
        await call_as("alice", tasks=True).start_task("plain", {"text": "x"})


@only_2026
async def test_a_required_task_tool_runs_for_a_client_that_declares_the_extension(call_as: CallAs) -> None:
    assert await call_as("alice", tasks=True).call("required") == "done as a task"


async def test_the_official_client_follows_tasks_with_the_extension(mcpkit_app: object) -> None:
    async def agree(context: object, params: object) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"ok": True})

    transport = httpx2.ASGITransport(app=mcpkit_app)  # type: ignore[arg-type]
    headers = {"Authorization": f"Bearer {KEYS['alice']}"}
    async with (
        httpx2.AsyncClient(transport=transport, headers=headers) as http,
        Client(
            streamable_http_client("http://127.0.0.1:8000/mcp", http_client=http),
            mode=MODERN,
            extensions=[TasksExtension(poll_interval=0.01)],
            elicitation_callback=agree,  # type: ignore[arg-type]
        ) as client,
    ):
        result = await client.call_tool("asking", {"what": "report.pdf"})
        claimed = await client.session.call_tool("carrying", {"text": "x"}, allow_claimed=True)

    assert result.content[0].text == 'report.pdf: accept {"ok": true}'  # type: ignore[union-attr]
    assert getattr(claimed, "result_type", None) == "task"
