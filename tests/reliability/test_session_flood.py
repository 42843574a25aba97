"""A flood of ``initialize`` by one caller against a real ``mcpkit run`` process never refuses another caller.

Before, one caller (any key holder, or an anonymous client) that sent as many ``initialize`` requests as
the session table holds locked every caller out of 2025-11-25 for the 30-minute idle timeout. Here Nour
floods a fleet server whose table holds 1,000 sessions with more than that, never finishing a handshake,
while Sam keeps opening sessions with the official ``mcp`` client and calling through them.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from pathlib import Path

import httpx2

from reliability.figures import Figures
from reliability.fleet import KEYS
from reliability.fleet_client import FLEET, call, connected, fleet_env
from reliability.processes import serving

TABLE = 1000
FLOOD = TABLE + 200
FLOOD_CONNECTIONS = 8
#: One of Sam's sessions (open, call, close) while the flood runs. Generous: two busy processes, two cores.
SESSION_BOUND_SECONDS = 5.0
CLIENT = {"name": "flood", "version": "1"}
INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT},
    }
).encode()
FLOOD_HEADERS = {
    "Authorization": f"Bearer {KEYS['nour']}",
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
}


async def flood(url: str) -> tuple[dict[int, int], list[str]]:
    """Nour's ``initialize`` requests, never followed by ``notifications/initialized``: statuses, session ids."""
    statuses: dict[int, int] = {}
    minted: list[str] = []
    left = FLOOD
    async with httpx2.AsyncClient(headers=FLOOD_HEADERS, timeout=30) as http:

        async def sender() -> None:
            nonlocal left
            while left > 0:
                left -= 1
                response = await http.post(url, content=INITIALIZE)
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
                if "mcp-session-id" in response.headers:
                    minted.append(response.headers["mcp-session-id"])

        await asyncio.gather(*(sender() for _ in range(FLOOD_CONNECTIONS)))
    return statuses, minted


async def sams_sessions(url: str, until: asyncio.Task[object]) -> tuple[list[float], list[str]]:
    """Sam opens a session, calls ``ping`` through it and closes it, again and again while ``until`` runs."""
    seconds: list[float] = []
    failures: list[str] = []
    while not until.done() or not seconds:
        started = time.monotonic()
        try:
            async with connected(url, "sam", "legacy") as client:
                result = await call(client, "ping")
                if result.is_error:
                    failures.append(f"ping failed: {result.content}")
        except Exception as exc:
            failures.append(repr(exc))
        seconds.append(time.monotonic() - started)
    return seconds, failures


async def attack(url: str) -> tuple[dict[int, int], list[str], list[float], list[str], bool]:
    flooding = asyncio.create_task(flood(url))
    seconds, failures = await sams_sessions(url, flooding)
    statuses, minted = await flooding
    async with httpx2.AsyncClient(headers=FLOOD_HEADERS, timeout=30) as http:
        oldest = await http.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Mcp-Session-Id": minted[0], "MCP-Protocol-Version": "2025-11-25"},
        )
    return statuses, minted, seconds, failures, oldest.status_code == 404


def test_one_callers_initialize_flood_beyond_the_session_table_never_refuses_another_caller(
    tmp_path: Path, figures: Figures
) -> None:
    args = ["--max-sessions", str(TABLE)]
    with serving(FLEET, cwd=tmp_path, env=fleet_env("memory"), args=args) as server:
        started = time.monotonic()
        statuses, minted, seconds, failures, oldest_ended = asyncio.run(attack(server.url))
        elapsed = time.monotonic() - started
        assert server.alive(), server.log()

    figures.record(
        callers=2,
        calls=FLOOD + 2 * len(seconds),
        faults=FLOOD,
        internal_errors=0,
        detail=(
            f"Nour sent {FLOOD:,} initialize requests ({FLOOD_CONNECTIONS} connections, no handshake finished) to a "
            f"server whose session table holds {TABLE:,}, in {elapsed:.1f} s: statuses {statuses}, her oldest "
            f"sessions ended to keep her at sessions_per_caller=64. Meanwhile Sam opened {len(seconds)} sessions "
            f"with the official client and called through each: all served, median {statistics.median(seconds):.2f} "
            f"s per session, worst {max(seconds):.2f} s (bound {SESSION_BOUND_SECONDS:g} s)."
        ),
    )
    assert not failures, failures[:5]
    assert max(seconds) < SESSION_BOUND_SECONDS, seconds
    assert statuses == {200: FLOOD}
    assert oldest_ended
    assert len(minted) == FLOOD
