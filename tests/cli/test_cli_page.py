"""Every command docs/cli.md shows runs as written, beside the page's app.py, in a home folder of its own.

The long-running ones (``run``, ``dev``) are started until they serve, called once, and stopped; they get
``--port 0`` (and ``dev`` a free ``--inspector-port`` and ``--no-browser``) so that test runs on one machine do
not meet on the default ports.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from ci import missing
from cli._commands import KEY, call_tool, running
from mcpkit._cli._inspector import cache_dir, ensure_inspector
from mcpkit.base import StartupError

PAGE = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
_BLOCK = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)


def blocks(kind: str) -> list[str]:
    return [body for found, body in _BLOCK.findall(PAGE.read_text()) if found == kind]


COMMANDS = [line for body in blocks("bash") for line in body.splitlines() if line.strip()]
APP = next(body for body in blocks("python") if body.startswith("# app.py"))


def test_the_page_shows_every_command() -> None:
    shown = {shlex.split(line, comments=True)[1] for line in COMMANDS}

    assert shown == {"run", "dev", "inspect", "install", "--version"}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "home").mkdir()
    return tmp_path


def page_environment(folder: Path) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name != "XDG_CONFIG_HOME"}
    scripts = str(Path(sys.executable).parent)  # where `mcpkit` is, as after `pip install mcpkit`
    home = {"HOME": str(folder / "home"), "MCPKIT_INSPECTOR_CACHE": str(cache_dir())}  # the Inspector installed once
    return env | home | {"PATH": scripts + os.pathsep + env["PATH"]}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("line", COMMANDS)
def test_the_command_runs_as_the_page_shows(folder: Path, line: str) -> None:
    words = shlex.split(line, comments=True)
    env = page_environment(folder)
    if words[1] in ("run", "dev"):
        serve(folder, words, env)
        return
    if ">" in words:
        at = words.index(">")
        words, output = words[:at], Path(folder / words[at + 1]) if words[at + 1] != "/dev/null" else Path(os.devnull)
    else:
        output = None
    done = subprocess.run(words, cwd=folder, env=env, capture_output=True, text=True, timeout=120, check=False)

    assert done.returncode == 0, done.stderr
    if output is not None and output != Path(os.devnull):
        output.write_text(done.stdout)
        assert output.read_text().startswith("{")


def serve(folder: Path, words: list[str], env: dict[str, str]) -> None:
    extra = ["--port", "0"]
    if words[1] == "dev":
        try:
            ensure_inspector(cache_dir(), print)
        except StartupError as exc:
            missing(f"the MCP Inspector cannot be installed here: {exc}")
        extra += ["--inspector-port", str(free_port()), "--no-browser"]
        env = env | {"MCP_SANDBOX_PORT": "0", "MCP_APP_ORIGIN_PORT": "0"}
    with running(folder, *words[1:], *extra, env=env) as served:
        answer = call_tool(served.url(), "greet", {"name": "Nour"}, key=KEY)
        if words[1] == "dev":
            served.line_starting("mcpkit: open the MCP Inspector at ")
        code = served.stop(signal.SIGINT)

    assert answer == "Hello, Nour!"
    assert code == 0
