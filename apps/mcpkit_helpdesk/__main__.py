"""``python -m mcpkit_helpdesk``: serve the help desk over streamable HTTP and say how to connect."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from urllib.parse import urlsplit

from mcpkit import ConfigurationError, OtlpExport, StartupError
from mcpkit_remember import STORE_URLS, parse_store_url

from ._drafts import SEND_SCOPE
from ._identity_provider import DEMO_PASSWORDS, IdentityProvider, IdentityProviderUnavailable
from ._keys import KEYS_VARIABLE, load_keys
from ._server import create_oauth_server, create_server
from ._startup import connect_url, oauth_resources, oauth_startup_message, startup_message

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
        prog="python -m mcpkit_helpdesk",
        description=(
            "Serve the mcpkit help-desk demo over MCP streamable HTTP at http://HOST:PORT/mcp. "
            f'Agents sign in with static keys from {KEYS_VARIABLE}="nour=KEY,sam=KEY"; without it the demo '
            "keys nour-demo-key and sam-demo-key are used. Stored values are encrypted with REMEMBER_SECRET "
            "(for SQLite without it, a secret file is made beside the database)."
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
            f"where tools remember things: memory (lost on restart), {', '.join(STORE_URLS[:-1])} or {STORE_URLS[-1]}; "
            "Redis, Redis Cluster and PostgreSQL need REMEMBER_SECRET. Default: $REMEMBER_STORE if set, else memory"
        ),
    )
    parser.add_argument(
        "--oauth",
        action="store_true",
        help=(
            "sign callers in with OAuth instead of static keys: starts the demo identity provider "
            "(oidc-provider under Node 22, installed with npm on first use) with the accounts nour and sam"
        ),
    )
    parser.add_argument(
        "--identity-port",
        type=_port,
        default=9400,
        help="with --oauth, the loopback port of the demo identity provider (default: 9400)",
    )
    return parser


def _serve_oauth(args: argparse.Namespace) -> None:
    if args.identity_port == args.port:
        raise ConfigurationError(
            f"--identity-port {args.identity_port} is the help desk's own --port: the identity provider needs a "
            "port of its own (by default 9400)."
        )
    store = parse_store_url(args.store)
    url = connect_url(args.host, args.port)
    scopes = [SEND_SCOPE]
    # The URL, and the same server as localhost: each a resource of its own (a client asks tokens for the URL
    # it used); the configured one first, the provider's default.
    resources = {resource: scopes for resource in oauth_resources(url)}
    with IdentityProvider(args.identity_port, resources, announce=_say) as provider:
        server = create_oauth_server(args.store, issuer=provider.issuer, jwks_url=provider.jwks_url, resource_url=url)

        def serving(_url: str) -> None:
            message = oauth_startup_message(
                args.host, args.port, store, provider.issuer, DEMO_PASSWORDS, scopes, list(resources)
            )
            print(message, flush=True)

        # uvicorn re-raises SIGTERM once it has shut down; turn it into SystemExit so that the
        # identity provider is stopped on the way out instead of the process dying at once.
        previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
        try:
            server.run(transport="http", host=args.host, port=args.port, on_ready=serving)
        except KeyboardInterrupt:  # Ctrl+C: the same orderly stop, without a traceback
            pass
        finally:
            signal.signal(signal.SIGTERM, previous)


def _say(message: str) -> None:
    print(f"mcpkit-helpdesk: {message}", file=sys.stderr, flush=True)


def _exit_on_sigterm(_signal: int, _frame: object) -> None:
    raise SystemExit(0)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    export: OtlpExport | None = None
    try:
        if args.otlp is not None:
            export = OtlpExport(args.otlp, "mcpkit-helpdesk")
            export.install()
            signal.signal(signal.SIGTERM, _exit_on_sigterm)  # so that the batch goes out on the way out too
        if args.oauth:
            _serve_oauth(args)
            return 0
        store = parse_store_url(args.store)
        keys = load_keys()
        server = create_server(args.store, keys.keys)

        def serving(url: str) -> None:  # called once the port is bound and the store is open
            print(startup_message(args.host, urlsplit(url).port or args.port, store, keys), flush=True)

        server.run(transport="http", host=args.host, port=args.port, on_ready=serving)
    except ConfigurationError as exc:
        print(f"mcpkit-helpdesk: {exc}", file=sys.stderr)
        return 2
    except StartupError as exc:  # the store named by --store cannot be opened (Redis down, say)
        print(f"mcpkit-helpdesk: {exc}", file=sys.stderr)
        return 1
    except IdentityProviderUnavailable as exc:
        print(f"mcpkit-helpdesk: the demo identity provider cannot run: {exc}", file=sys.stderr)
        return 1
    finally:
        if export is not None:
            export.shutdown()  # what is still batched goes out before the process ends
    return 0


if __name__ == "__main__":
    sys.exit(main())
