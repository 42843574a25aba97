"""The MCP clients ``mcpkit install`` writes to: where each keeps its servers, and the entry it reads for one.

As each client's documentation says: Claude Desktop reads ``mcpServers`` in ``claude_desktop_config.json`` (stdio
only: remote servers are added in its Connectors settings); Claude Code reads ``mcpServers`` in ``~/.claude.json``
(user) or ``.mcp.json`` (project), with a ``type``; Cursor reads ``mcpServers`` in ``~/.cursor/mcp.json`` or
``.cursor/mcp.json`` (``url`` for a remote server); VS Code reads ``servers`` in the profile's ``mcp.json`` or
``.vscode/mcp.json``, with a ``type``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CLIENTS", "Client", "Remote", "Stdio"]


@dataclass(frozen=True)
class Stdio:
    """A server the client starts itself: a command, its arguments and environment."""

    command: str
    args: list[str]
    env: dict[str, str]


@dataclass(frozen=True)
class Remote:
    """A server at a URL, with the headers each request carries."""

    url: str
    headers: dict[str, str]


@dataclass(frozen=True)
class Client:
    """One client: its name on the command line, its name for people, and how its config file is laid out."""

    name: str
    title: str
    servers_key: str
    typed: bool  # whether entries carry "type": "stdio" / "http"
    remote: bool  # whether its config file can hold a server at a URL

    def path(self, scope: str, *, system: str, home: Path, env: Mapping[str, str], cwd: Path) -> Path:
        """Where this client keeps its servers for ``scope`` ("user" or "project") on ``system`` (platform.system())."""
        if scope == "project":
            return cwd / _PROJECT_FILES[self.name]
        if self.name == "claude-code":
            return home / ".claude.json"
        if self.name == "cursor":
            return home / ".cursor" / "mcp.json"
        folder, file = {"claude-desktop": ("Claude", "claude_desktop_config.json"), "vscode": ("Code", "mcp.json")}[
            self.name
        ]
        inner = (folder, "User", file) if self.name == "vscode" else (folder, file)
        return _app_data(system, home, env).joinpath(*inner)

    def entry(self, server: Stdio | Remote) -> dict[str, object]:
        """The JSON object this client reads for ``server``."""
        entry: dict[str, object] = {}
        if isinstance(server, Stdio):
            if self.typed:
                entry["type"] = "stdio"
            entry |= {"command": server.command, "args": server.args}
            if server.env:
                entry["env"] = server.env
            return entry
        if self.typed:
            entry["type"] = "http"
        entry["url"] = server.url
        if server.headers:
            entry["headers"] = server.headers
        return entry


_PROJECT_FILES = {
    "claude-code": Path(".mcp.json"),
    "cursor": Path(".cursor") / "mcp.json",
    "vscode": Path(".vscode") / "mcp.json",
}


def _app_data(system: str, home: Path, env: Mapping[str, str]) -> Path:
    """Where desktop apps keep their settings: Application Support, %APPDATA%, or $XDG_CONFIG_HOME."""
    if system == "Darwin":
        return home / "Library" / "Application Support"
    if system == "Windows":
        return Path(env["APPDATA"]) if env.get("APPDATA") else home / "AppData" / "Roaming"
    return Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"


CLIENTS = {
    client.name: client
    for client in (
        Client("claude-desktop", "Claude Desktop", "mcpServers", typed=False, remote=False),
        Client("claude-code", "Claude Code", "mcpServers", typed=True, remote=True),
        Client("cursor", "Cursor", "mcpServers", typed=False, remote=True),
        Client("vscode", "VS Code", "servers", typed=True, remote=True),
    )
}
