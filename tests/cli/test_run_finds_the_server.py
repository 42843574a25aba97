"""``mcpkit run app.py`` finds the Server by itself, says which it found when it cannot choose, and the commands
explain themselves (``--version``, ``--help`` with examples)."""

from __future__ import annotations

import inspect
import platform
import textwrap
from importlib.metadata import version
from pathlib import Path

import pytest

import mcpkit
from cli._commands import APP, KEY, call_tool, environment, running
from cli._commands import mcpkit as run_mcpkit
from mcpkit import Server
from mcpkit._cli import HTTP_OPTIONS

HEADER = """
from __future__ import annotations

from mcpkit import Server, ToolContext, app, tool


@tool(name="ping", description="Ping.")
class Ping(ToolContext):
    async def execute(self) -> str:
        return "pong from " + __name__


@app(id="pinged", tools=[Ping])
class Pinged: ...
"""


def test_mcpkit_version_names_mcpkit_the_sdk_and_python(tmp_path: Path) -> None:
    done = run_mcpkit(tmp_path, "--version", env=environment())

    assert done.returncode == 0
    python = f"{platform.python_implementation()} {platform.python_version()}"
    assert done.stdout == f"mcpkit {version('mcpkit')} (mcp {version('mcp')}, {python}, {platform.system()})\n"


def test_the_package_version_is_the_installed_one() -> None:
    assert mcpkit.__version__ == version("mcpkit")


@pytest.mark.parametrize("command", ["run", "dev", "inspect", "install"])
def test_every_command_explains_itself_with_examples(tmp_path: Path, command: str) -> None:
    done = run_mcpkit(tmp_path, command, "--help", env=environment())

    assert done.returncode == 0
    assert f"usage: mcpkit {command}" in done.stdout
    assert "examples:" in done.stdout
    assert f"mcpkit {command} " in done.stdout.split("examples:", 1)[1]


async def test_run_app_py_serves_the_one_server_it_holds(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(APP)

    with running(tmp_path, "run", "app.py", "--port", "0", "--log-level", "warning", env=environment()) as served:
        answer = call_tool(served.url(), "greet", {"name": "Nour"})

    assert answer == "hello Nour"


@pytest.mark.parametrize(
    ("body", "target", "said"),
    [
        (
            "a = Server([Pinged], allow_anonymous=True)\nb = Server([Pinged], allow_anonymous=True)\n",
            "two.py",
            "mcpkit: two.py holds 2 Servers (a, b): name the one to use, like two.py:a.\n",
        ),
        (
            "",
            "none.py",
            "mcpkit: none.py holds no mcpkit Server at module level (nor a function annotated `-> Server`): create "
            "one there (server = Server([...])), or name what makes it: none.py:NAME.\n",
        ),
        (
            "def public() -> Server:\n    return Server([Pinged])\n\n\n"
            "def admin() -> Server:\n    return Server([Pinged])\n",
            "factories.py",
            "mcpkit: factories.py has 2 functions returning a Server (admin, public): name the one to use, like "
            "factories.py:admin.\n",
        ),
    ],
    ids=["two-servers", "none", "two-factories"],
)
def test_when_it_cannot_choose_it_names_what_it_found_and_how_to_pick(
    tmp_path: Path, body: str, target: str, said: str
) -> None:
    (tmp_path / target).write_text(HEADER + body)

    done = run_mcpkit(tmp_path, "run", target, env=environment())

    assert done.returncode == 2
    assert done.stderr == said
    assert done.stdout == ""


@pytest.mark.parametrize("target", ["made.py:make", "made.py"], ids=["named", "found"])
def test_a_factory_that_needs_arguments_is_one_line_saying_what_to_do(tmp_path: Path, target: str) -> None:
    (tmp_path / "made.py").write_text(
        HEADER + "def make(name: str, *more: str, debug: bool = False) -> Server:\n    return Server([Pinged])\n"
    )

    done = run_mcpkit(tmp_path, "run", target, env=environment())

    assert done.returncode == 2
    assert done.stderr == (
        "mcpkit: made.py:make takes arguments (name), and mcpkit calls it with none: give them defaults, name a "
        "function that takes none, or create the Server at module level (server = make(...)) and name that.\n"
    )


@pytest.mark.parametrize(
    ("body", "target"),
    [
        ("server = app_server = Server([Pinged], allow_anonymous=True)\n", "one.py"),  # one Server, two names
        (
            "def create_server() -> Server:\n"
            "    return Server([Pinged], allow_anonymous=True)\n\n\ndef helper() -> int:\n    return 1\n",
            "factory.py",
        ),
        (  # a Server at module level wins over the function that made it
            "def create_server() -> Server:\n    return Server([Pinged], allow_anonymous=True)\n\n\n"
            "server = create_server()\n",
            "both.py",
        ),
    ],
    ids=["one-server-two-names", "one-annotated-factory", "instance-over-factory"],
)
async def test_it_finds_one_server_or_one_function_annotated_to_return_one(
    tmp_path: Path, body: str, target: str
) -> None:
    (tmp_path / target).write_text(HEADER + body)

    with running(tmp_path, "run", target, "--port", "0", "--log-level", "warning", env=environment()) as served:
        answer = call_tool(served.url(), "ping", {}, key=None)

    assert answer == f"pong from {Path(target).stem}"


async def test_a_module_target_without_a_name_is_found_too(tmp_path: Path) -> None:
    package = tmp_path / "notes"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "served.py").write_text(APP)

    with running(tmp_path, "run", "notes.served", "--port", "0", "--log-level", "warning", env=environment()) as served:
        answer = call_tool(served.url(), "greet", {"name": "Sam"}, key=KEY)

    assert answer == "hello Sam"


def test_the_run_options_stay_in_step_with_server_run() -> None:
    """Every ``Server.run`` keyword is a ``mcpkit run`` option under the same name, or set by the command itself."""
    by_the_command = {"transport", "host", "port", "user", "log_level", "on_ready", "fd"}
    keywords = set(inspect.signature(Server.run).parameters) - {"self"}

    assert set(HTTP_OPTIONS) == keywords - by_the_command
    assert by_the_command <= keywords


def test_a_module_file_named_after_its_folder_still_loads(tmp_path: Path) -> None:
    """``mcpkit run app.py`` from another folder: the file's folder goes on sys.path, as before."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "helpers.py").write_text("GREETING = 'hi'\n")
    (folder / "app.py").write_text(
        HEADER.replace('"pong from " + __name__', "GREETING")
        + textwrap.dedent(
            """
        from helpers import GREETING

        server = Server([Pinged], allow_anonymous=True)
        """
        )
    )

    done = run_mcpkit(tmp_path, "inspect", "project/app.py", env=environment())

    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("reload", [False, True], ids=["run", "reload"])
async def test_a_package_in_a_src_layout_is_found_in_src(tmp_path: Path, reload: bool) -> None:
    (tmp_path / "src" / "notes").mkdir(parents=True)
    (tmp_path / "src" / "notes" / "__init__.py").write_text(APP)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "notes"\nversion = "0.1.0"\n')

    inspected = run_mcpkit(tmp_path, "inspect", "notes:server", env=environment())
    args = ("run", "notes:server", "--port", "0", "--log-level", "warning", *(["--reload"] if reload else []))
    with running(tmp_path, *args, env=environment()) as served:
        answer = call_tool(served.url(), "greet", {"name": "Sam"}, key=KEY)

    assert inspected.returncode == 0, inspected.stderr
    assert answer == "hello Sam"


def test_app_dir_names_the_folder_a_module_is_imported_from(tmp_path: Path) -> None:
    (tmp_path / "lib" / "notes").mkdir(parents=True)
    (tmp_path / "lib" / "notes" / "__init__.py").write_text(APP)

    found = run_mcpkit(tmp_path, "inspect", "notes", "--app-dir", "lib", env=environment())
    missing = run_mcpkit(tmp_path, "inspect", "notes", "--app-dir", "nowhere", env=environment())

    assert found.returncode == 0, found.stderr
    assert (missing.returncode, missing.stderr) == (2, "mcpkit: --app-dir nowhere: no such folder.\n")
