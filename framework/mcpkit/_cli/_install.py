"""``mcpkit install TARGET --client NAME``: add the server to an MCP client's config file, keeping everything else.

The file is read as JSON (one that is not, such as a JSONC file with comments, is refused rather than rewritten
without them), the one entry is added under the client's servers key, the old file is copied beside it, and the new
one replaces it in one rename, with the old file's permissions (a symbolic link is followed, so a dotfiles link
stays a link). ``--dry-run`` prints the file it would write.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..base import StartupError
from ._clients import CLIENTS, Client, Remote, Stdio
from ._target import CommandError, add_target, is_file_target, load_server, module_folder, split_target

__all__ = ["add_install"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INDENT = re.compile(r"\n([ \t]+)\S")
#: A variable whose value is a secret by its name (REMEMBER_SECRET, HELPDESK_KEYS, API_TOKEN, DB_PASSWORD, ...).
_SECRET_NAME = re.compile(r"(^|_)(SECRETS?|KEYS?|TOKENS?|PASSWORDS?|PASSWD|CREDENTIALS?)(_|$)", re.IGNORECASE)
#: A URL with a password in it (postgresql://user:password@host/db).
_PASSWORD_IN_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/@:]*:[^/@]+@")

_EXAMPLES = """\
clients and the file each reads (--scope user / --scope project):
  claude-desktop  claude_desktop_config.json in Claude's settings folder (stdio servers only)
  claude-code     ~/.claude.json                      / .mcp.json
  cursor          ~/.cursor/mcp.json                  / .cursor/mcp.json
  vscode          mcp.json in VS Code's User folder   / .vscode/mcp.json

With --stdio (the default) the client starts `python -P -m mcpkit run --stdio TARGET` with the Python running this
command, TARGET's file (or --app-dir for a module) and a SQLite file in --env as absolute paths; with --url it
connects to a server already running there, sending --key as a bearer token. A project's file is meant to be
committed: a secret (--key, an --env variable named like REMEMBER_SECRET or *_KEYS, a URL with a password) is
refused there; write a reference the client expands instead (Claude Code: ${NAME}, Cursor and VS Code: ${env:NAME}).

exit codes: 0 written (or already there, or --dry-run), 1 the config file is not JSON or cannot be written,
2 a mistake in the command (the message says which)

examples:
  mcpkit install app.py --client claude-desktop
  mcpkit install app.py --client cursor --user nour --env REMEMBER_STORE=sqlite:///notes.db
  mcpkit install app.py --client claude-code --scope project --env 'REMEMBER_SECRET=${REMEMBER_SECRET}'
  mcpkit install --client vscode --url https://mcp.example.com/mcp --key "$MCP_KEY" --name notes
  mcpkit install app.py --client claude-code --scope project --dry-run
"""


def add_install(commands: Any) -> None:
    install = commands.add_parser(
        "install",
        help="add the server to Claude Desktop, Claude Code, Cursor or VS Code",
        description="Add TARGET to an MCP client's config file, beside the servers already there.",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_target(install, optional=True)
    install.add_argument("--client", required=True, choices=sorted(CLIENTS), help="the client to add it to")
    how = install.add_mutually_exclusive_group()
    how.add_argument("--stdio", action="store_true", help="the client starts the server over stdio (the default)")
    how.add_argument("--url", help="the client connects to the server running at this URL instead")
    install.add_argument("--name", help="the server's name in the client (default: the Server's name)")
    install.add_argument(
        "--env", action="append", default=[], metavar="NAME=VALUE", help="with stdio: an environment variable"
    )
    install.add_argument("--user", help="with stdio: sign the local person in as user id local:USER")
    install.add_argument("--key", help="with --url: the bearer token sent as the Authorization header")
    install.add_argument(
        "--scope", choices=("user", "project"), default="user", help="your own config, or the project's (default: user)"
    )
    install.add_argument("--force", action="store_true", help="replace a different server of the same name")
    install.add_argument("--dry-run", action="store_true", help="print the file it would write; write nothing")
    install.set_defaults(handler=_install)


def _install(args: argparse.Namespace) -> int:
    client = CLIENTS[args.client]
    if args.scope == "project" and client.name == "claude-desktop":
        raise CommandError("Claude Desktop has no project config; leave out --scope project.")
    name, server = _remote(args, client) if args.url else _stdio(args)
    if not _NAME.match(name):
        raise CommandError(f"{name!r} cannot name a server in a client: use --name with letters, digits, '_', '-', '.'")
    path = client.path(args.scope, system=platform.system(), home=Path.home(), env=os.environ, cwd=Path.cwd())
    config, before = _read(path, client, name)
    servers = config.setdefault(client.servers_key, {})
    entry = client.entry(server)
    if servers.get(name) == entry:
        print(f"{client.title} already has this server as {name!r} in {path}; nothing changed.")
        return 0
    if name in servers and not args.force:
        raise CommandError(
            f"{path} already has a different server named {name!r}: pass --force to replace it (the old file is "
            "kept as a backup), or --name to add this one beside it."
        )
    servers[name] = entry
    text = json.dumps(config, indent=_indent_of(before), ensure_ascii=False) + "\n"
    if args.dry_run:
        print(text, end="")
        print(f"mcpkit: dry run: {path} is unchanged.", file=sys.stderr)
        return 0
    backup = _write(path, before is not None, text, private=args.key is not None or bool(_secrets(args.env)))
    kept = f" (the old file is {backup})" if backup else ""
    print(f"Added {name!r} to {client.title}'s servers in {path}{kept}. Restart {client.title} to load it.")
    return 0


def _stdio(args: argparse.Namespace) -> tuple[str, Stdio]:
    if args.target is None:
        raise CommandError("Name the server to install: mcpkit install TARGET --client ... (or --url URL --name NAME).")
    if args.key is not None:
        raise CommandError("--key is sent to a server at a --url; a stdio server's caller is the local person: --user.")
    secrets = _secrets(args.env)
    if secrets and args.scope == "project":
        raise CommandError(
            f"--env {secrets[0]} would write a secret into the project's file, which is shared (committed): install "
            "for yourself (--scope user), or give a reference the client expands instead of the value (Claude Code: "
            f"{secrets[0]}=${{{secrets[0]}}}, Cursor and VS Code: {secrets[0]}=${{env:{secrets[0]}}})."
        )
    server = load_server(args.target, args.app_dir)
    location, attr = split_target(args.target)
    env = {name: _absolute_sqlite(value) for name, value in _variables(args.env)}
    app_dir: list[str] = []
    if is_file_target(location):
        location = str(Path(location).resolve())  # the client starts it from a folder of its own
    else:
        folder = module_folder(location, args.app_dir)
        if _imported_from(location, folder):
            app_dir = ["--app-dir", str(folder)]
    target = location if attr is None else f"{location}:{attr}"
    # -P: the folder the client starts it in is not put first on sys.path (a file there named like a module
    # mcpkit imports would shadow it); the user's own folder comes from TARGET's path or --app-dir.
    command = ["-P", "-m", "mcpkit", "run", target, "--stdio", *app_dir, *(["--user", args.user] if args.user else [])]
    return args.name or server.name, Stdio(os.path.abspath(sys.executable), command, env)


def _remote(args: argparse.Namespace, client: Client) -> tuple[str, Remote]:
    if not client.remote:
        raise CommandError(
            f"{client.title}'s config file holds only servers it starts itself: install with --stdio, or add the "
            f"URL in {client.title} (Settings > Connectors)."
        )
    for given, option in ((args.env, "--env"), (args.user, "--user")):
        if given:
            raise CommandError(f"{option} is for a server the client starts (--stdio); a server at a URL has its own.")
    parts = urlsplit(args.url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise CommandError(f"--url {args.url!r} is not an http(s) URL like https://mcp.example.com/mcp.")
    if args.key is not None and args.scope == "project":
        raise CommandError(
            "--key would write the key into the project's file, which is shared (committed): install for yourself "
            "(--scope user), or leave out --key and write the header with a variable your client expands."
        )
    name = args.name or (load_server(args.target, args.app_dir).name if args.target else None)
    if name is None:
        raise CommandError("--url without TARGET needs --name, the server's name in the client.")
    headers = {"Authorization": f"Bearer {args.key}"} if args.key is not None else {}
    return name, Remote(args.url, headers)


def _variables(pairs: list[str]) -> list[tuple[str, str]]:
    found = []
    for pair in pairs:
        variable, sep, value = pair.partition("=")
        if not sep or not _VARIABLE.match(variable):
            raise CommandError(f"--env {pair!r} must look like NAME=VALUE, NAME made of letters, digits and '_'.")
        found.append((variable, value))
    return found


def _secrets(pairs: list[str]) -> list[str]:
    """The ``--env`` variables whose value is a secret: named like one, or a URL with a password; not a reference
    (``${NAME}``, ``${env:NAME}``) the client expands."""
    return [
        variable
        for variable, value in _variables(pairs)
        if "${" not in value and (_SECRET_NAME.search(variable) or _PASSWORD_IN_URL.match(value))
    ]


def _absolute_sqlite(value: str) -> str:
    """A relative ``sqlite:///file.db`` made absolute against the current folder: the client starts elsewhere."""
    path = value[len("sqlite:///") :] if value.startswith("sqlite:///") else ""
    if not path or path == ":memory:" or Path(path).is_absolute():
        return value
    return "sqlite:///" + str((Path.cwd() / path).resolve())


def _imported_from(module: str, folder: Path) -> bool:
    """Whether ``module`` was imported from ``folder`` (so the client, started elsewhere, needs it on sys.path)."""
    loaded = sys.modules.get(module.split(".")[0])
    origin = getattr(loaded, "__file__", None)
    return origin is not None and Path(origin).resolve().is_relative_to(folder)


def _read(path: Path, client: Client, name: str) -> tuple[dict[str, Any], str | None]:
    """The config as it stands (empty when there is no file) and its text, or StartupError saying why not."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, None
    except OSError as exc:
        raise StartupError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    if not text.strip():
        return {}, text
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StartupError(
            f"{path} is not plain JSON (line {exc.lineno}: {exc.msg}); if it holds comments, mcpkit would lose "
            f"them: add {name!r} under {client.servers_key!r} by hand (mcpkit install ... --dry-run shows the entry "
            "when the file is set aside)."
        ) from None
    if not isinstance(config, dict) or not isinstance(config.get(client.servers_key, {}), dict):
        raise StartupError(f"{path} is not a {client.title} config: {client.servers_key!r} is not an object in it.")
    return config, text


def _indent_of(text: str | None) -> str | int:
    found = _INDENT.search(text or "")
    return found.group(1) if found else 2


def _write(path: Path, existed: bool, text: str, *, private: bool) -> Path | None:
    """Replace the file in one rename, keeping its permissions; the backup of the old one, if there was one."""
    real = path.resolve()
    backup = None
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        if existed:
            backup = _free_backup(real)
            shutil.copy2(real, backup)
        mode = real.stat().st_mode & 0o777 if existed else (0o600 if private else 0o644)
        temporary = real.with_name(f".{real.name}.{os.getpid()}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, real)
    except OSError as exc:
        raise StartupError(f"Cannot write {path}: {exc.strerror or exc}.") from None
    return backup


def _free_backup(real: Path) -> Path:
    candidates = (real.with_name(f"{real.name}.bak" if n == 0 else f"{real.name}.{n}.bak") for n in range(10_000))
    return next(candidate for candidate in candidates if not candidate.exists())
