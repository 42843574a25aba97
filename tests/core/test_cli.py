"""The ``mcpkit`` command: help, clear errors for bad targets, a real uvicorn server and stdio, both eras."""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from core._served import stop
from core._support import LEGACY, MODERN, NOUR_KEY, bearer, static_user_id
from mcpkit import Server
from mcpkit._cli import load_server, main

ERAS = [MODERN, LEGACY]

SERVER_FILE = textwrap.dedent(
    f'''
    """A tiny server for the CLI tests."""

    from mcpkit import Server, StaticKeys, ToolContext, app, tool


    @tool(name="whoami", description="Who is calling.")
    class WhoAmI(ToolContext):
        async def execute(self) -> dict:
            caller = self.caller
            return {{
                "user_id": caller.user_id,
                "kind": caller.kind,
                "label": caller.label,
                "session_id": caller.session_id,
                "protocol_version": caller.protocol_version,
            }}


    @app(id="cli", tools=[WhoAmI])
    class CliApp:
        pass


    server = Server([CliApp], name="cli-test", auth=StaticKeys({{"nour": "{NOUR_KEY}"}}))


    def make_server():
        return Server([CliApp], name="from-factory", allow_anonymous=True)


    def make_nothing():
        return "not a server"


    not_a_server = 42
    '''
)


@pytest.fixture
def server_file(tmp_path: Path) -> Path:
    path = tmp_path / "cli_test_server.py"
    path.write_text(SERVER_FILE)
    return path


@pytest.fixture
def isolated_imports(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``mcpkit run`` imports user files in-process; undo its sys.path and sys.modules changes."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        del sys.modules[name]


# -- help and errors (in-process) ----------------------------------------------------------------


def test_mcpkit_help_explains_the_run_command() -> None:
    done = subprocess.run(
        [str(Path(sys.executable).parent / "mcpkit"), "--help"], capture_output=True, text=True, timeout=30
    )

    assert done.returncode == 0
    assert "usage: mcpkit" in done.stdout
    assert "run" in done.stdout


def test_mcpkit_run_help_explains_target_host_port_stdio_and_user(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["run", "--help"])

    out = capsys.readouterr().out
    assert exited.value.code == 0
    for word in ("package.module:NAME", "app.py:NAME", "--host", "--port", "--stdio", "--user", "127.0.0.1"):
        assert word in out


def test_mcpkit_without_a_command_prints_help_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: mcpkit" in capsys.readouterr().out


@pytest.mark.usefixtures("isolated_imports")
@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("no_colon_here", "Cannot import module 'no_colon_here'"),
        ("{file}:", "must look like app.py, app.py:server, package.module or package.module:server"),
        ("missing_dir/nowhere.py:server", "No such file: missing_dir/nowhere.py"),
        ("{file}:nothing", "has no attribute 'nothing'"),
        ("{file}:not_a_server", "is int, not a mcpkit Server"),
        ("{file}:make_nothing", "is str, not a mcpkit Server"),
        ("surely_no_such_module_xyz:server", "Cannot import module 'surely_no_such_module_xyz'"),
    ],
)
def test_mcpkit_run_with_a_bad_target_says_what_is_wrong_and_exits_2(
    target: str, expected: str, server_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", target.format(file=server_file)])

    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("mcpkit: ")
    assert expected in err
    assert "Traceback" not in err


@pytest.mark.usefixtures("isolated_imports")
def test_mcpkit_run_refuses_user_without_stdio(server_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", f"{server_file}:server", "--user", "nour"])

    assert code == 2
    assert "--user signs in the stdio caller" in capsys.readouterr().err


@pytest.mark.usefixtures("isolated_imports")
def test_a_target_may_be_a_file_attribute_or_a_factory(server_file: Path) -> None:
    assert load_server(f"{server_file}:server").name == "cli-test"
    assert load_server(f"{server_file}:make_server").name == "from-factory"


@pytest.mark.usefixtures("isolated_imports")
def test_a_target_may_be_a_module_on_the_current_directory(server_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(server_file.parent)

    server = load_server("cli_test_server:server")

    assert isinstance(server, Server)
    assert server.name == "cli-test"


# -- a real uvicorn subprocess on 127.0.0.1 -------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_listening(process: subprocess.Popen[bytes], port: int, timeout: float = 15.0) -> None:
    """Poll the port of a real process (no clock to move here: the process is real)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"mcpkit run exited with {process.returncode} before listening")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.05)
    raise AssertionError(f"mcpkit run did not listen on 127.0.0.1:{port} within {timeout}s")


@pytest.fixture(scope="module")
def uvicorn_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = tmp_path_factory.mktemp("cli") / "cli_test_server.py"
    path.write_text(SERVER_FILE)
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "run", f"{path}:server", "--port", str(port), "--log-level", "warning"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until_listening(process, port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)


@pytest.mark.parametrize("era", ERAS)
async def test_mcpkit_run_serves_http_on_loopback_to_the_official_client_with_a_bearer_key(
    uvicorn_url: str, era: str
) -> None:
    http = httpx2.AsyncClient(headers=bearer(NOUR_KEY), timeout=10)
    mode = MODERN if era == MODERN else "legacy"
    async with http, Client(streamable_http_client(uvicorn_url, http_client=http), mode=mode) as client:
        tools = await client.list_tools()
        result = await client.call_tool("whoami", {})

    assert [t.name for t in tools.tools] == ["whoami"]
    assert result.structured_content is not None
    caller = result.structured_content
    assert caller["user_id"] == static_user_id(NOUR_KEY)
    assert caller["label"] == "nour"
    assert caller["protocol_version"] == era
    assert (caller["session_id"] is None) == (era == MODERN)


async def test_mcpkit_run_over_http_refuses_a_request_without_a_key(uvicorn_url: str) -> None:
    async with httpx2.AsyncClient(timeout=10) as http:
        response = await http.post(uvicorn_url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})

    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Bearer realm="mcp"'


# -- stdio ---------------------------------------------------------------------------------------


def stdio_params(server_file: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "mcpkit", "run", f"{server_file}:server", "--stdio", *extra]
    )


async def whoami_twice_over_stdio(server_file: Path, era: str, *extra: str) -> list[dict[str, Any]]:
    """Start ``mcpkit run --stdio`` as a subprocess, call ``whoami`` twice on one connection in ``era``."""
    mode = MODERN if era == MODERN else "legacy"
    callers = []
    async with Client(stdio_params(server_file, *extra), mode=mode) as client:
        for _ in range(2):
            result = await client.call_tool("whoami", {})
            assert result.structured_content is not None, result
            callers.append(result.structured_content)
    return callers


# Each test starts one process per era, concurrently: importing the SDK dominates the time.


async def test_stdio_with_user_signs_in_the_local_person_with_one_session_in_both_eras(server_file: Path) -> None:
    per_era = await asyncio.gather(*(whoami_twice_over_stdio(server_file, era, "--user", "nour") for era in ERAS))

    for era, (first, second) in zip(ERAS, per_era, strict=True):
        assert first["user_id"] == "local:nour"
        assert first["kind"] == "local"
        assert first["label"] == "nour"
        assert first["protocol_version"] == era
        assert first["session_id"] is not None
        assert second["session_id"] == first["session_id"]
        assert second["user_id"] == "local:nour"


async def test_stdio_without_user_is_anonymous_in_both_eras(server_file: Path) -> None:
    per_era = await asyncio.gather(*(whoami_twice_over_stdio(server_file, era) for era in ERAS))

    for era, (first, _) in zip(ERAS, per_era, strict=True):
        assert first["user_id"] is None
        assert first["kind"] == "anonymous"
        assert first["protocol_version"] == era


def test_python_dash_m_mcpkit_is_the_mcpkit_command(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "run", "no_such_file.py:server"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == "mcpkit: No such file: no_such_file.py"


# -- start-up mistakes: one line, exit code 2, through a real process ---------------------------------

MISTAKES_FILE = textwrap.dedent(
    '''
    """Servers with the mistakes a user makes at start."""

    from mcpkit import ConfigurationError, Plugin, Server, StaticKeys, ToolContext, app, tool


    @tool(name="ping", description="Pong.")
    class Ping(ToolContext):
        async def execute(self) -> dict[str, str]:
            return {"pong": "yes"}


    @app(id="mistakes", tools=[Ping])
    class MistakesApp: ...


    class Refuses(Plugin):
        async def startup(self) -> None:
            raise ConfigurationError("the folder /nowhere does not exist: create it, or set STORE_PATH")


    def fine():
        return Server([MistakesApp], name="fine", auth=StaticKeys({"nour": "nour-key-0123456789"}))


    def no_auth():
        return Server([MistakesApp])


    def short_key():
        return Server([MistakesApp], auth=StaticKeys({"nour": "short"}))


    def refusing_plugin():
        return Server([MistakesApp], allow_anonymous=True, plugins=[Refuses()])


    def unreachable_store():
        from mcpkit_remember import RememberPlugin

        remember = RememberPlugin.init(type="redis", url="redis://127.0.0.1:9/0", secret="a-long-enough-secret-0123")

        @app(id="stored", tools=[Ping], plugins=[remember])
        class StoredApp: ...

        return Server([StoredApp], allow_anonymous=True)
    '''
)


def mcpkit_run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "mistakes.py").write_text(MISTAKES_FILE)
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", "run", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["mistakes.py:no_auth"], "mcpkit: Server 'mcpkit-server' has no auth and allow_anonymous=False, so every"),
        (["mistakes.py:short_key"], "mcpkit: StaticKeys: the key for 'nour' is 5 characters; use at least 8"),
        (["mistakes.py:fine", "--port", "70000"], "mcpkit: port 70000 is not a port number: use 1-65535"),
        (["mistakes.py:fine", "--host", "0.0.0.0"], "mcpkit: The server would listen on '0.0.0.0' (beyond loopback)"),
        (["mistakes.py:fine", "--max-connections", "3"], "mcpkit: max_connections=3 is too few: use 16 or more."),
        (["mistakes.py:fine", "--log-level", "loud"], "mcpkit: log_level 'loud' is not one of: critical, error"),
        (
            ["mistakes.py:refusing_plugin"],
            "mcpkit: Plugin Refuses failed to start: the folder /nowhere does not exist: create it, or set STORE_PATH",
        ),
    ],
    ids=["no-auth", "short-key", "port-out-of-range", "beyond-loopback", "few-connections", "log-level", "plugin"],
)
def test_a_start_up_mistake_is_one_line_naming_what_to_change_and_exit_code_2(
    tmp_path: Path, args: list[str], line: str
) -> None:
    done = mcpkit_run(tmp_path, *args)

    said = [text for text in done.stderr.splitlines() if not text.startswith("INFO:")]  # uvicorn's start-up log
    assert done.returncode == 2, done.stderr
    assert len(said) == 1, done.stderr
    assert said[0].startswith(line)
    assert "Serving" not in done.stdout


def test_a_store_that_cannot_be_reached_at_start_is_one_line_and_exit_code_1(tmp_path: Path) -> None:
    done = mcpkit_run(tmp_path, "mistakes.py:unreachable_store")

    said = [text for text in done.stderr.splitlines() if not text.startswith("INFO:")]
    assert done.returncode == 1, done.stderr
    assert said == [said[0]], done.stderr
    assert said[0].startswith("mcpkit: Plugin RememberPlugin failed to start: Redis at redis://127.0.0.1:9/0 is ")
    assert "Traceback" not in done.stderr
    assert "Serving" not in done.stdout


def test_a_taken_port_is_one_line_and_nothing_says_serving(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = mcpkit_run(tmp_path, "mistakes.py:fine", "--port", str(port))

    assert done.returncode == 2
    assert (
        done.stderr == f"mcpkit: Port {port} on 127.0.0.1 is already in use by another program: stop it, or "
        "choose another port.\n"
    )
    assert done.stdout == ""


@contextlib.contextmanager
def started(tmp_path: Path, *args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``mcpkit run ... --port 0`` as a real process, and the URL it printed once it was serving."""
    (tmp_path / "mistakes.py").write_text(MISTAKES_FILE)
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "run", *args, "--port", "0", "--log-level", "warning"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 20)  # a real process: a bound, not a clock
        assert ready, "mcpkit run printed nothing within 20 s"
        yield process, process.stdout.readline()
    finally:
        os.kill(process.pid, signal.SIGTERM)
        process.wait(timeout=10)


async def test_mcpkit_run_prints_the_mcp_url_it_serves_once_it_is_serving(tmp_path: Path) -> None:
    with started(tmp_path, "mistakes.py:fine") as (_, line):
        assert line.startswith("Serving fine at http://127.0.0.1:")
        url = line.split(" at ", 1)[1].split(" ", 1)[0]
        assert url.endswith("/mcp")
        async with httpx2.AsyncClient(timeout=10) as http:
            response = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})

    assert line.endswith("(Ctrl+C stops it)\n")
    assert response.status_code == 401  # it is really there, and it wants a key


async def test_mcpkit_run_allowed_host_turns_the_host_check_to_that_name(tmp_path: Path) -> None:
    with started(tmp_path, "mistakes.py:fine", "--allowed-host", "mcp.example.com") as (_, line):
        url = line.split(" at ", 1)[1].split(" ", 1)[0]
        headers = {**bearer("nour-key-0123456789"), "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"}
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": MODERN_META}}
        async with httpx2.AsyncClient(timeout=10, headers={**headers, "Accept": "application/json"}) as http:
            named = await http.post(url, json=message, headers={"Host": "mcp.example.com"})
            by_address = await http.post(url, json=message)
            foreign_page = await http.post(
                url, json=message, headers={"Host": "mcp.example.com", "Origin": "https://evil.example"}
            )

    assert named.status_code == 200, named.text
    assert by_address.status_code == 421
    assert foreign_page.status_code == 403


async def test_a_hand_written_2026_request_without_its_header_is_told_what_is_missing(uvicorn_url: str) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": MODERN_META}}
    headers = {**bearer(NOUR_KEY), "Accept": "application/json, text/event-stream"}
    async with httpx2.AsyncClient(timeout=10) as http:
        response = await http.post(uvicorn_url, json=message, headers=headers)

    assert response.status_code == 400
    assert "mcp-session-id" not in response.headers
    error = response.json()["error"]
    assert error["message"].startswith(
        "This request has no 'MCP-Protocol-Version' header and no 'Mcp-Session-Id', so it was read as protocol "
        "2025-11-25, where a session comes first"
    )
    assert "send the header 'MCP-Protocol-Version: 2026-07-28'" in error["message"]
    assert (
        "'io.modelcontextprotocol/protocolVersion' and 'io.modelcontextprotocol/clientCapabilities'"
        in (error["message"])
    )


MODERN_META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
