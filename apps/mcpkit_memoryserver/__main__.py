"""``python -m mcpkit_memoryserver``: serve the memory server over streamable HTTP and say how to connect."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from collections.abc import Sequence

from mcpkit import ConfigurationError, OtlpExport, StartupError
from mcpkit_remember import STORE_URLS, parse_store_url

from ._server import create_server, semantic_on
from ._signin import KEYS_VARIABLE, load_sign_in
from ._startup import startup_message

__all__ = ["main"]


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (1-65535)")
    return port


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m mcpkit_memoryserver",
        description=(
            "Serve mcpkit's memory server (write_memory, read_memory, search_memory, list_memory_keys, "
            "delete_memory) over MCP streamable HTTP at http://HOST:PORT/mcp. Users sign in with static keys "
            f'from {KEYS_VARIABLE}="alice=KEY,bob=KEY" or JWTs (MEMORY_JWT_SECRET or MEMORY_JWT_PUBLIC_KEY_FILE, '
            "with MEMORY_JWT_ISSUER and MEMORY_JWT_AUDIENCE); with neither, the demo keys alice-demo-key and "
            "bob-demo-key. Memories are encrypted with REMEMBER_SECRET."
        ),
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, loopback only)")
    parser.add_argument("--port", type=_port, default=8000, help="port to listen on (default: 8000)")
    parser.add_argument(
        "--otlp",
        metavar="URL",
        help="send traces and metrics over OTLP/HTTP to URL, like http://127.0.0.1:4318 (needs mcpkit[otel])",
    )
    parser.add_argument(
        "--store",
        default=os.environ.get("REMEMBER_STORE") or "memory",
        help=(
            f"where memories are kept: memory (lost on restart), {', '.join(STORE_URLS[:-1])} or {STORE_URLS[-1]}; "
            "Redis, Redis Cluster and PostgreSQL need REMEMBER_SECRET. Default: $REMEMBER_STORE if set, else memory"
        ),
    )
    parser.add_argument(
        "--semantic",
        action="store_true",
        default=None,
        help="search by meaning too, with the local model of mcpkit[semantic] (default: $MEMORY_SEMANTIC)",
    )
    return parser


def _show_search_by_meaning() -> None:
    """Print search by meaning's log lines (its model ready, or failing) with the server's own output."""
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("%(message)s"))
    semantic_log = logging.getLogger("mcpkit.remember.semantic")
    semantic_log.addHandler(handler)
    semantic_log.setLevel(logging.INFO)


def _exit_on_sigterm(_signal: int, _frame: object) -> None:
    raise SystemExit(0)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    export: OtlpExport | None = None
    try:
        if args.otlp is not None:
            export = OtlpExport(args.otlp, "mcpkit-memoryserver")
            export.install()
            signal.signal(signal.SIGTERM, _exit_on_sigterm)  # uvicorn re-raises it: the batch goes out on the way out
        store = parse_store_url(args.store)
        sign_in = load_sign_in()
        semantic = semantic_on(args.semantic)
        server = create_server(args.store, sign_in.authenticators, semantic=semantic)
        if semantic:
            _show_search_by_meaning()

        def serving(url: str) -> None:  # called once the port is bound and the store is open
            print(startup_message(url, store, sign_in, semantic=semantic), flush=True)

        server.run(transport="http", host=args.host, port=args.port, on_ready=serving)
    except ConfigurationError as exc:
        print(f"mcpkit-memoryserver: {exc}", file=sys.stderr)
        return 2
    except StartupError as exc:  # the store cannot be opened (Redis down, say)
        print(f"mcpkit-memoryserver: {exc}", file=sys.stderr)
        return 1
    finally:
        if export is not None:
            export.shutdown()  # what is still batched goes out before the process ends
    return 0


if __name__ == "__main__":
    sys.exit(main())
