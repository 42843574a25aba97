"""``mcpkit dev``: the server under ``--reload`` and the pinned Inspector beside it, started with the server's URL
and key so it connects at once, both stopped by PID. The Inspector is really installed (npm, into the cache);
without npm these skip, and under CI=true they fail."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from ci import missing
from cli._commands import APP, KEY, call_tool, environment, mcpkit, running
from mcpkit._cli._inspector import INSPECTOR, NODE_MINIMUM, Inspector, cache_dir, ensure_inspector
from mcpkit.base import StartupError


@pytest.fixture(scope="module")
def inspector() -> Inspector:
    """The pinned Inspector in the cache ``mcpkit dev`` uses, installed once (a real npm install the first time)."""
    try:
        return ensure_inspector(cache_dir(), print)
    except StartupError as exc:
        missing(f"the MCP Inspector cannot be installed here: {exc}")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def children(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def command_line(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]


def environment_of(pid: int) -> dict[str, str]:
    pairs = Path(f"/proc/{pid}/environ").read_bytes().decode().split("\0")[:-1]
    return dict(pair.split("=", 1) for pair in pairs)


def gone(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    return not status.exists() or "zombie" in status.read_text()


def dev_environment(tmp_path: Path, **changes: str | None) -> dict[str, str]:
    """As a developer's shell might be, with a browser that only records what it was asked to open."""
    browser = tmp_path / "browser"
    browser.write_text(
        f"#!{sys.executable}\nimport sys\nopen({str(tmp_path / 'opened.txt')!r}, 'w').write(sys.argv[1])\n"
    )
    browser.chmod(0o755)
    return environment(
        BROWSER=str(browser),
        DANGEROUSLY_OMIT_AUTH="true",  # must not reach the Inspector: its API would be open to any local page
        MCP_SANDBOX_PORT="0",  # the Inspector's other ports: any free ones, beside other test runs
        MCP_APP_ORIGIN_PORT="0",
        **changes,
    )


def test_dev_serves_the_target_and_starts_the_inspector_connected_to_it(tmp_path: Path, inspector: Inspector) -> None:
    (tmp_path / "app.py").write_text(APP)
    port = free_port()
    args = ("dev", "app.py", "--key", KEY, "--port", "0", "--inspector-port", str(port))
    with running(tmp_path, *args, env=dev_environment(tmp_path)) as dev:
        url = dev.url()
        opened = dev.line_starting("mcpkit: opened the MCP Inspector at ")
        server_pid, inspector_pid = sorted(children(dev.process.pid), key=lambda pid: "node" in command_line(pid))
        line = command_line(inspector_pid)
        session = Path(line[-1])
        written = json.loads(session.read_text())
        session_mode = stat.S_IMODE(session.stat().st_mode), stat.S_IMODE(session.parent.stat().st_mode)
        seen = environment_of(inspector_pid)
        page = httpx2.get(f"http://127.0.0.1:{port}/", timeout=30)
        listed = subprocess.run(
            [*line[:2], "--cli", "--config", str(session), "--server", "deep-link", "--method", "tools/list"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        answer = call_tool(url, "greet", {"name": "Nour"})
        code = dev.stop(signal.SIGINT)

    link = opened.removeprefix("mcpkit: opened the MCP Inspector at ")
    token = seen["MCP_INSPECTOR_API_TOKEN"]
    assert line == [str(inspector.node), str(inspector.launcher), "--web", "--config", str(session)]
    assert written == {
        "mcpServers": {
            "deep-link": {
                "type": "http",
                "url": url,
                "protocolEra": "auto",
                "headers": {"Authorization": f"Bearer {KEY}"},
            }
        }
    }
    assert session_mode == (0o600, 0o700)
    assert KEY not in " ".join(line)  # the key is in the session file, not on a command line others can list
    assert {name: seen[name] for name in ("CLIENT_PORT", "HOST", "MCP_AUTO_OPEN_ENABLED")} == {
        "CLIENT_PORT": str(port),
        "HOST": "127.0.0.1",
        "MCP_AUTO_OPEN_ENABLED": "false",
    }
    assert "DANGEROUSLY_OMIT_AUTH" not in seen
    assert link.startswith(f"http://127.0.0.1:{port}/?")
    assert parse_qs(urlsplit(link).query) == {"serverUrl": [url], "transport": ["http"], "autoConnect": [token]}
    assert (tmp_path / "opened.txt").read_text() == link
    assert page.status_code == 200
    assert listed.returncode == 0, listed.stderr
    assert [tool["name"] for tool in json.loads(listed.stdout)["tools"]] == ["greet"]
    assert answer == "hello Nour"
    assert code == 0
    assert gone(server_pid)
    assert gone(inspector_pid)
    assert not session.parent.exists()


@pytest.mark.parametrize(
    ("key", "said"),
    [
        (None, "mcpkit: the server refuses callers without a key, so the Inspector cannot connect: run mcpkit dev "),
        ("not-the-key-000", "mcpkit: the server refused the key it was given (401), so the Inspector cannot connect"),
    ],
    ids=["no-key", "wrong-key"],
)
def test_dev_says_when_the_server_will_refuse_the_inspector(
    tmp_path: Path, inspector: Inspector, key: str | None, said: str
) -> None:
    (tmp_path / "app.py").write_text(APP)
    args = ["dev", "app.py", "--port", "0", "--inspector-port", str(free_port()), "--no-browser"]
    with running(tmp_path, *args, *(["--key", key] if key else []), env=dev_environment(tmp_path)) as dev:
        dev.line_starting("mcpkit: open the MCP Inspector at ")
        told = dev.line_starting(said)

    assert told.startswith(said)
    assert not (tmp_path / "opened.txt").exists()  # --no-browser


def test_a_first_start_that_fails_keeps_dev_running_and_a_fix_serves(tmp_path: Path, inspector: Inspector) -> None:
    (tmp_path / "app.py").write_text("import no_such_module_here\n" + APP)
    args = ["dev", "app.py", "--key", KEY, "--port", "0", "--inspector-port", str(free_port()), "--no-browser"]
    with running(tmp_path, *args, env=dev_environment(tmp_path)) as dev:
        error = dev.line_starting("ModuleNotFoundError")
        dev.line_starting("mcpkit: the server stopped")
        dev.line_starting("mcpkit: open the MCP Inspector at ")  # the Inspector starts all the same
        (tmp_path / "app.py").write_text(APP)
        dev.line_starting("mcpkit: restarting the server")
        answer = call_tool(dev.url(), "greet", {"name": "Nour"})
        still = dev.process.poll()

    assert error == "ModuleNotFoundError: No module named 'no_such_module_here'"
    assert answer == "hello Nour"
    assert still is None


@pytest.mark.parametrize("source", ["key-file", "environment"])
def test_the_key_can_come_from_a_file_or_the_environment_out_of_sight_of_ps(
    tmp_path: Path, inspector: Inspector, source: str
) -> None:
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / ".dev-key").write_text(KEY + "\n")
    given = ["--key-file", ".dev-key"] if source == "key-file" else []
    env = dev_environment(tmp_path, **({"MCPKIT_DEV_KEY": KEY} if source == "environment" else {}))
    args = ["dev", "app.py", *given, "--port", "0", "--inspector-port", str(free_port()), "--no-browser"]
    with running(tmp_path, *args, env=env) as dev:
        dev.line_starting("mcpkit: open the MCP Inspector at ")
        (inspector_pid,) = [pid for pid in children(dev.process.pid) if "node" in command_line(pid)[0]]
        session = json.loads(Path(command_line(inspector_pid)[-1]).read_text())
        seen = command_line(dev.process.pid)

    assert session["mcpServers"]["deep-link"]["headers"] == {"Authorization": f"Bearer {KEY}"}
    assert not any(KEY in part for part in seen)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--key-file", "missing"], "mcpkit: --key-file missing: cannot read it (No such file or directory).\n"),
        (["--key-file", "empty"], "mcpkit: --key-file empty is empty: write the key on its first line.\n"),
    ],
    ids=["missing", "empty"],
)
def test_a_key_file_it_cannot_use_is_one_line_before_anything_starts(
    tmp_path: Path, args: list[str], said: str
) -> None:
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "empty").write_text("\n")

    done = mcpkit(tmp_path, "dev", "app.py", *args, "--inspector-port", str(free_port()), env=environment())

    assert (done.returncode, done.stderr) == (2, said)


def test_a_taken_inspector_port_is_one_line_before_anything_starts(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(APP)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = mcpkit(tmp_path, "dev", "app.py", "--inspector-port", str(port), env=environment())

    assert done.returncode == 2
    assert done.stderr == (
        f"mcpkit: Port {port} on 127.0.0.1, where the Inspector would listen, is in use (another Inspector?): stop "
        "it, or pass --inspector-port with a free port.\n"
    )


def test_without_npm_dev_says_what_to_install_and_exits_1(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(APP)
    only_python = tmp_path / "bin"
    only_python.mkdir()
    (only_python / "python").symlink_to(sys.executable)
    env = environment(PATH=str(only_python), MCPKIT_INSPECTOR_CACHE=str(tmp_path / "cache"))

    done = mcpkit(tmp_path, "dev", "app.py", "--inspector-port", str(free_port()), env=env)

    assert done.returncode == 1
    assert done.stderr == (
        f"mcpkit: mcpkit dev installs the MCP Inspector ({INSPECTOR}) with npm, and npm is not on PATH: install "
        "Node.js (it brings npm), or serve with `mcpkit run --reload` and connect a client yourself.\n"
    )


def test_a_new_enough_node_on_path_runs_the_inspector(
    tmp_path: Path, inspector: Inspector, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where PATH has Node 22.19+, no Node is installed beside the Inspector (macOS has no Node 22 on npm)."""
    from mcpkit._cli import _inspector

    folder = tmp_path / "node22"
    folder.mkdir()
    (folder / "node").symlink_to(inspector.node)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")

    assert _inspector._node_on_path() == folder / "node"


def test_the_inspector_connects_from_the_deep_link_in_a_real_browser(tmp_path: Path, inspector: Inspector) -> None:
    """Where a headless Chromium is installed: the page the link opens reports itself connected."""
    chromium = shutil.which("chromium-headless-shell") or shutil.which("chromium")
    if chromium is None:
        pytest.skip("no headless Chromium here (apt-get install chromium-headless-shell) to load the Inspector's page")
    (tmp_path / "app.py").write_text(APP)
    args = ["dev", "app.py", "--key", KEY, "--port", "0", "--inspector-port", str(free_port()), "--no-browser"]
    with running(tmp_path, *args, env=dev_environment(tmp_path)) as dev:
        dev.url()
        link = dev.line_starting("mcpkit: open the MCP Inspector at ").rsplit(" ", 1)[1]
        page = subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--virtual-time-budget=30000",
                "--dump-dom",
                link,
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    assert 'data-deeplink="parsed"' in page.stdout
    assert 'data-status="connected"' in page.stdout


def test_the_help_desk_banner_names_the_inspector_dev_installs() -> None:
    import mcpkit_helpdesk._startup as banner

    assert banner.INSPECTOR == INSPECTOR
    assert ".".join(map(str, NODE_MINIMUM)) == banner.INSPECTOR_NODE
