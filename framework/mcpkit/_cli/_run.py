"""``mcpkit run TARGET``: serve a Server over streamable HTTP (or stdio), once or restarted on changes."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..http import DEFAULT_RETRY_MS
from ._reload import Supervisor, add_reload_dirs, watched_dirs
from ._target import CommandError, add_target, load_server

__all__ = ["HTTP_OPTIONS", "add_run", "serve_http_options"]

#: The ``run`` options that go to ``Server.run`` under the same name.
HTTP_OPTIONS = (
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
    "stream_retry_ms",
)

_EXAMPLES = """\
TARGET is app.py, app.py:NAME, package.module or package.module:NAME; without :NAME the module's one Server
is used (or its one function annotated -> Server).

examples:
  mcpkit run app.py                         serve app.py's Server on http://127.0.0.1:8000/mcp
  mcpkit run app.py:create_server --port 0  call create_server() and serve on any free port
  mcpkit run app.py --reload                restart whenever a .py file beside app.py changes
  mcpkit run app.py --stdio --user nour     serve one client over stdin/stdout, signed in as local:nour
"""


def add_run(commands: Any) -> None:
    run = commands.add_parser(
        "run",
        help="serve a Server over streamable HTTP (default) or stdio",
        description="Serve TARGET, a mcpkit Server (or a function returning one). HTTP listens on loopback unless "
        "--host says otherwise.",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_target(run)
    run.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    run.add_argument("--port", type=int, default=8000, help="port to listen on, 0 for any free one (default: 8000)")
    run.add_argument("--stdio", action="store_true", help="serve one client over stdin/stdout instead of HTTP")
    run.add_argument("--user", help="with --stdio: sign the local person in as user id local:USER")
    run.add_argument("--log-level", default="info", help="uvicorn log level (default: info)")
    run.add_argument(
        "--reload",
        action="store_true",
        help="restart the server whenever a watched .py file changes (the socket stays bound between restarts)",
    )
    add_reload_dirs(run)
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
    run.add_argument(
        "--stream-retry-ms",
        type=int,
        default=DEFAULT_RETRY_MS,
        metavar="MS",
        help=f"with resumable streams: how long a client waits before it reconnects (default: {DEFAULT_RETRY_MS})",
    )
    _add_limits(run)
    run.set_defaults(handler=_run)


def _add_limits(run: argparse.ArgumentParser) -> None:
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


def _run(args: argparse.Namespace) -> int:
    if args.stdio:
        if args.reload:
            raise CommandError(
                "--reload restarts an HTTP server; a stdio client owns the pipe and would lose its session at each "
                "restart. Use --reload without --stdio (mcpkit dev adds the Inspector), or restart the client."
            )
        load_server(args.target, args.app_dir).run("stdio", user=args.user)
        return 0
    if args.user:
        raise CommandError("--user signs in the stdio caller; use it with --stdio.")
    if args.reload_dirs and not args.reload:
        raise CommandError("--reload-dir says what --reload watches; add --reload.")
    options = serve_http_options(args)
    if not args.reload:
        load_server(args.target, args.app_dir).run("http", host=args.host, port=args.port, **options)
        return 0
    dirs = watched_dirs(args.target, args.app_dir, [Path(folder) for folder in args.reload_dirs or ()])
    return Supervisor(args.target, args.app_dir, args.host, args.port, options, dirs).serve()


def serve_http_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments ``Server.run`` takes from ``run``'s options, besides host and port."""
    return {"log_level": args.log_level, **{name: getattr(args, name) for name in HTTP_OPTIONS}}
