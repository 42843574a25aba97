"""Done when (issue 36): a newcomer's own project — one tool using ``self.remember``, ``self.elicit`` and a task — is
tested with the fixtures alone, every behaviour asserted, by plain ``pytest`` in a folder of its own, with
``REMEMBER_STORE`` set to a live Redis that stays untouched (under a key prefix of this test's own, checked empty).
The same server run as it serves writes there: the check can fail."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

SERVER = """
from typing_extensions import TypedDict

from mcpkit import Server, StaticKeys, ToolContext, app, tool
from mcpkit_remember import RememberPlugin


class Budget(TypedDict):
    euros: int


@tool(name="plan_trip", description="Plan a trip; asks for your budget once, and remembers it.", task=True)
class PlanTrip(ToolContext):
    async def execute(self, city: str) -> str:
        budget = await self.remember.get("budget", scope="user")
        if budget is None:
            answer = await self.elicit(f"What is your budget for {city}?", Budget)
            if not answer.accepted:
                return f"No trip to {city} without a budget."
            budget = answer.content["euros"]
            await self.remember.set("budget", budget, scope="user")
        return f"{city} on {budget} euros."


@app(id="trips", tools=[PlanTrip], plugins=[RememberPlugin.init(redis_prefix=PREFIX)])
class Trips: ...


def create_server(keys: dict[str, str] = {"nour": "nour-demo-key", "sam": "sam-demo-key"}) -> Server:
    return Server([Trips], auth=StaticKeys(keys))
"""

CONFTEST = """
import pytest

from mcpkit import Server
from server import create_server


@pytest.fixture
def mcpkit_server() -> Server:
    return create_server({"nour": "nour-test-key", "sam": "sam-test-key"})
"""

TESTS = """
import pytest

from mcpkit.testing import CallAs, ToolCallError

only_with_tasks = pytest.mark.parametrize("mcp_protocol", ["2026-07-28"])


async def test_the_budget_is_asked_once_and_remembered(call_as: CallAs) -> None:
    nour = call_as("nour", tasks=True, elicit={"euros": 800})

    assert await nour.call("plan_trip", {"city": "Lisbon"}) == "Lisbon on 800 euros."
    assert await nour.call("plan_trip", {"city": "Porto"}) == "Porto on 800 euros."
    assert [question.message for question in nour.asked] == ["What is your budget for Lisbon?"]


async def test_each_traveller_has_a_budget_of_their_own(call_as: CallAs) -> None:
    await call_as("nour", tasks=True, elicit={"euros": 800}).call("plan_trip", {"city": "Lisbon"})

    sam = call_as("sam", tasks=True, elicit={"euros": 300})

    assert await sam.call("plan_trip", {"city": "Lisbon"}) == "Lisbon on 300 euros."
    assert len(sam.asked) == 1


async def test_no_budget_no_trip_and_nothing_remembered(call_as: CallAs) -> None:
    nour = call_as("nour", tasks=True, elicit=["decline", {"euros": 500}])

    assert await nour.call("plan_trip", {"city": "Lisbon"}) == "No trip to Lisbon without a budget."
    assert await nour.call("plan_trip", {"city": "Lisbon"}) == "Lisbon on 500 euros."


async def test_in_the_request_without_the_tasks_extension(call_as: CallAs) -> None:
    nour = call_as("nour", elicit={"euros": 800})

    assert await nour.call("plan_trip", {"city": "Lisbon"}) == "Lisbon on 800 euros."


async def test_a_client_that_cannot_be_asked_is_told_so(call_as: CallAs) -> None:
    with pytest.raises(ToolCallError) as refused:
        await call_as("nour", tasks=True).call("plan_trip", {"city": "Lisbon"})

    assert refused.value.code == "INPUT_UNAVAILABLE"


@only_with_tasks
async def test_as_a_task_the_question_waits_for_tasks_update(call_as: CallAs) -> None:
    nour = call_as("nour", tasks=True, elicit=[])
    task = await nour.start_task("plan_trip", {"city": "Lisbon"})

    asking = await task.wait("input_required")
    [(key, question)] = (asking.input_requests or {}).items()
    await task.answer({key: {"action": "accept", "content": {"euros": 650}}})

    assert question["params"]["message"] == "What is your budget for Lisbon?"
    assert (await task.result()).content[0].text == "Lisbon on 650 euros."
    assert await nour.call("plan_trip", {"city": "Porto"}) == "Porto on 650 euros."


@only_with_tasks
async def test_a_cancelled_task_remembers_nothing(call_as: CallAs) -> None:
    nour = call_as("nour", tasks=True, elicit=[])
    task = await nour.start_task("plan_trip", {"city": "Lisbon"})
    await task.wait("input_required")

    await task.cancel()

    assert (await task.wait()).status == "cancelled"
    again = await nour.start_task("plan_trip", {"city": "Lisbon"})
    assert (await again.wait("input_required")).status == "input_required"
"""

#: Run outside pytest, as the server serves: the same plugin on the environment's store.
SERVED = """
import asyncio

from mcpkit.testing import running
from server import create_server


async def main() -> None:
    async with running(create_server(), store=None) as call_as:
        print(await call_as("nour", elicit={"euros": 800}).call("plan_trip", {"city": "Lisbon"}))


asyncio.run(main())
"""

#: Tests per protocol era: the two only_with_tasks tests run on 2026-07-28 alone.
EXPECTED_PASSED = 5 * 2 + 2


def keys_under(url: str, prefix: str) -> list[bytes]:
    client = redis.Redis.from_url(url)
    try:
        return list(client.scan_iter(match=f"{prefix}*", count=1000))
    finally:
        client.close()


@pytest.fixture
def prefix(redis_url: str) -> Iterator[str]:
    chosen = f"mcpkit-test-newcomer:{uuid.uuid4().hex}:"
    assert keys_under(redis_url, chosen) == []
    yield chosen
    client = redis.Redis.from_url(redis_url)
    try:
        for name in client.scan_iter(match=f"{chosen}*", count=1000):
            client.delete(name)
    finally:
        client.close()


@pytest.fixture
def project(tmp_path: Path, prefix: str) -> Path:
    """The newcomer's folder: their server (on the store ``REMEMBER_STORE`` names, under ``prefix``), their tests."""
    (tmp_path / "server.py").write_text(f"PREFIX = {prefix!r}\n" + textwrap.dedent(SERVER))
    (tmp_path / "conftest.py").write_text(textwrap.dedent(CONFTEST))
    (tmp_path / "test_trips.py").write_text(textwrap.dedent(TESTS))
    return tmp_path


def production_shell(redis_url: str) -> dict[str, str]:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    environment.update(REMEMBER_STORE=redis_url, REMEMBER_SECRET="the-production-secret-0123456789")
    return environment


def test_a_newcomers_tests_pass_with_plain_pytest_and_never_touch_the_redis_in_their_shell(
    project: Path, redis_url: str, prefix: str
) -> None:
    pytest_script = Path(sys.executable).parent / "pytest"

    done = subprocess.run(
        [str(pytest_script)],
        cwd=project,
        env=production_shell(redis_url),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    summary = done.stdout.strip().splitlines()[-1]
    assert re.search(rf"\b{EXPECTED_PASSED} passed\b", summary), summary
    assert "warning" not in summary, done.stdout[-3000:]
    assert "skipped" not in summary, done.stdout[-3000:]
    assert keys_under(redis_url, prefix) == []


def test_the_same_server_run_as_it_serves_keeps_its_values_in_that_redis(
    project: Path, redis_url: str, prefix: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SERVED)],
        cwd=project,
        env=production_shell(redis_url),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "Lisbon on 800 euros."
    assert keys_under(redis_url, prefix) != []
