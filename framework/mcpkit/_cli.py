"""The ``mcpkit`` command: ``mcpkit run TARGET``, plus subcommands that installed plugins add."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from .base import ConfigurationError, StartupError
from .server import Server

__all__ = ["load_server", "main"]

#: Entry point group: each entry is ``register(subparsers)`` adding a subcommand.
CLI_GROUP = "mcpkit.cli"


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "handler"):
        parser.print_help()
        return 2
    try:
        return int(args.handler(args) or 0)
    except (CommandError, ConfigurationError) as exc:
        print(f"mcpkit: {exc}", file=sys.stderr)
        return 2
    except StartupError as exc:  # configured well enough, but something it needs is not there (a store)
        print(f"mcpkit: {exc}", file=sys.stderr)
        return 1


class CommandError(Exception):
    """A command was given something it cannot use; printed as one line, without a traceback (exit code 2)."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcpkit",
        description="Run mcpkit MCP servers and manage what their tools remember.",
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    run = commands.add_parser(
        "run",
        help="serve a Server over streamable HTTP (default) or stdio",
        description="Serve TARGET, a `package.module:attr` or `path/to/file.py:attr` naming a mcpkit Server "
        "(or a function returning one). HTTP listens on loopback unless --host says otherwise.",
    )
    run.add_argument("target", help="package.module:attr or path/to/file.py:attr")
    run.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    run.add_argument("--port", type=int, default=8000, help="port to listen on, 0 for any free one (default: 8000)")
    run.add_argument("--stdio", action="store_true", help="serve one client over stdin/stdout instead of HTTP")
    run.add_argument("--user", help="with --stdio: sign the local person in as user id local:USER")
    run.add_argument("--log-level", default="info", help="uvicorn log level (default: info)")
    run.add_argument(
        "--sse",
        dest="json_response",
        action="store_false",
        help="answer every request with SSE (default: plain JSON until a call sends progress, a log message or a "
        "question to the client, then SSE for that call)",
    )
    run.add_argument(
        "--resumable-streams",
        dest="resumable_streams",
        action="store_true",
        default=None,
        help="keep what 2025-11-25 SSE streams carry for a few minutes, so a client that loses one resumes it "
        "with Last-Event-ID (default: on with --sse, off otherwise)",
    )
    limits = run.add_argument_group("HTTP limits (see docs/deployment.md)")
    limits.add_argument(
        "--allowed-host",
        action="append",
        metavar="HOST",
        dest="allowed_hosts",
        help="a Host clients use, like mcp.example.com or mcp.example.com:* (repeat for several); "
        "needed to listen beyond loopback",
    )
    limits.add_argument(
        "--allowed-origin",
        action="append",
        metavar="ORIGIN",
        dest="allowed_origins",
        help="a browser origin allowed to call, like https://app.example.com (repeat for several; "
        "default: the allowed hosts over http and https)",
    )
    limits.add_argument(
        "--max-body-bytes", type=int, help="largest request body (default: 262144, or what a plugin needs)"
    )
    limits.add_argument("--max-sessions", type=int, default=10_000, help="2025-11-25 sessions in all (default: 10000)")
    limits.add_argument("--sessions-per-caller", type=int, default=64, help="sessions per caller (default: 64)")
    limits.add_argument(
        "--calls-per-caller", type=int, default=32, help="requests in progress at once per caller (default: 32)"
    )
    limits.add_argument(
        "--session-idle-timeout", type=float, default=1800.0, help="seconds an unused session lives (default: 1800)"
    )
    limits.add_argument("--max-connections", type=int, help="connections at once (default: 1000, or the ulimit)")
    limits.add_argument(
        "--read-timeout", type=float, default=10.0, help="seconds for a request to arrive whole (default: 10)"
    )
    limits.add_argument(
        "--keep-alive-timeout", type=float, default=5.0, help="seconds an idle connection is kept (default: 5)"
    )
    limits.add_argument(
        "--write-timeout",
        type=float,
        default=30.0,
        help="seconds a client may leave a response unread before its connection ends (default: 30)",
    )
    run.set_defaults(handler=_run)
    for entry in entry_points(group=CLI_GROUP):
        entry.load()(commands)
    return parser


#: The ``run`` options that go to ``Server.run`` under the same name.
_HTTP_OPTIONS = (
    "allowed_hosts",
    "allowed_origins",
    "max_body_bytes",
    "max_sessions",
    "sessions_per_caller",
    "calls_per_caller",
    "session_idle_timeout",
    "max_connections",
    "read_timeout",
    "keep_alive_timeout",
    "write_timeout",
    "json_response",
    "resumable_streams",
)


def _run(args: argparse.Namespace) -> int:
    server = load_server(args.target)
    if args.stdio:
        server.run("stdio", user=args.user)
    else:
        if args.user:
            raise CommandError("--user signs in the stdio caller; use it with --stdio.")
        options = {name: getattr(args, name) for name in _HTTP_OPTIONS}
        server.run("http", host=args.host, port=args.port, log_level=args.log_level, **options)
    return 0


def load_server(target: str) -> Server:
    """Import ``module:attr`` or ``file.py:attr`` and return the Server it names (calling a factory)."""
    location, sep, attr = target.rpartition(":")
    if not sep or not location or not attr:
        raise CommandError(f"TARGET {target!r} must look like package.module:server or path/to/file.py:server.")
    module = _import(location)
    try:
        found: Any = getattr(module, attr)
    except AttributeError:
        raise CommandError(f"{location} has no attribute {attr!r}.") from None
    if not isinstance(found, Server) and callable(found):
        found = found()
    if not isinstance(found, Server):
        raise CommandError(f"{target} is {type(found).__name__}, not a mcpkit Server (or a function returning one).")
    return found


def _import(location: str) -> Any:
    if location.endswith(".py") or os.sep in location or "/" in location:
        path = Path(location).resolve()
        if not path.is_file():
            raise CommandError(f"No such file: {location}")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise CommandError(f"Cannot import {location}")
        loaded = sys.modules.get(path.stem)
        if loaded is not None and getattr(loaded, "__file__", None) == str(path):
            return loaded
        if loaded is not None:
            raise CommandError(
                f"{location}: a module named {path.stem!r} is already imported; rename the file "
                "(or run it as package.module:attr)."
            )
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        sys.path.insert(0, str(path.parent))
        spec.loader.exec_module(module)
        return module
    sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(location)
    except ModuleNotFoundError as exc:
        raise CommandError(f"Cannot import module {location!r}: {exc}") from None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
