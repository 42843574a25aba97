"""Tasks behind a load balancer: two instances sharing a store (SQLite, Redis, Redis Cluster, PostgreSQL) serve
one task; it outlives the instance that polls it; a task whose instance died is reported failed."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from mcpkit import ManualClock, Server
from mcpkit_remember import RememberPlugin
from tasks.conftest import SHARED, STORES, options_for
from tasks.support import ALICE, BOB, SECRET, Caller, build, gate, saw, serving


@pytest.fixture(params=SHARED)
def shared(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    options = options_for(str(request.param), tmp_path, request)
    assert options is not None
    return options


def instance(options: dict[str, Any], **server_options: Any) -> Server:
    return build(RememberPlugin.init(**options, secret=SECRET), **server_options)


async def test_a_task_started_on_one_instance_is_polled_and_cancelled_through_another(shared: dict[str, Any]) -> None:
    first, second = instance(shared, task_lease=0.3), instance(shared, task_lease=0.3)
    async with serving(first) as one, serving(second) as two:
        gate("far")
        task_id = await Caller(one, ALICE).start("held", {"gate": "far"})
        through_two = Caller(two, ALICE)
        polled = await through_two.get(task_id)
        assert polled.result is not None
        assert polled.result["status"] == "working"
        assert (await Caller(two, BOB).get(task_id)).error is not None
        await through_two.cancel(task_id)
        assert (await through_two.get(task_id)).result["status"] == "cancelled"  # type: ignore[index]
        await saw(("cancelled", "far"))  # the run on the first instance saw it at its next renewal, and stopped
        assert (await Caller(one, ALICE).get(task_id)).result["status"] == "cancelled"  # type: ignore[index]


async def test_a_task_survives_a_restart_of_the_instance_that_polls_it(shared: dict[str, Any]) -> None:
    async with serving(instance(shared)) as one:
        alice = Caller(one, ALICE)
        release = gate("kept")
        task_id = await alice.start("held", {"gate": "kept"})
        async with serving(instance(shared)) as two:
            assert (await Caller(two, ALICE).get(task_id)).result["status"] == "working"  # type: ignore[index]
        release.set()
        await alice.until(task_id, "completed")
    async with serving(instance(shared)) as restarted:  # every instance that saw the task has stopped
        done = await Caller(restarted, ALICE).get(task_id)
        assert done.result is not None
        assert done.result["status"] == "completed"
        assert done.result["result"]["content"][0]["text"].startswith("released kept")


async def test_a_task_whose_instance_died_is_reported_failed_and_its_run_stops(shared: dict[str, Any]) -> None:
    async with serving(instance(shared, task_lease=0.3)) as one:
        gate("orphan")
        task_id = await Caller(one, ALICE).start("held", {"gate": "orphan"})
        await saw(("started", "orphan"))
        # Another instance, reading the task after its lease: the first instance stopped renewing it (it died).
        later = ManualClock(time.time() + 120)
        async with serving(instance(shared, clock=later, task_lease=0.3)) as two:
            failed = await Caller(two, ALICE).get(task_id)
        assert failed.result is not None
        assert failed.result["status"] == "failed"
        assert failed.result["error"]["code"] == -32603
        assert "stopped before it finished" in failed.result["error"]["message"]
        await saw(("cancelled", "orphan"))  # the run, alive after all, learns it at its next renewal and stops
        assert (await Caller(one, ALICE).get(task_id)).result["status"] == "failed"  # type: ignore[index]


async def test_an_instance_that_stops_reports_its_running_tasks_failed(shared: dict[str, Any]) -> None:
    async with serving(instance(shared)) as one:
        gate("interrupted")
        task_id = await Caller(one, ALICE).start("held", {"gate": "interrupted"})
        await saw(("started", "interrupted"))
    async with serving(instance(shared)) as two:
        failed = await Caller(two, ALICE).get(task_id)
    assert failed.result is not None
    assert failed.result["status"] == "failed"
    assert "call the tool again" in failed.result["error"]["message"]


@pytest.fixture(params=STORES)
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    options = options_for(str(request.param), tmp_path, request)
    return None if options is None else RememberPlugin.init(**options, secret=SECRET)


async def test_a_caller_keeps_at_most_task_limit_tasks(any_store: Any) -> None:
    async with serving(build(any_store, task_limit=2)) as http:
        alice, bob = Caller(http, ALICE), Caller(http, BOB)
        await alice.until(await alice.start("required"), "completed")
        await alice.until(await alice.start("required"), "completed")
        refused = await alice.call("required")
        assert refused.result is not None
        assert refused.result["isError"] is True
        assert refused.result["_meta"]["mcpkit/error"]["code"] == "TASK_LIMIT"
        assert "keeps 2 tasks already" in refused.text
        assert await bob.start("required")  # another caller's own count


async def test_a_task_is_kept_for_its_ttl_and_then_forgotten(any_store: Any) -> None:
    clock = ManualClock()
    async with serving(build(any_store, clock=clock, task_ttl=60)) as http:
        alice = Caller(http, ALICE)
        task_id = await alice.start("required")
        done = await alice.until(task_id, "completed")
        assert done["ttlMs"] == 60_000
        clock.advance(59)
        assert (await alice.get(task_id)).result is not None
        clock.advance(2)
        gone = await alice.get(task_id)
        assert gone.error is not None
        assert gone.error["code"] == -32602
