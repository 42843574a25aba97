"""Two server processes sharing one Redis and one REMEMBER_SECRET behave as one server.

Each instance is a real ``mcpkit run`` subprocess (uvicorn on its own loopback port), called through
the official ``mcp`` client over HTTP with a bearer key, in both protocol eras. Both use the shared
test Redis under a key prefix of this module's own, deleted afterwards.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from redis_fixtures import delete_prefix
from reliability.figures import Figures
from reliability.fleet_client import (
    ERAS,
    FLEET,
    Tally,
    call,
    connected,
    fleet_env,
    log_tracebacks,
    one_call,
    text_of,
)
from reliability.processes import ServerProcess

CALLERS_PER_INSTANCE = 8
INCREMENTS_PER_CALLER = 20
NOTES = 7
PAGE = 3

Fleet = tuple[ServerProcess, ServerProcess]


@pytest.fixture(scope="module")
def fleet(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    """Two fleet servers on one Redis (a prefix of this module's own) and one secret, started side by side."""
    prefix = f"mcpkit-test:{uuid.uuid4().hex}:"
    cwd: Path = tmp_path_factory.mktemp("instances")
    env = fleet_env(redis_url, redis_prefix=prefix)
    first, second = ServerProcess(FLEET, cwd=cwd, env=env), ServerProcess(FLEET, cwd=cwd, env=env)
    try:
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(ServerProcess.start, (first, second)))
        yield first, second
    finally:
        first.kill()
        second.kill()
        delete_prefix(redis_url, prefix)


@pytest.mark.parametrize("era", ERAS)
async def test_a_value_nour_sets_through_one_instance_is_read_through_the_other(
    fleet: Fleet, era: str, figures: Figures
) -> None:
    first, second = fleet
    tally = Tally()
    key = f"signature-{uuid.uuid4().hex[:8]}"
    pids = [tally.take(await one_call(server.url, "nour", era, "ping"))["pid"] for server in fleet]

    tally.take(await one_call(first.url, "nour", era, "put", {"key": key, "value": "Nour, Tier 2"}))
    through_second = {
        other: tally.take(await one_call(second.url, "nour", other, "read", {"keys": [key]}))["values"][key]
        for other in ERAS
    }
    sams = tally.take(await one_call(second.url, "sam", era, "read", {"keys": [key]}))["values"][key]
    tally.take(await one_call(second.url, "nour", era, "put", {"key": key, "value": "Nour, Tier 3"}))
    back_on_first = tally.take(await one_call(first.url, "nour", era, "read", {"keys": [key]}))["values"][key]

    leaks = int(sams is not None)
    lost = sum(value != "Nour, Tier 2" for value in through_second.values()) + int(back_on_first != "Nour, Tier 3")
    figures.record(
        callers=2,
        calls=tally.calls,
        faults=0,
        lost=lost,
        leaks=leaks,
        internal_errors=tally.internal_errors + log_tracebacks(first, second),
        detail=f"Two mcpkit run processes on one Redis: a value written through one is read through the other ({era}).",
    )
    assert pids == [first.pid, second.pid]  # two processes really answered
    assert through_second == {"2026-07-28": "Nour, Tier 2", "legacy": "Nour, Tier 2"}
    assert sams is None  # Sam's user scope is Sam's, whichever instance answers
    assert back_on_first == "Nour, Tier 3"
    assert log_tracebacks(first, second) == 0


async def test_concurrent_increments_through_two_instances_lose_nothing(fleet: Fleet, figures: Figures) -> None:
    key = f"visits-{uuid.uuid4().hex[:8]}"
    tally = Tally()
    returned: list[int] = []

    async def caller(url: str, era: str) -> None:
        async with connected(url, "nour", era) as client:
            for _ in range(INCREMENTS_PER_CALLER):
                returned.append(tally.take(await call(client, "count", {"key": key}))["count"])

    async with asyncio.TaskGroup() as group:
        for server in fleet:
            for number in range(CALLERS_PER_INSTANCE):
                group.create_task(caller(server.url, ERAS[number % 2]))
    finals = [
        tally.take(await one_call(server.url, "nour", ERAS[0], "read", {"keys": [key]}))["values"][key]
        for server in fleet
    ]

    total = len(fleet) * CALLERS_PER_INSTANCE * INCREMENTS_PER_CALLER
    lost = total - len(set(returned) & set(range(1, total + 1)))
    figures.record(
        callers=len(fleet) * CALLERS_PER_INSTANCE,
        calls=tally.calls,
        faults=0,
        lost=lost,
        leaks=0,
        internal_errors=tally.internal_errors + log_tracebacks(*fleet),
        detail=(
            f"{len(fleet)} processes x {CALLERS_PER_INSTANCE} concurrent callers x {INCREMENTS_PER_CALLER} "
            "increments of one Redis counter, half of the callers on each era."
        ),
    )
    assert sorted(returned) == list(range(1, total + 1))  # every increment saw its own number, no gap
    assert finals == [total, total]
    assert lost == 0
    assert log_tracebacks(*fleet) == 0


async def test_a_list_memories_cursor_from_one_instance_is_accepted_by_the_other(
    fleet: Fleet, figures: Figures
) -> None:
    first, second = fleet
    tally = Tally()
    notes = [f"note-{number}" for number in range(NOTES)]
    async with connected(first.url, "nour", ERAS[0]) as nour:
        for note in notes:
            tally.take(await call(nour, "remember_this", {"key": note, "value": note.upper(), "scope": "user"}))

    # Page through, alternating instances and eras: each page's cursor goes to the other instance.
    listed: list[str] = []
    cursors: list[str] = []
    cursor: str | None = None
    for page in range(NOTES):
        server, era = fleet[page % 2], ERAS[page % 2]
        arguments = {"scope": "user", "limit": PAGE} | ({"cursor": cursor} if cursor else {})
        answer = tally.take(await one_call(server.url, "nour", era, "list_memories", arguments))
        listed += answer["keys"]
        cursor = answer["nextCursor"]
        if cursor is None:
            break
        cursors.append(cursor)

    # Nour's cursor, presented by Sam to the other instance: refused, and nothing of Nour's shown.
    sams = await one_call(second.url, "sam", ERAS[1], "list_memories", {"scope": "user", "cursor": cursors[0]})
    sams_code = tally.code_of(sams)

    lost = len(set(notes) - set(listed))
    leaks = int(sams_code is None) + sum(note in text_of(sams) for note in notes)
    figures.record(
        callers=2,
        calls=tally.calls,
        faults=0,
        lost=lost,
        leaks=leaks,
        internal_errors=tally.internal_errors + log_tracebacks(first, second),
        detail=(
            f"{NOTES} notes listed {PAGE} at a time, each page's list_memories cursor presented to the other "
            "process (and era); Sam presenting Nour's cursor is refused."
        ),
    )
    assert listed == sorted(notes)  # every page continued where the other instance stopped: no gap, no repeat
    assert len(cursors) == (NOTES - 1) // PAGE
    assert sams_code == "REMEMBER_INVALID"
    assert leaks == 0
    assert log_tracebacks(first, second) == 0
