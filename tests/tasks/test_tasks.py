"""Tasks through the real HTTP stack, on every store: a call becomes a task its caller polls, answers and cancels,
and nobody else can see."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Server
from mcpkit_remember import RememberPlugin
from tasks.conftest import STORES, options_for
from tasks.support import ALICE, BOB, SECRET, SEEN, Caller, build, gate, saw, serving


@pytest.fixture(params=STORES)
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Server:
    options = options_for(str(request.param), tmp_path, request)
    return build(None if options is None else RememberPlugin.init(**options, secret=SECRET))


async def test_a_task_is_answered_at_once_and_its_result_is_inlined_when_done(server: Server) -> None:
    async with serving(server) as http:
        alice = Caller(http, ALICE)
        release = gate("report")
        reply = await alice.call("held", {"gate": "report"})
        created: dict[str, Any] = reply.result or {}
        assert created["resultType"] == "task"
        assert created["status"] == "working"
        assert {"taskId", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} <= created.keys()
        assert created["ttlMs"] == 3_600_000
        assert "result" not in created
        working = await alice.get(created["taskId"])
        assert working.result is not None
        assert working.result["status"] == "working"
        assert "result" not in working.result
        assert working.result["resultType"] == "complete"
        release.set()
        done = await alice.until(created["taskId"], "completed")
        assert done["result"]["content"][0]["text"].startswith("released report for static:")
        assert done["result"]["content"][0]["text"].endswith(f"as task {created['taskId']}")


async def test_another_caller_can_neither_get_update_nor_cancel_a_task_nor_tell_it_exists(server: Server) -> None:
    async with serving(server) as http:
        alice, bob, anonymous = Caller(http, ALICE), Caller(http, BOB), Caller(http, None)
        release = gate("mine")
        task_id = await alice.start("held", {"gate": "mine"})
        for other in (bob, anonymous):
            refused = await other.get(task_id)
            never = await other.get("no-such-task-anywhere")
            assert refused.error is not None
            assert never.error is not None
            assert refused.error["code"] == never.error["code"] == -32602
            assert refused.error["message"].replace(task_id, "ID") == never.error["message"].replace(
                "no-such-task-anywhere", "ID"
            )
            assert (await other.cancel(task_id)).result == (await other.cancel("no-such-task")).result
            assert (await other.update(task_id, {"ask-1": {"action": "accept"}})).result is not None
        assert ("cancelled", "mine") not in SEEN
        still = await alice.get(task_id)
        assert still.result is not None
        assert still.result["status"] == "working"
        release.set()
        assert (await alice.until(task_id, "completed"))["status"] == "completed"


async def test_cancelling_stops_the_work_the_tool_sees_it_and_a_second_cancel_is_the_same_ack(server: Server) -> None:
    async with serving(server) as http:
        alice = Caller(http, ALICE)
        gate("long")
        task_id = await alice.start("held", {"gate": "long"})
        await saw(("started", "long"))
        ack = await alice.cancel(task_id)
        assert ack.result is not None
        assert set(ack.result) - {"_meta"} == {"resultType"}
        cancelled = await alice.until(task_id, "cancelled", "completed", "failed")
        assert cancelled["status"] == "cancelled"
        assert "result" not in cancelled
        await saw(("cancelled", "long"))
        again = await alice.cancel(task_id)
        assert again.result == ack.result
        assert (await alice.get(task_id)).result["status"] == "cancelled"  # type: ignore[index]


async def test_a_question_parks_the_task_and_the_answer_resumes_it(server: Server) -> None:
    async with serving(server) as http:
        alice = Caller(http, ALICE)
        task_id = await alice.start("asking", {"what": "report.pdf"})
        parked = await alice.until(task_id, "input_required")
        [(key, question)] = parked["inputRequests"].items()
        assert question["method"] == "elicitation/create"
        assert "report.pdf" in question["params"]["message"]
        ignored = await alice.update(task_id, {"never-asked": {"action": "accept", "content": {}}})
        assert ignored.result is not None
        assert (await alice.get(task_id)).result["status"] == "input_required"  # type: ignore[index]
        ack = await alice.update(task_id, {key: {"action": "accept", "content": {"ok": True}}})
        assert ack.result is not None
        assert set(ack.result) - {"_meta"} == {"resultType"}
        done = await alice.until(task_id, "completed")
        assert done["result"]["content"][0]["text"] == 'report.pdf: accept {"ok": true}'
        assert SEEN.count(("started", "report.pdf")) == 2  # asked, then run again with the answer


async def test_a_tool_error_completes_the_task_and_a_crash_fails_it_without_its_text(server: Server) -> None:
    async with serving(server) as http:
        alice = Caller(http, ALICE)
        failed_as_tool = await alice.until(await alice.start("failing"), "completed", "failed")
        assert failed_as_tool["status"] == "completed"
        assert failed_as_tool["result"]["isError"] is True
        assert failed_as_tool["result"]["_meta"]["mcpkit/error"]["code"] == "NO_REPORT"
        crashed = await alice.until(await alice.start("crashing"), "completed", "failed")
        assert crashed["status"] == "failed"
        assert "result" not in crashed
        assert crashed["error"]["code"] == -32603
        assert "error id" in crashed["error"]["message"]
        assert "secret internals" not in str(crashed)


async def test_progress_becomes_the_status_message(server: Server) -> None:
    async with serving(server) as http:
        alice = Caller(http, ALICE)
        release = gate("progress")
        task_id = await alice.start("reporting", {"gate": "progress"})
        assert await alice.message(task_id) == "Read the first quarter"
        release.set()
        await alice.until(task_id, "completed")


async def test_progress_in_a_tight_loop_is_written_at_most_every_half_second_and_its_last_message_lands() -> None:
    from mcpkit import MemoryTaskStore

    class Counting(MemoryTaskStore):
        writes = 0

        async def replace(self, *args: Any, **kwargs: Any) -> bool:
            Counting.writes += 1
            return await super().replace(*args, **kwargs)

    server = build()
    server._tasks.use(Counting())  # type: ignore[union-attr]
    async with serving(server) as http:
        alice = Caller(http, ALICE)
        release = gate("chatty")
        task_id = await alice.start("chatty", {"gate": "chatty"})
        await saw(("reported", "chatty"))
        started = time.monotonic()
        while await alice.message(task_id) != "2000 of 2000":  # the last message lands within the half second
            assert time.monotonic() - started < 5, await alice.message(task_id)
            await asyncio.sleep(0.05)
        writes = Counting.writes
        release.set()
        await alice.until(task_id, "completed")
    assert writes <= 6, writes  # 2,000 reports: the first, then the latest once the half second has passed


async def test_the_memory_task_store_keeps_nothing_for_callers_who_only_ask_or_whose_tasks_expired() -> None:
    from mcpkit import MemoryTaskStore, TaskQuota

    store = MemoryTaskStore()
    assert await store.load("mallory", "guessed-id", now=0.0) is None  # asking leaves no trace
    await store.add("alice", "t1", {"status": "working"}, expires_at=10.0, now=0.0, quota=TaskQuota(None, None))
    assert await store.load("alice", "t1", now=5.0) is not None
    assert await store.load("alice", "t1", now=11.0) is None
    assert store._owners == {}  # neither mallory's question nor alice's expired task is kept
