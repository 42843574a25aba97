"""`python -m mcpkit_helpdesk` for real: a subprocess on a free port with a SQLite store, driven by the `mcp` client.

Nour's signature outlives a restart of the server; Sam still gets the default.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcpkit_helpdesk import DEFAULT_SIGNATURE, client_snippet

ERAS = ("2026-07-28", "legacy")  # the Client's modes: the newest protocol, and 2025-11-25's handshake
STARTUP_SECONDS = 15.0
REPLY = {"ticketId": "T-1", "text": "Your printer is fixed."}


@dataclass
class Running:
    process: subprocess.Popen[bytes]
    url: str
    output: Path

    def stop(self) -> None:
        """Stop it by its PID (SIGTERM) and wait until uvicorn has shut the app down."""
        self.process.terminate()
        code = self.process.wait(timeout=10)
        assert code in (0, -signal.SIGTERM), self.output.read_text()  # uvicorn re-raises the signal it handled
        assert "Application shutdown complete." in self.output.read_text()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_listening(running: Running, port: int) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if running.process.poll() is not None:
            pytest.fail(
                f"python -m mcpkit_helpdesk exited with {running.process.returncode}:\n{running.output.read_text()}"
            )
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    pytest.fail(f"python -m mcpkit_helpdesk did not listen on port {port} within {STARTUP_SECONDS}s")


@pytest.fixture
def start_helpdesk(tmp_path: Path) -> Iterator[Callable[[], Running]]:
    """Starts `python -m mcpkit_helpdesk` in tmp_path with the demo keys; every process is stopped at teardown."""
    env = {k: v for k, v in os.environ.items() if k not in {"HELPDESK_KEYS", "REMEMBER_SECRET", "REMEMBER_STORE"}}
    started: list[Running] = []

    def start() -> Running:
        port = free_port()
        output = tmp_path / f"run-{len(started) + 1}.out"
        with output.open("wb") as sink:
            process = subprocess.Popen(
                [sys.executable, "-m", "mcpkit_helpdesk", "--port", str(port), "--store", "sqlite:///helpdesk.db"],
                cwd=tmp_path,
                env=env,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        running = Running(process, f"http://127.0.0.1:{port}/mcp", output)
        started.append(running)
        wait_until_listening(running, port)
        return running

    yield start
    for running in started:
        if running.process.poll() is None:
            running.process.kill()
            running.process.wait(timeout=10)


async def call(url: str, key: str, era: str, name: str, arguments: dict[str, Any]) -> Any:
    headers = {"Authorization": f"Bearer {key}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=10) as http,
        Client(streamable_http_client(url, http_client=http), mode=era) as client,
    ):
        result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content
    return result.structured_content


def reply_for(url: str, key: str, era: str) -> str:
    result = asyncio.run(call(url, key, era, "draft_reply", REPLY))
    return str(result["reply"])


def test_nours_signature_survives_a_restart_of_python_m_helpdesk(
    start_helpdesk: Callable[[], Running], tmp_path: Path
) -> None:
    first = start_helpdesk()
    startup = first.output.read_text()
    assert f"Help desk MCP server at {first.url}" in startup
    assert "HELPDESK_KEYS is not set, so the demo keys are in use: nour = nour-demo-key, sam = sam-demo-key" in startup
    assert "SQLite at helpdesk.db" in startup

    set_it = call(first.url, "nour-demo-key", "2026-07-28", "set_signature", {"signature": "Nour, Tier 2"})
    assert asyncio.run(set_it) == {"signature": "Nour, Tier 2"}
    assert reply_for(first.url, "nour-demo-key", "legacy").endswith("\n\nNour, Tier 2")
    first.stop()
    assert (tmp_path / "helpdesk.db").exists()
    assert (tmp_path / "helpdesk.db.secret").exists()  # no REMEMBER_SECRET: the plugin made one beside the db

    second = start_helpdesk()
    for era in ERAS:
        assert reply_for(second.url, "nour-demo-key", era) == "Your printer is fixed.\n\nNour, Tier 2", era
        assert reply_for(second.url, "sam-demo-key", era) == f"Your printer is fixed.\n\n{DEFAULT_SIGNATURE}", era

    # The snippet the startup message prints works as printed, against the real server.
    snippet = client_snippet(second.url, "nour-demo-key")
    assert snippet in second.output.read_text().replace("\n      ", "\n").replace("      import", "import")
    ran = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True, timeout=20, check=False)
    assert ran.returncode == 0, ran.stderr
    assert "Nour, Tier 2" in ran.stdout


def test_a_taken_port_is_one_line_and_no_banner(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in {"HELPDESK_KEYS", "REMEMBER_SECRET", "REMEMBER_STORE"}}
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "mcpkit_helpdesk", "--port", str(port)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    assert done.returncode == 2
    assert done.stderr == (
        f"mcpkit-helpdesk: Port {port} on 127.0.0.1 is already in use by another program: stop it, or choose "
        "another port.\n"
    )
    assert done.stdout == ""


def test_the_banner_comes_once_the_server_accepts_connections(start_helpdesk: Callable[[], Running]) -> None:
    running = start_helpdesk()
    port = int(running.url.rsplit(":", 1)[1].split("/")[0])
    deadline = time.monotonic() + STARTUP_SECONDS
    while "Stop with Ctrl+C." not in running.output.read_text():  # the banner's last line
        assert time.monotonic() < deadline, running.output.read_text()
        time.sleep(0.05)
    log = running.output.read_text()

    assert log.index("Application startup complete.") < log.index(f"Help desk MCP server at {running.url}")
    socket.create_connection(("127.0.0.1", port), timeout=1).close()
