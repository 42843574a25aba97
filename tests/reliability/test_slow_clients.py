"""Slow clients against a real ``mcpkit run`` process: half-sent requests are cut off, and never lock anyone out.

uvicorn alone times out no request whose head never finishes, and serves until the process runs out of
open files (1,024 is the common limit): an attacker holding about a thousand half-sent request lines
locked every caller out. These tests attack a fleet server process with real sockets, from an attacker
process of its own (``slowloris.py``), while a legitimate caller keeps calling from an address of its own
(127.0.0.2; any 127.x reaches a server bound to 127.0.0.1), as a real caller does: at the connection cap the
server closes a waiting connection of the client holding the most, so a caller sharing the attacker's address
is that client, and its kept-alive connection, idle between two calls, is closed under it now and then (the
caller's next request on it met a reset in a CI run).
"""

from __future__ import annotations

import asyncio
import json
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest

from reliability.figures import Figures
from reliability.fleet import KEYS
from reliability.fleet_client import FLEET, fleet_env
from reliability.processes import serving

SLOWLORIS = Path(__file__).with_name("slowloris.py")
#: The server's open-files limit in the lock-out test: the common default, which it may not raise.
OPEN_FILES = 1024
#: The attacker's sockets: more than the server has files for.
ATTACKER_CONNECTIONS = 1100
ATTACK_SECONDS = 8.0
#: A legitimate call's bound while the attack runs. Generous: three busy processes share two cores, and a new
#: connection may wait for a SYN to be sent again (1 s) while the attacker keeps the accept queue full.
CALL_BOUND_SECONDS = 3.0
#: Sam's calls come from this address, the attacker's from 127.0.0.1.
CALLER_ADDRESS = "127.0.0.2"
#: How long a request may take to arrive in the read-timeout test, and the slack for a loaded machine.
READ_TIMEOUT = 1.0
SLACK_SECONDS = 3.0
PING = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ping", "arguments": {}}}
MODERN_HEADERS = {
    "Authorization": f"Bearer {KEYS['sam']}",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "ping",
}
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


async def legitimate_calls(url: str, seconds: float) -> tuple[dict[bool, list[float]], list[str]]:
    """Sam's ``ping`` calls for ``seconds``, alternately on a kept-alive connection and on a new one each.

    Returns the latencies of each kind (key: on a new connection) and what went wrong, if anything.
    """
    latencies: dict[bool, list[float]] = {False: [], True: []}
    failures: list[str] = []
    body = {**PING, "params": {**PING["params"], "_meta": META}}  # type: ignore[dict-item]
    deadline = time.monotonic() + seconds

    def client() -> httpx2.AsyncClient:
        transport = httpx2.AsyncHTTPTransport(local_address=CALLER_ADDRESS)
        return httpx2.AsyncClient(headers=MODERN_HEADERS, timeout=10, transport=transport)

    async with client() as kept:
        while time.monotonic() < deadline:
            for fresh in (False, True):
                started = time.monotonic()
                try:
                    if fresh:
                        async with client() as once:
                            response = await once.post(url, json=body)
                    else:
                        response = await kept.post(url, json=body)
                    ok = response.status_code == 200 and '"pid"' in response.text
                    if not ok:
                        failures.append(f"HTTP {response.status_code}: {response.text[:200]}")
                except httpx2.HTTPError as exc:
                    failures.append(repr(exc))
                latencies[fresh].append(time.monotonic() - started)
    return latencies, failures


def _can_call_from(address: str) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind((address, 0))
        except OSError:
            return False
    return True


@pytest.mark.skipif(
    not _can_call_from(CALLER_ADDRESS),
    reason=f"{CALLER_ADDRESS} is not a loopback address here (Linux has all of 127.0.0.0/8; macOS only 127.0.0.1)",
)
def test_a_caller_is_served_while_an_attacker_holds_more_half_sent_requests_than_the_server_has_files(
    tmp_path: Path, figures: Figures
) -> None:
    with serving(FLEET, cwd=tmp_path, env=fleet_env("memory"), open_files=OPEN_FILES) as server:
        attacker = subprocess.Popen(
            [sys.executable, str(SLOWLORIS), str(server.port), str(ATTACKER_CONNECTIONS), str(ATTACK_SECONDS)],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            time.sleep(1.5)  # a real attacker process has no clock to move: let it open its sockets
            latencies, failures = asyncio.run(legitimate_calls(server.url, ATTACK_SECONDS - 3))
            attack = json.loads(attacker.communicate(timeout=60)[0])
        finally:
            if attacker.poll() is None:
                attacker.kill()
                attacker.wait(timeout=10)
        assert server.alive(), server.log()
        after, failed_after = asyncio.run(legitimate_calls(server.url, 0.5))
        # Out of open files, asyncio stops accepting anyone for a second: the cap must leave room for the churn.
        assert "out of system resource" not in server.log(), server.log()[-2000:]

    everything = [*latencies[False], *latencies[True]]
    figures.record(
        callers=2,
        calls=len(everything) + len(after[False]) + len(after[True]),
        faults=attack["opened"],
        internal_errors=0,
        detail=(
            f"{ATTACKER_CONNECTIONS} attacker sockets, each holding half a request line and reopened when closed, "
            f"against a server limited to {OPEN_FILES} open files: {attack['opened']} opened, at most "
            f"{attack['most_held']} held at once, {attack['closed_silently']} closed to make room; meanwhile "
            f"{len(everything)} legitimate calls, all answered: on a kept-alive connection "
            f"{_spread(latencies[False])}, "
            f"each on a new connection {_spread(latencies[True])} (bound {CALL_BOUND_SECONDS:g} s)."
        ),
    )
    assert not failures, failures[:5]
    assert not failed_after, failed_after[:5]
    assert max(everything) < CALL_BOUND_SECONDS, latencies
    assert attack["closed_silently"] > 0, attack  # the server was full, and made room for the caller


def test_a_request_that_never_finishes_gets_408_after_the_read_timeout(tmp_path: Path, figures: Figures) -> None:
    head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    attempts = {
        "half a request line": b"POST /mcp HTT",
        "a head that never ends": b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ",
        "nothing at all": b"",
        "a body that never ends": head + b'{"jsonrpc"',
    }
    with serving(FLEET, cwd=tmp_path, env=fleet_env("memory"), args=["--read-timeout", str(READ_TIMEOUT)]) as server:
        sockets = {}
        for name, sent in attempts.items():
            sockets[name] = socket.create_connection(("127.0.0.1", server.port), timeout=READ_TIMEOUT + SLACK_SECONDS)
            sockets[name].sendall(sent)
        started = time.monotonic()
        answers: dict[str, bytes] = {}
        closed_after: dict[str, float] = {}
        for name, sock in sockets.items():
            with sock:
                received = b""
                try:
                    while chunk := sock.recv(4096):
                        received += chunk
                except TimeoutError:
                    received += b"<still open>"
                answers[name] = received
                closed_after[name] = time.monotonic() - started
        assert server.alive(), server.log()

    slowest = max(closed_after.values())
    figures.record(
        inputs=len(attempts),
        internal_errors=0,
        detail=(
            f"{', '.join(attempts)}: each connection closed by the server {READ_TIMEOUT:g} s after it opened "
            f"(read_timeout), the slowest after {slowest:.2f} s; 408 with a JSON body for the ones whose request "
            "never began to arrive whole."
        ),
    )
    assert all(b"<still open>" not in answer for answer in answers.values()), answers
    for name in ("half a request line", "a head that never ends", "nothing at all"):
        assert answers[name].startswith(b"HTTP/1.1 408 Request Timeout\r\n"), answers[name]
        body = json.loads(answers[name].split(b"\r\n\r\n", 1)[1])
        assert "did not arrive within 1 seconds (read_timeout)" in body["error"]["message"]
    assert slowest < READ_TIMEOUT + SLACK_SECONDS


def _spread(latencies: list[float]) -> str:
    return f"median {statistics.median(latencies) * 1000:.0f} ms, worst {max(latencies) * 1000:.0f} ms"
