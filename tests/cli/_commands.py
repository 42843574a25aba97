"""Running ``mcpkit`` as a user would: a real subprocess, in a folder of its own, with an environment of its own."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2

#: A real process gives no clock to move: bounds, not sleeps.
START_SECONDS = 30.0

KEY = "nour-key-0123456789"

#: app.py as a newcomer writes it: one Server at module level, a tool, a resource template and a prompt.
APP = textwrap.dedent(
    f'''
    """A small server for the command tests."""

    from mcpkit import PromptContext, ResourceContext, Server, StaticKeys, ToolContext, app, prompt, resource, tool


    @tool(name="greet", description="Greets someone by name.")
    class Greet(ToolContext):
        async def execute(self, name: str) -> str:
            return "hello " + name


    @resource(uri="notes://{{topic}}", name="note", description="A note about a topic.")
    class Note(ResourceContext):
        async def read(self, topic: str) -> str:
            return "about " + topic


    @prompt(name="summarise", description="Summarise a text.")
    class Summarise(PromptContext):
        async def render(self, text: str) -> str:
            return "Summarise: " + text


    @app(id="notes", tools=[Greet], resources=[Note], prompts=[Summarise])
    class Notes: ...


    server = Server([Notes], name="notes", auth=StaticKeys({{"nour": "{KEY}"}}))
    '''
)


def environment(**changes: str | None) -> dict[str, str]:
    """This process's environment (so the worktree's code runs), changed: a None removes a variable."""
    env = dict(os.environ)
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def mcpkit(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``mcpkit ARGS`` to its end, in ``cwd``."""
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


class Running:
    """A long-running ``mcpkit`` process whose output lines are read as they come."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.lines: list[str] = []

    def line_starting(self, prefix: str, seconds: float = START_SECONDS) -> str:
        """The first line (of stdout or stderr) that starts with ``prefix``, waiting at most ``seconds``."""
        deadline = time.monotonic() + seconds
        while True:
            for line in self.lines:
                if line.startswith(prefix):
                    self.lines.remove(line)
                    return line
            left = deadline - time.monotonic()
            streams = [s for s in (self.process.stdout, self.process.stderr) if s is not None and not s.closed]
            assert left > 0, f"no line starting {prefix!r} within {seconds} s; saw {self.lines}"
            ready, _, _ = select.select(streams, [], [], left)
            for stream in ready:
                line = stream.readline()
                if line:
                    self.lines.append(line.rstrip("\n"))
                elif self.process.poll() is not None:
                    raise AssertionError(f"exited {self.process.returncode} before {prefix!r}; saw {self.lines}")

    def url(self) -> str:
        """The URL of the next ``Serving NAME at URL`` line."""
        return self.line_starting("Serving ").split(" at ", 1)[1].split(" ", 1)[0]

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.process.wait(timeout=60)


@contextlib.contextmanager
def running(
    cwd: Path, *args: str, env: dict[str, str] | None = None, python: tuple[str, ...] = ()
) -> Iterator[Running]:
    """``mcpkit ARGS`` as a real process (``python`` options before ``-m``, such as ``-P``, the way the ``mcpkit``
    script runs), stopped by its PID when the block ends (killed if it will not stop)."""
    process = subprocess.Popen(
        [sys.executable, *python, "-m", "mcpkit", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    try:
        yield Running(process)
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def call_tool(url: str, name: str, arguments: dict[str, object], key: str | None = KEY, timeout: float = 30) -> str:
    """One 2026-07-28 tools/call over real HTTP; the text of its first content block."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
        **({"Authorization": f"Bearer {key}"} if key else {}),
    }
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    message["params"]["_meta"] = meta  # type: ignore[index]
    response = httpx2.post(url, json=message, headers=headers, timeout=timeout)
    response.raise_for_status()
    return str(response.json()["result"]["content"][0]["text"])
