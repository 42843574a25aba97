"""Three ``mcpkit run`` instances behind a real HAProxy (Debian's package), sharing one PostgreSQL database and one
``REMEMBER_SECRET`` (issue 14): 2026-07-28 requests spread round-robin with exact increments; 2025-11-25
sessions work when the balancer sticks them by ``Mcp-Session-Id`` and get a clear 404 — never another caller's
session — when it does not; ``kill -9`` of an instance under load loses no acknowledged write."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx2
import pytest

from ci import missing
from reliability.figures import Figures
from reliability.fleet import KEYS
from reliability.fleet_client import FLEET, Tally, call, connected, fleet_env, log_tracebacks, one_call
from reliability.haproxy import Balancer, haproxy
from reliability.processes import ServerProcess

INSTANCES = 3
CALLERS = 9
INCREMENTS = 20
LEGACY = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


class Fleet:
    def __init__(self, servers: list[ServerProcess], spread: Balancer, sticky: Balancer) -> None:
        self.servers, self.spread, self.sticky = servers, spread, sticky


@pytest.fixture(scope="module")
def fleet(postgres_database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    binary = haproxy()
    if binary is None:
        missing("haproxy is not installed (Debian: apt-get install haproxy; .ci/run installs it)")
    import psycopg

    schema = f"lb_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres_database, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    store = f"{postgres_database}?options=-csearch_path%3D{schema}"
    cwd: Path = tmp_path_factory.mktemp("balanced")
    servers = [ServerProcess(FLEET, cwd=cwd, env=fleet_env(store)) for _ in range(INSTANCES)]
    with ThreadPoolExecutor(INSTANCES) as pool:
        list(pool.map(ServerProcess.start, servers))
    ports = [server.port for server in servers]
    spread = Balancer(binary, ports, cwd, sticky=False).start()
    sticky = Balancer(binary, ports, cwd, sticky=True).start()
    try:
        yield Fleet(servers, spread, sticky)
    finally:
        spread.stop()
        sticky.stop()
        for server in servers:
            server.kill()
        with psycopg.connect(postgres_database, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


async def test_2026_requests_spread_round_robin_and_increments_are_exact(fleet: Fleet, figures: Figures) -> None:
    key = f"visits-{uuid.uuid4().hex[:8]}"
    tally = Tally()
    returned: list[int] = []
    pids: set[int] = set()

    async def caller() -> None:
        async with connected(fleet.spread.url, "nour", "2026-07-28") as client:
            for _ in range(INCREMENTS):
                returned.append(tally.take(await call(client, "count", {"key": key}))["count"])
                pids.add(tally.take(await call(client, "ping"))["pid"])

    async with asyncio.TaskGroup() as group:
        for _ in range(CALLERS):
            group.create_task(caller())
    final = tally.take(await one_call(fleet.spread.url, "nour", "2026-07-28", "read", {"keys": [key]}))

    total = CALLERS * INCREMENTS
    figures.record(
        callers=CALLERS,
        calls=tally.calls,
        faults=0,
        lost=total - len(set(returned) & set(range(1, total + 1))),
        leaks=0,
        internal_errors=tally.internal_errors + log_tracebacks(*fleet.servers),
        detail=(
            f"HAProxy round-robin over {INSTANCES} instances on one PostgreSQL: {CALLERS} callers x {INCREMENTS} "
            "increments of one counter (2026-07-28), every instance served."
        ),
    )
    assert sorted(returned) == list(range(1, total + 1))
    assert final["values"][key] == total
    assert len(pids) == INSTANCES  # any instance serves any request


async def test_2025_sessions_work_when_sticky_and_get_a_clear_404_when_not(fleet: Fleet, figures: Figures) -> None:
    async with connected(fleet.sticky.url, "nour", "legacy") as client:
        pinned = {(await call(client, "ping")).structured_content["pid"] for _ in range(12)}  # type: ignore[index]

    statuses: dict[int, int] = {}
    async with httpx2.AsyncClient(timeout=10) as http:
        _session, headers = await initialize(http, fleet.spread.url, "nour")
        for number in range(12):
            request = {"jsonrpc": "2.0", "id": number + 1, "method": "tools/call", "params": {"name": "ping"}}
            response = await http.post(fleet.spread.url, json=request, headers=headers)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            if response.status_code == 404:
                assert "Session not found" in response.text
            else:
                assert response.status_code == 200, response.text

    figures.record(
        callers=2,
        calls=24,
        faults=0,
        lost=0,
        leaks=0,
        internal_errors=log_tracebacks(*fleet.servers),
        detail=(
            "2025-11-25 sessions through HAProxy: sticky on Mcp-Session-Id, all 12 calls of a session on one "
            f"instance; without stickiness {statuses.get(404, 0)} of 12 got 404 Session not found, none another's."
        ),
    )
    assert len(pinned) == 1  # every call of the sticky session reached the instance that holds it
    assert statuses.get(404, 0) >= 6  # round-robin over 3: two of every three land elsewhere
    assert set(statuses) <= {200, 404}


async def test_kill_9_of_an_instance_under_load_loses_no_acknowledged_write(fleet: Fleet, figures: Figures) -> None:
    key = f"acked-{uuid.uuid4().hex[:8]}"
    acknowledged = 0
    failed: dict[str, int] = {}
    enough = asyncio.Event()

    async def caller() -> None:
        nonlocal acknowledged
        for _ in range(INCREMENTS * 2):
            try:
                result = await one_call(fleet.spread.url, "sam", "2026-07-28", "count", {"key": key})
            except Exception as exc:  # the instance died under this call: not acknowledged
                name = type(exc).__name__
                failed[name] = failed.get(name, 0) + 1
                continue
            if result.is_error:
                failed["error result"] = failed.get("error result", 0) + 1
                continue
            acknowledged += 1
            if acknowledged >= CALLERS * 5:
                enough.set()

    victim = fleet.servers[0]
    async with asyncio.TaskGroup() as group:
        for _ in range(CALLERS):
            group.create_task(caller())
        async with asyncio.timeout(60):
            await enough.wait()
        victim.kill()
    tally = Tally()
    final = tally.take(await one_call(fleet.spread.url, "sam", "2026-07-28", "read", {"keys": [key]}))["values"][key]

    unacknowledged = sum(failed.values())
    failures = ", ".join(f"{name} {count}" for name, count in failed.items()) or "none"
    figures.record(
        callers=CALLERS,
        calls=CALLERS * INCREMENTS * 2 + 1,
        faults=1,
        lost=max(0, acknowledged - final),
        leaks=0,
        internal_errors=log_tracebacks(*fleet.servers[1:]),
        detail=(
            f"kill -9 of one of {INSTANCES} instances behind HAProxy under {CALLERS} incrementing callers: "
            f"{acknowledged} acknowledged, {unacknowledged} failed ({failures}), counter {final}."
        ),
    )
    assert final >= acknowledged  # no acknowledged increment lost
    assert final <= acknowledged + unacknowledged  # and none counted that nobody asked for


async def initialize(http: httpx2.AsyncClient, url: str, who: str) -> tuple[str, dict[str, str]]:
    message = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    headers = {**LEGACY, "Authorization": f"Bearer {KEYS[who]}"}
    response = await http.post(url, json=message, headers=headers)
    session = response.headers["mcp-session-id"]
    return session, {**headers, "Mcp-Session-Id": session}
