"""The ``mcpkit`` command's parser, its ``--version``, and the one-line errors and exit codes every command shares."""

from __future__ import annotations

import argparse
import os
import platform
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points, version

from .. import __version__
from ..base import ConfigurationError, StartupError
from ._audit import add_audit
from ._dev import add_dev
from ._inspect import add_inspect
from ._install import add_install
from ._run import add_run
from ._target import CommandError

__all__ = ["CLI_GROUP", "handled", "main", "parser"]

#: Entry point group: each entry is ``register(subparsers)`` adding a subcommand.
CLI_GROUP = "mcpkit.cli"

_EXAMPLES = """\
examples:
  mcpkit run app.py                      serve app.py's Server on http://127.0.0.1:8000/mcp
  mcpkit dev app.py --key KEY            serve it, restart on changes, and open the MCP Inspector signed in
  mcpkit inspect app.py                  its tools, resources and prompts as JSON, schemas checked
  mcpkit install app.py --client cursor  add it to Cursor's MCP servers (Cursor starts it over stdio)
  mcpkit audit changed audit.db --key H  which calls changed a key (the memory audit; see its --help)

Each command has --help with more. Exit codes: 0 done, 1 something it needs is not there (a store, npm),
2 a mistake in the command or the server's configuration (one line says which), 3 a command's own finding
(see its --help).
"""


def main(argv: Sequence[str] | None = None) -> int:
    commands = parser()
    args = commands.parse_args(argv)
    if not hasattr(args, "handler"):
        commands.print_help()
        return 2
    return handled(lambda: int(args.handler(args) or 0))


def handled(command: Callable[[], int]) -> int:
    """Run ``command``; a mistake is one line and exit code 2, something missing one line and exit code 1."""
    try:
        return command()
    except (CommandError, ConfigurationError) as exc:
        print(f"mcpkit: {exc}", file=sys.stderr)
        return 2
    except StartupError as exc:  # configured well enough, but something it needs is not there (a store, npm)
        print(f"mcpkit: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # `mcpkit inspect app.py | head`: the reader has gone; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def parser() -> argparse.ArgumentParser:
    """The ``mcpkit`` parser with every command, the installed plugins' included."""
    made = argparse.ArgumentParser(
        prog="mcpkit",
        description="Run, inspect and install mcpkit MCP servers, and manage what their tools remember.",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    made.add_argument("--version", action="version", version=describe_version())
    commands = made.add_subparsers(title="commands", metavar="COMMAND")
    add_run(commands)
    add_dev(commands)
    add_inspect(commands)
    add_install(commands)
    add_audit(commands)
    for entry in entry_points(group=CLI_GROUP):
        entry.load()(commands)
    return made


def describe_version() -> str:
    """``mcpkit 0.1.0 (mcp 2.3.0, CPython 3.11.2, Linux)``: what a bug report needs."""
    python = f"{platform.python_implementation()} {platform.python_version()}"
    return f"mcpkit {__version__} (mcp {version('mcp')}, {python}, {platform.system()})"
