"""``mcpkit run --reload``: new code on the same port, requests during a restart wait instead of being refused, a
broken file does not end the watch, and stopping it stops the server."""

from __future__ import annotations

import json
import os
import signal
import socket
import textwrap
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from cli._commands import APP, call_tool, environment, mcpkit, running
from mcpkit._cli._reload import GRACE_SECONDS, STOP_SECONDS


def children(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text()


async def test_a_change_restarts_the_server_with_the_new_code_on_the_same_port(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(APP)
    args = ("run", "app.py", "--reload", "--port", "0", "--log-level", "warning")
    with running(tmp_path, *args, env=environment()) as served:
        first = served.url()
        before = call_tool(first, "greet", {"name": "Nour"})
        (tmp_path / "app.py").write_text(APP.replace('"hello " + name', '"good morning " + name'))
        restarted = served.line_starting("mcpkit: restarting the server")
        second = served.url()
        after = call_tool(second, "greet", {"name": "Nour"})

    assert (before, after) == ("hello Nour", "good morning Nour")
    assert restarted == "mcpkit: restarting the server: app.py changed"
    assert second == first


def test_a_request_sent_while_no_server_runs_waits_and_the_new_code_answers_it(tmp_path: Path) -> None:
    """The socket stays bound and listening between children: a connection queues rather than being refused."""
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    (tmp_path / "app.py").write_text(APP)
    blocked = f"open({str(gate)!r}).read()  # the new code waits for the test to let it import\n" + APP.replace(
        '"hello " + name', '"restarted " + name'
    )
    with running(
        tmp_path, "run", "app.py", "--reload", "--port", "0", "--log-level", "warning", env=environment()
    ) as s:
        url = urlsplit(s.url())
        (tmp_path / "app.py").write_text(blocked)
        s.line_starting("mcpkit: restarting the server")  # the old server has stopped; the new one is importing
        with socket.create_connection((url.hostname, url.port), timeout=30) as waiting:
            waiting.sendall(raw_call(url.netloc, "greet", {"name": "Sam"}))
            with gate.open("w") as opened:  # returns once the new server is reading it: it has not bound anything
                opened.write("go")
            answer = read_response(waiting)
        s.line_starting("Serving ")

    assert answer["result"]["content"][0]["text"] == "restarted Sam"


def test_a_broken_change_leaves_the_watch_running_and_a_fix_serves_again(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(APP)
    with running(
        tmp_path, "run", "app.py", "--reload", "--port", "0", "--log-level", "warning", env=environment()
    ) as s:
        url = s.url()
        (tmp_path / "app.py").write_text(APP + "\ndef broken(:\n")
        s.line_starting("mcpkit: restarting the server")
        stopped = s.line_starting("mcpkit: the server stopped")
        (tmp_path / "app.py").write_text(APP.replace('"hello " + name', '"fixed " + name'))
        s.line_starting("mcpkit: restarting the server")
        answer = call_tool(s.url(), "greet", {"name": "Nour"})

    assert stopped == "mcpkit: the server stopped (exit code 1); a change starts it again"
    assert answer == "fixed Nour"
    assert url


def test_a_first_start_that_fails_keeps_the_watch_and_a_fix_serves(tmp_path: Path) -> None:
    """As uvicorn --reload does: the user's import error is shown, and the next change starts the server."""
    (tmp_path / "app.py").write_text("import no_such_module_here\n" + APP)
    with running(
        tmp_path, "run", "app.py", "--reload", "--port", "0", "--log-level", "warning", env=environment()
    ) as s:
        error = s.line_starting("ModuleNotFoundError")
        stopped = s.line_starting("mcpkit: the server stopped")
        (tmp_path / "app.py").write_text(APP)
        s.line_starting("mcpkit: restarting the server")
        answer = call_tool(s.url(), "greet", {"name": "Nour"})

    assert error == "ModuleNotFoundError: No module named 'no_such_module_here'"
    assert stopped == "mcpkit: the server stopped (exit code 1); a change starts it again"
    assert answer == "hello Nour"


def test_a_file_of_the_project_named_like_a_module_mcpkit_imports_does_not_shadow_it(tmp_path: Path) -> None:
    """Started in the project's folder (``-P``: as the ``mcpkit`` script, which does not put it first on sys.path),
    the server is the project's app.py, and json is the standard library's, not the project's json.py."""
    (tmp_path / "json.py").write_text('"""The project\'s JSON helpers."""\n\n\ndef pretty(value):\n    return value\n')
    (tmp_path / "app.py").write_text(APP)
    args = ("run", "app.py", "--reload", "--port", "0", "--log-level", "warning")
    with running(tmp_path, *args, env=environment(), python=("-P",)) as s:
        answer = call_tool(s.url(), "greet", {"name": "Nour"})

    assert answer == "hello Nour"


def test_a_watch_killed_outright_leaves_no_server_behind_on_its_port(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(APP)
    with running(
        tmp_path, "run", "app.py", "--reload", "--port", "0", "--log-level", "warning", env=environment()
    ) as s:
        url = urlsplit(s.url())
        (server,) = children(s.process.pid)
        s.process.kill()  # SIGKILL: the supervisor cannot stop its child itself
        s.process.wait()
        deadline = time.monotonic() + GRACE_SECONDS + STOP_SECONDS + 10
        while alive(server) and time.monotonic() < deadline:  # a real process: a bounded poll, no clock to move
            time.sleep(0.1)
        orphaned = alive(server)

    assert not orphaned
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((url.hostname, url.port), timeout=5)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_stopping_the_watch_stops_the_server_it_runs(tmp_path: Path, sig: int) -> None:
    (tmp_path / "app.py").write_text(APP)
    with running(
        tmp_path, "run", "app.py", "--reload", "--port", "0", "--log-level", "warning", env=environment()
    ) as s:
        s.url()
        (server,) = children(s.process.pid)
        code = s.stop(sig)

    assert code == 0
    assert not alive(server)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--reload", "--stdio"], "mcpkit: --reload restarts an HTTP server; a stdio client owns the pipe"),
        (["--reload-dir", "."], "mcpkit: --reload-dir says what --reload watches; add --reload."),
        (["--reload", "--reload-dir", "nowhere"], "mcpkit: --reload-dir nowhere: no such folder."),
        (["--reload", "--port", "70000"], "mcpkit: port 70000 is not a port number: use 1-65535"),
        (["--reload"], "mcpkit: No such file: missing.py"),
    ],
    ids=["stdio", "dir-without-reload", "missing-dir", "bad-port", "missing-target"],
)
def test_a_reload_mistake_is_one_line_and_exit_code_2(tmp_path: Path, args: list[str], said: str) -> None:
    (tmp_path / "app.py").write_text(APP)
    target = "missing.py" if said.endswith("missing.py") else "app.py"

    done = mcpkit(tmp_path, "run", target, *args, env=environment())

    assert done.returncode == 2
    assert done.stderr.startswith(said)
    assert len(done.stderr.splitlines()) == 1


def raw_call(host: str, name: str, arguments: dict[str, object]) -> bytes:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    params = {"name": name, "arguments": arguments, "_meta": meta}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).encode()
    head = textwrap.dedent(
        f"""\
        POST /mcp HTTP/1.1
        Host: {host}
        Authorization: Bearer nour-key-0123456789
        Content-Type: application/json
        Accept: application/json, text/event-stream
        MCP-Protocol-Version: 2026-07-28
        Mcp-Method: tools/call
        Mcp-Name: {name}
        Connection: close
        Content-Length: {len(body)}

        """
    ).replace("\n", "\r\n")
    return head.encode() + body


def read_response(sock: socket.socket) -> dict[str, object]:
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    return dict(json.loads(body))
