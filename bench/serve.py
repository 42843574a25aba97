"""``python -m bench.serve KIND``: one benchmark server in this process, one uvicorn worker, loopback only.

Prints ``{"port": N, "pid": P}`` on stdout once its socket is bound, then serves until SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import socket
import sys
from typing import Any

import uvicorn

from bench.tokens import TOKENS

__all__ = ["KINDS", "main"]

#: kind -> module under bench.servers.
KINDS = {
    "floor": "floor",
    "sdk": "sdk",
    "fastmcp": "fastmcp_app",
    "mcpkit": "mcpkit_app",
    "helpdesk": "helpdesk_app",
    "hardening": "hardening_app",
}


def build_app(kind: str, options: dict[str, Any]) -> Any:
    module = importlib.import_module(f"bench.servers.{KINDS[kind]}")
    return module.build(options)


def tokens_of(kind: str, options: dict[str, Any]) -> dict[str, str]:
    """label -> bearer token for a server built in this process (the shared bench tokens unless it makes its own)."""
    module = importlib.import_module(f"bench.servers.{KINDS[kind]}")
    made = getattr(module, "tokens", None)
    return TOKENS if made is None else dict(made(options))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.serve")
    parser.add_argument("kind", choices=sorted(KINDS))
    parser.add_argument("--options", default="{}", help="JSON options for the server module")
    parser.add_argument("--cpu", type=int, default=None, help="pin this process to one core (if taskset is absent)")
    args = parser.parse_args(argv)
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    app = build_app(args.kind, json.loads(args.options))
    # proto=IPPROTO_TCP, as asyncio's own create_server uses: only then does asyncio set TCP_NODELAY on
    # accepted connections (without it every response waits ~40 ms for a delayed ACK).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    print(json.dumps({"port": sock.getsockname()[1], "pid": os.getpid()}), flush=True)
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        http="h11",
        loop="asyncio",
        lifespan="on",
        timeout_keep_alive=30,
    )
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn re-raises the signal it stopped on
        uvicorn.Server(config).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
