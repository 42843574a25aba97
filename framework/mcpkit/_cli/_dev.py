"""``mcpkit dev TARGET``: serve with ``--reload`` on loopback and open the pinned MCP Inspector, already connected."""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
import webbrowser
from pathlib import Path
from typing import Any

import httpx2

from ._inspector import (
    INSPECTOR,
    Inspector,
    cache_dir,
    deep_link,
    ensure_inspector,
    inspector_environment,
    session_file,
)
from ._reload import Supervisor, add_reload_dirs, stop_process, watched_dirs
from ._target import CommandError, add_target

__all__ = ["add_dev"]

#: Where ``mcpkit dev`` finds the key when neither --key nor --key-file gives it.
KEY_ENV = "MCPKIT_DEV_KEY"
#: How long the Inspector may take to listen, and the server to answer the key check (it may be starting).
_READY_SECONDS = 60.0

_EXAMPLES = f"""\
The server runs as `mcpkit run TARGET --reload` on 127.0.0.1 (it restarts when a .py file changes, on the same
port). The MCP Inspector ({INSPECTOR}, installed with npm into a cache the first time; it needs Node.js 22.19+,
which is installed beside it on Linux when PATH has none) opens in the browser, connected to the server with
the key as its bearer token. Ctrl+C stops both. The key comes from --key-file (its first line) or --key, else
$MCPKIT_DEV_KEY; other local users can read --key in `ps`, so prefer the other two.

examples:
  mcpkit dev app.py                              a server that allows anonymous callers
  mcpkit dev app.py --key-file .dev-key          a server with StaticKeys: the Inspector signs in with this key
  MCPKIT_DEV_KEY="$DEV_KEY" mcpkit dev app.py    the same, the key from the environment
  mcpkit dev app.py --no-browser                 print the Inspector's link instead of opening it
"""


def add_dev(commands: Any) -> None:
    dev = commands.add_parser(
        "dev",
        help="serve with --reload and open the MCP Inspector, connected",
        description="Serve TARGET on loopback, restart it on changes, and open the MCP Inspector connected to it.",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_target(dev)
    given = dev.add_mutually_exclusive_group()
    given.add_argument(
        "--key-file",
        metavar="FILE",
        help=f"read the bearer token the Inspector sends (a StaticKeys key, a JWT) from FILE's first line; "
        f"default: ${KEY_ENV}, else none",
    )
    given.add_argument("--key", help="the bearer token itself (visible in `ps`: prefer --key-file or $" + KEY_ENV + ")")
    dev.add_argument("--port", type=int, default=8000, help="the server's port on 127.0.0.1 (default: 8000)")
    dev.add_argument("--inspector-port", type=int, default=6274, help="the Inspector's port (default: 6274)")
    dev.add_argument("--no-browser", action="store_true", help="print the Inspector's link; open no browser")
    add_reload_dirs(dev)
    dev.set_defaults(handler=_dev)


def _dev(args: argparse.Namespace) -> int:
    dirs = watched_dirs(args.target, args.app_dir, [Path(folder) for folder in args.reload_dirs or ()])
    key = _key(args.key, args.key_file)
    _check_free(args.inspector_port)
    inspector = ensure_inspector(cache_dir(), _say)
    companion = _InspectorBeside(inspector, key, args.inspector_port, browser=not args.no_browser)
    return Supervisor(args.target, args.app_dir, "127.0.0.1", args.port, {"log_level": "info"}, dirs, companion).serve()


class _InspectorBeside:
    """The Inspector process beside the server: started once the socket is bound, stopped (by PID) with it."""

    def __init__(self, inspector: Inspector, key: str | None, port: int, *, browser: bool) -> None:
        self._inspector = inspector
        self._key = key
        self._port = port
        self._browser = browser
        self._token = secrets.token_urlsafe(24)
        self._folder = tempfile.TemporaryDirectory(prefix="mcpkit-dev-")  # 0700: the session file holds the key
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, url: str) -> None:
        session = session_file(Path(self._folder.name), url, self._key)
        environment = inspector_environment(self._port, self._token)
        self._process = subprocess.Popen(self._inspector.command(session), env=environment)
        threading.Thread(target=self._when_listening, args=(url,), daemon=True).start()

    def ended(self) -> int | None:
        return None if self._process is None else self._process.poll()

    def stop(self) -> None:
        if self._process is not None:
            stop_process(self._process)
        self._folder.cleanup()

    def _when_listening(self, url: str) -> None:
        if not _listening(self._port, self._process):
            return
        link = deep_link(self._port, self._token, url)
        if not (self._browser and _can_open_browser() and webbrowser.open(link)):
            _say(f"mcpkit: open the MCP Inspector at {link}")
        else:
            _say(f"mcpkit: opened the MCP Inspector at {link}")
        _check_key(url, self._key)


def _key(given: str | None, file: str | None) -> str | None:
    """The key from --key, or --key-file's first line, else $MCPKIT_DEV_KEY; None without any."""
    if given is not None:
        return given
    if file is None:
        return os.environ.get(KEY_ENV) or None
    try:
        lines = Path(file).read_text(encoding="utf-8").strip().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise CommandError(f"--key-file {file}: cannot read it ({reason}).") from None
    if not lines or not lines[0].strip():
        raise CommandError(f"--key-file {file} is empty: write the key on its first line.")
    return lines[0].strip()


def _check_free(port: int) -> None:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            raise CommandError(
                f"Port {port} on 127.0.0.1, where the Inspector would listen, is in use (another Inspector?): stop "
                "it, or pass --inspector-port with a free port."
            ) from None


def _listening(port: int, process: subprocess.Popen[bytes] | None) -> bool:
    """Wait for a real process to accept connections (no clock to move: a bounded poll)."""
    deadline = time.monotonic() + _READY_SECONDS
    while time.monotonic() < deadline and process is not None and process.poll() is None:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
        time.sleep(0.1)
    return False


def _can_open_browser() -> bool:
    """Whether a graphical browser can open: on Linux without a display, webbrowser would start a text browser."""
    if os.environ.get("BROWSER") or sys.platform != "linux":
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _check_key(url: str, key: str | None) -> None:
    """Ask the server what the Inspector will ask, and say what to change when it refuses the key (or its absence)."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/list",
        **({"Authorization": f"Bearer {key}"} if key is not None else {}),
    }
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}
    try:
        status = httpx2.post(url, json=message, headers=headers, timeout=_READY_SECONDS).status_code
    except httpx2.HTTPError:
        return  # the server is down (its own output says why); a change restarts it
    if status == 401 and key is None:
        _say(
            "mcpkit: the server refuses callers without a key, so the Inspector cannot connect: run mcpkit dev "
            f"again with --key-file FILE or ${KEY_ENV} (a key its auth accepts)"
        )
    elif status == 401:
        _say(
            "mcpkit: the server refused the key it was given (401), so the Inspector cannot connect: pass a key "
            "its auth accepts"
        )


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
