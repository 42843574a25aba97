"""A real ``mcpkit run`` process on 127.0.0.1 for the core tests that depend on uvicorn, and raw sockets to it."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: A server for the tests that need real connections: anonymous callers welcome, one tool.
SERVED_FILE = textwrap.dedent(
    '''
    """Served by the core tests over real sockets."""

    from mcpkit import Server, ToolContext, app, tool


    @tool(name="echo", description="Answers with the length of the text it was given.")
    class Echo(ToolContext):
        async def execute(self, text: str) -> dict[str, int]:
            return {"length": len(text)}


    @tool(name="blob", description="Answers with as many x as asked for (a large response).")
    class Blob(ToolContext):
        async def execute(self, size: int) -> dict[str, str]:
            return {"text": "x" * min(size, 16_000_000)}


    @app(id="served", tools=[Echo, Blob])
    class ServedApp: ...


    server = Server([ServedApp], name="served", allow_anonymous=True)
    '''
)
#: A real process gives no clock to move: bounds, not sleeps.
START_SECONDS = 20.0
ANSWER_SECONDS = 5.0


@contextlib.contextmanager
def mcpkit_run(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[int]:
    """``mcpkit run served.py:server --port 0 ARGS`` as a real process; yields the port it printed."""
    (tmp_path / "served.py").write_text(SERVED_FILE)
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "run", "served.py:server", "--port", "0", "--log-level", "warning", *args],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], START_SECONDS)
        assert ready, f"mcpkit run printed nothing within {START_SECONDS:g} s"
        line = process.stdout.readline()
        url = line.split(" at ", 1)[1].split(" ", 1)[0]
        yield int(url.rsplit(":", 1)[1].split("/", 1)[0])
    finally:
        stop(process)


def stop(process: subprocess.Popen[Any]) -> None:
    """Stop a server this test started, by its PID: SIGTERM, then SIGKILL if it is still there after 10 s."""
    if process.poll() is not None:
        return
    os.kill(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    """A TCP connection to the server from the loopback address ``source`` (any 127.x works on Linux)."""
    return socket.create_connection(("127.0.0.1", port), timeout=ANSWER_SECONDS, source_address=(source, 0))


def read_response(sock: socket.socket) -> bytes:
    """One whole HTTP response (head and ``Content-Length`` body); b"" if the server closed the connection."""
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = sock.recv(65536)
        if not chunk:
            return received
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    length = next(
        (int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")),
        0,
    )
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def exchange(sock: socket.socket, *headers: str) -> bytes:
    """A ``GET /elsewhere`` (answered 404 by the app at once) on a kept-alive connection, and its response."""
    lines = ["GET /elsewhere HTTP/1.1", "Host: 127.0.0.1", *headers, "", ""]
    sock.sendall("\r\n".join(lines).encode())
    return read_response(sock)
