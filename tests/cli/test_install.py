"""``mcpkit install``: the exact entry each client reads, in its own file, merged with what is there, backed up,
never rewritten from a file it cannot read; and the entry it writes really starts the server."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from cli._commands import APP, environment, mcpkit
from mcpkit._cli._clients import CLIENTS

#: Where each client keeps its servers on Linux, under HOME (XDG_CONFIG_HOME unset).
USER_FILES = {
    "claude-desktop": ".config/Claude/claude_desktop_config.json",
    "claude-code": ".claude.json",
    "cursor": ".cursor/mcp.json",
    "vscode": ".config/Code/User/mcp.json",
}
PROJECT_FILES = {"claude-code": ".mcp.json", "cursor": ".cursor/mcp.json", "vscode": ".vscode/mcp.json"}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "app.py").write_text(APP)
    return tmp_path / "project"


def install(project: Path, home: Path, *args: str) -> tuple[int, str, str]:
    done = mcpkit(project, "install", *args, env=environment(HOME=str(home), XDG_CONFIG_HOME=None))
    return done.returncode, done.stdout, done.stderr


def stdio_entry(project: Path, *, typed: bool) -> dict[str, object]:
    """The entry for ``app.py --user nour --env REMEMBER_STORE=sqlite:///notes.db``: every path absolute."""
    args = ["-P", "-m", "mcpkit", "run", str(project / "app.py"), "--stdio", "--user", "nour"]
    entry: dict[str, object] = {"type": "stdio"} if typed else {}
    env = {"REMEMBER_STORE": f"sqlite:///{project / 'notes.db'}"}
    return entry | {"command": sys.executable, "args": args, "env": env}


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_each_client_gets_its_exact_stdio_entry_in_its_own_file(project: Path, home: Path, client: str) -> None:
    code, out, err = install(
        project, home, "app.py", "--client", client, "--user", "nour", "--env", "REMEMBER_STORE=sqlite:///notes.db"
    )

    path = home / USER_FILES[client]
    assert code == 0, err
    key = "servers" if client == "vscode" else "mcpServers"
    typed = client in ("claude-code", "vscode")
    assert json.loads(path.read_text()) == {key: {"notes": stdio_entry(project, typed=typed)}}
    assert path.read_text().startswith('{\n  "')  # two-space indents, as the clients write them
    title = CLIENTS[client].title
    assert out == f"Added 'notes' to {title}'s servers in {path}. Restart {title} to load it.\n"
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # nothing to back up


@pytest.mark.parametrize(
    ("client", "entry"),
    [
        (
            "claude-code",
            {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer k-1"}},
        ),
        ("cursor", {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer k-1"}}),
        ("vscode", {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer k-1"}}),
    ],
)
def test_a_server_at_a_url_gets_its_exact_entry_with_the_key_as_a_bearer_header(
    project: Path, home: Path, client: str, entry: dict[str, object]
) -> None:
    code, _, err = install(
        project, home, "--client", client, "--url", "https://mcp.example.com/mcp", "--key", "k-1", "--name", "notes"
    )

    path = home / USER_FILES[client]
    assert code == 0, err
    key = "servers" if client == "vscode" else "mcpServers"
    assert json.loads(path.read_text()) == {key: {"notes": entry}}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # a new file holding a key is this user's only


def test_other_servers_and_settings_are_kept_and_the_old_file_is_backed_up(project: Path, home: Path) -> None:
    before = {
        "numStartups": 12,
        "projects": {"/work/other": {"mcpServers": {"local-one": {"type": "stdio", "command": "x", "args": []}}}},
        "mcpServers": {"github": {"type": "http", "url": "https://api.example.com/mcp"}},
    }
    old = json.dumps(before, indent=2) + "\n"
    (home / ".claude.json").write_text(old)
    os.chmod(home / ".claude.json", 0o600)

    code, out, err = install(project, home, "app.py", "--client", "claude-code")

    after = json.loads((home / ".claude.json").read_text())
    assert code == 0, err
    assert list(after) == ["numStartups", "projects", "mcpServers"]
    assert after["numStartups"] == 12
    assert after["projects"] == before["projects"]
    assert list(after["mcpServers"]) == ["github", "notes"]
    assert after["mcpServers"]["github"] == before["mcpServers"]["github"]
    assert (home / ".claude.json.bak").read_text() == old
    assert stat.S_IMODE((home / ".claude.json").stat().st_mode) == 0o600
    assert f"(the old file is {home / '.claude.json.bak'})" in out


def test_a_vscode_file_keeps_its_inputs_and_its_tab_indents(project: Path, home: Path) -> None:
    path = home / USER_FILES["vscode"]
    path.parent.mkdir(parents=True)
    inputs = [{"type": "promptString", "id": "api-key", "description": "API key", "password": True}]
    path.write_text(json.dumps({"inputs": inputs, "servers": {}}, indent="\t") + "\n")

    code, _, err = install(project, home, "app.py", "--client", "vscode")

    assert code == 0, err
    assert json.loads(path.read_text())["inputs"] == inputs
    assert path.read_text().startswith('{\n\t"inputs"')


def test_dry_run_prints_the_file_and_writes_nothing(project: Path, home: Path) -> None:
    code, out, err = install(project, home, "app.py", "--client", "cursor", "--dry-run")

    assert code == 0
    assert json.loads(out)["mcpServers"]["notes"]["args"][-1] == "--stdio"
    assert err == f"mcpkit: dry run: {home / USER_FILES['cursor']} is unchanged.\n"
    assert list(home.iterdir()) == []


def test_a_file_that_is_not_plain_json_is_left_alone(project: Path, home: Path) -> None:
    path = home / USER_FILES["vscode"]
    path.parent.mkdir(parents=True)
    text = '{\n  // my servers\n  "servers": {},\n}\n'
    path.write_text(text)

    code, out, err = install(project, home, "app.py", "--client", "vscode")

    assert code == 1
    assert err.startswith(
        f"mcpkit: {path} is not plain JSON (line 2: Expecting property name enclosed in double quotes)"
    )
    assert "add 'notes' under 'servers' by hand" in err
    assert out == ""
    assert path.read_text() == text
    assert sorted(p.name for p in path.parent.iterdir()) == ["mcp.json"]


def test_the_same_install_twice_changes_nothing_the_second_time(project: Path, home: Path) -> None:
    install(project, home, "app.py", "--client", "cursor")

    code, out, _ = install(project, home, "app.py", "--client", "cursor")

    assert code == 0
    assert out == f"Cursor already has this server as 'notes' in {home / USER_FILES['cursor']}; nothing changed.\n"
    assert sorted(p.name for p in (home / ".cursor").iterdir()) == ["mcp.json"]


def test_a_different_server_of_the_same_name_is_replaced_only_with_force(project: Path, home: Path) -> None:
    install(project, home, "app.py", "--client", "cursor")
    path = home / USER_FILES["cursor"]
    first = path.read_text()

    refused = install(project, home, "app.py", "--client", "cursor", "--user", "sam")
    forced = install(project, home, "app.py", "--client", "cursor", "--user", "sam", "--force")

    assert refused[0] == 2
    assert refused[2] == (
        f"mcpkit: {path} already has a different server named 'notes': pass --force to replace it (the old file is "
        "kept as a backup), or --name to add this one beside it.\n"
    )
    assert forced[0] == 0
    assert json.loads(path.read_text())["mcpServers"]["notes"]["args"][-2:] == ["--user", "sam"]
    assert (home / ".cursor" / "mcp.json.bak").read_text() == first


def test_a_symbolic_link_stays_a_link_to_the_file_it_names(project: Path, home: Path, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "cursor-mcp.json").write_text('{"mcpServers": {}}\n')
    (home / ".cursor").mkdir()
    (home / ".cursor" / "mcp.json").symlink_to(dotfiles / "cursor-mcp.json")

    code, _, err = install(project, home, "app.py", "--client", "cursor")

    assert code == 0, err
    assert (home / ".cursor" / "mcp.json").is_symlink()
    assert "notes" in json.loads((dotfiles / "cursor-mcp.json").read_text())["mcpServers"]


@pytest.mark.parametrize("client", sorted(PROJECT_FILES))
def test_project_scope_writes_the_projects_file(project: Path, home: Path, client: str) -> None:
    code, _, err = install(project, home, "app.py", "--client", client, "--scope", "project")

    assert code == 0, err
    assert "notes" in json.loads((project / PROJECT_FILES[client]).read_text())[CLIENTS[client].servers_key]
    assert list(home.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--client", "claude-desktop", "--url", "https://mcp.example.com/mcp", "--name", "n"], "Claude Desktop's "),
        (["app.py", "--client", "claude-desktop", "--scope", "project"], "Claude Desktop has no project config"),
        (
            ["--client", "cursor", "--url", "https://x.example/mcp", "--key", "k", "--name", "n", "--scope", "project"],
            "--key would write the key into the project's file",
        ),
        (["--client", "cursor", "--url", "https://x.example/mcp", "--name", "n", "--env", "A=1"], "--env is for"),
        (["--client", "cursor", "--url", "ftp://x.example/mcp", "--name", "n"], "--url 'ftp://x.example/mcp' is not"),
        (["--client", "cursor", "--url", "https://x.example/mcp"], "--url without TARGET needs --name"),
        (["app.py", "--client", "cursor", "--key", "k"], "--key is sent to a server at a --url"),
        (["app.py", "--client", "cursor", "--env", "NOT VALID"], "--env 'NOT VALID' must look like NAME=VALUE"),
        (["app.py", "--client", "cursor", "--name", "my server"], "'my server' cannot name a server in a client"),
        (["--client", "cursor"], "Name the server to install"),
    ],
    ids=[
        "desktop-url",
        "desktop-project",
        "key-in-project",
        "env-with-url",
        "not-http",
        "url-unnamed",
        "key-with-stdio",
        "env-shape",
        "name-shape",
        "no-target",
    ],
)
def test_a_mistake_is_one_line_exit_code_2_and_no_file(project: Path, home: Path, args: list[str], said: str) -> None:
    code, out, err = install(project, home, *args)

    assert code == 2
    assert err.startswith("mcpkit: " + said)
    assert len(err.splitlines()) == 1
    assert out == ""
    assert list(home.iterdir()) == []
    assert sorted(p.name for p in project.iterdir()) == ["app.py"]


async def test_the_entry_it_writes_starts_the_server_for_the_client(project: Path, home: Path) -> None:
    install(project, home, "app.py", "--client", "claude-desktop", "--user", "nour")
    entry = json.loads((home / USER_FILES["claude-desktop"]).read_text())["mcpServers"]["notes"]
    env = {"PYTHONPATH": os.environ.get("PYTHONPATH", ""), **entry.get("env", {})}  # this worktree's mcpkit

    parameters = StdioServerParameters(command=entry["command"], args=entry["args"], env=env, cwd=str(home))
    async with Client(stdio_client(parameters)) as client:
        tools = await client.list_tools()
        called = await client.call_tool("greet", {"name": "Nour"})

    assert [tool.name for tool in tools.tools] == ["greet"]
    assert called.content[0].text == "hello Nour"  # type: ignore[union-attr]


def test_a_module_target_brings_the_folder_it_was_found_in(tmp_path: Path, home: Path) -> None:
    package = tmp_path / "project" / "notes"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "served.py").write_text(APP)

    code, _, err = install(tmp_path / "project", home, "notes.served", "--client", "cursor")

    entry = json.loads((home / USER_FILES["cursor"]).read_text())["mcpServers"]["notes"]
    assert code == 0, err
    assert entry["args"] == [
        "-P",
        "-m",
        "mcpkit",
        "run",
        "notes.served",
        "--stdio",
        "--app-dir",
        str(tmp_path / "project"),
    ]
    assert "env" not in entry


@pytest.mark.parametrize(
    ("system", "env", "expected"),
    [
        ("Darwin", {}, "/Users/nour/Library/Application Support/Claude/claude_desktop_config.json"),
        (
            "Windows",
            {"APPDATA": "C:/Users/nour/AppData/Roaming"},
            "C:/Users/nour/AppData/Roaming/Claude/claude_desktop_config.json",
        ),
        ("Linux", {"XDG_CONFIG_HOME": "/cfg"}, "/cfg/Claude/claude_desktop_config.json"),
    ],
)
def test_claude_desktops_file_is_where_each_system_keeps_it(system: str, env: dict[str, str], expected: str) -> None:
    path = CLIENTS["claude-desktop"].path("user", system=system, home=Path("/Users/nour"), env=env, cwd=Path("/p"))

    assert path == Path(expected)


@pytest.mark.parametrize(
    ("system", "expected"),
    [
        ("Darwin", "/Users/nour/Library/Application Support/Code/User/mcp.json"),
        ("Linux", "/Users/nour/.config/Code/User/mcp.json"),
    ],
)
def test_vscodes_user_file_is_in_its_user_folder(system: str, expected: str) -> None:
    path = CLIENTS["vscode"].path("user", system=system, home=Path("/Users/nour"), env={}, cwd=Path("/p"))

    assert path == Path(expected)


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("REMEMBER_SECRET", "a-long-enough-secret-0123"),
        ("HELPDESK_KEYS", "nour=nour-key-0123456789"),
        ("REMEMBER_STORE", "postgresql://nour:hunter2@db.example.com/notes"),
    ],
    ids=["secret", "keys", "password-in-url"],
)
def test_a_secret_is_not_written_into_a_projects_file(project: Path, home: Path, variable: str, value: str) -> None:
    args = ("app.py", "--client", "claude-code", "--scope", "project", "--env", f"{variable}={value}")

    code, _, err = install(project, home, *args)

    assert code == 2
    assert err == (
        f"mcpkit: --env {variable} would write a secret into the project's file, which is shared (committed): "
        "install for yourself (--scope user), or give a reference the client expands instead of the value (Claude "
        f"Code: {variable}=${{{variable}}}, Cursor and VS Code: {variable}=${{env:{variable}}}).\n"
    )
    assert sorted(p.name for p in project.iterdir()) == ["app.py"]


def test_a_reference_the_client_expands_goes_into_a_projects_file(project: Path, home: Path) -> None:
    args = ("app.py", "--client", "claude-code", "--scope", "project", "--env", "REMEMBER_SECRET=${REMEMBER_SECRET}")

    code, _, err = install(project, home, *args)

    assert code == 0, err
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["notes"]
    assert entry["env"] == {"REMEMBER_SECRET": "${REMEMBER_SECRET}"}
    assert stat.S_IMODE((project / ".mcp.json").stat().st_mode) == 0o644


@pytest.mark.parametrize(("env", "mode"), [("REMEMBER_SECRET=a-long-enough-secret-0123", 0o600), ("DEBUG=1", 0o644)])
def test_a_new_file_holding_a_secret_is_readable_by_you_only(project: Path, home: Path, env: str, mode: int) -> None:
    code, _, err = install(project, home, "app.py", "--client", "cursor", "--env", env)

    assert code == 0, err
    assert stat.S_IMODE((home / USER_FILES["cursor"]).stat().st_mode) == mode


async def test_a_file_of_the_project_named_like_a_module_mcpkit_imports_does_not_shadow_it(
    project: Path, home: Path
) -> None:
    """The client may start the server in the project's folder: its json.py is the project's, not the one mcpkit
    imports, and the project's own imports still work."""
    (project / "json.py").write_text(
        '"""The project\'s own JSON helpers."""\n\n\ndef pretty(value):\n    return value\n'
    )
    (project / "wording.py").write_text('GREETING = "hello "\n')
    (project / "app.py").write_text(
        "from wording import GREETING\n" + APP.replace('"hello " + name', "GREETING + name")
    )
    code, _, err = install(project.parent, home, "project/app.py", "--client", "cursor")
    entry = json.loads((home / USER_FILES["cursor"]).read_text())["mcpServers"]["notes"]
    env = {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}  # this worktree's mcpkit

    parameters = StdioServerParameters(command=entry["command"], args=entry["args"], env=env, cwd=str(project))
    async with Client(stdio_client(parameters)) as client:
        called = await client.call_tool("greet", {"name": "Nour"})

    assert code == 0, err
    assert called.content[0].text == "hello Nour"  # type: ignore[union-attr]
