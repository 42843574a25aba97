"""What ``python -m mcpkit_memoryserver`` prints on start: where it listens, what it keeps, how to connect."""

from __future__ import annotations

import os

from mcpkit_remember import StoreConfig

from ._signin import JWT_PUBLIC_KEY_VARIABLE, JWT_SECRET_VARIABLE, KEYS_VARIABLE, SignIn
from ._tools import MEMORY_TOOL_NAMES

__all__ = ["startup_message"]

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"


def _sign_in_lines(sign_in: SignIn) -> list[str]:
    lines = []
    if sign_in.demo:
        pairs = ", ".join(f"{label} = {key}" for label, key in sign_in.keys.items())
        lines.append(
            f"Keys: {KEYS_VARIABLE} is not set, so the demo keys are in use: {pairs}. They are public; "
            f'set {KEYS_VARIABLE}="alice=KEY,bob=KEY" before serving anyone real.'
        )
    elif sign_in.keys:
        lines.append(f"Keys: from {KEYS_VARIABLE}, for {', '.join(sign_in.keys)}.")
    if sign_in.jwt:
        where = JWT_SECRET_VARIABLE if os.environ.get(JWT_SECRET_VARIABLE) else JWT_PUBLIC_KEY_VARIABLE
        lines.append(f"JWTs: verified with {where}; each token's sub is the user whose memories it reaches.")
    return lines


def _secret_line(store: StoreConfig) -> str:
    if os.environ.get("REMEMBER_SECRET", "").strip():
        return "Memories are encrypted with REMEMBER_SECRET."
    if store.type == "sqlite":
        return f"Memories are encrypted with the secret in {store.path}.secret (made on first start)."
    return "Memories are encrypted with a secret made up for this process (and lost with it)."


def _search_line(semantic: bool) -> list[str]:
    if not semantic:
        return []
    return [
        "Search: by words and by meaning. The model loads in the background; until a line says it is ready, "
        "search_memory searches by words only and its result's note says so."
    ]


def startup_message(url: str, store: StoreConfig, sign_in: SignIn, *, semantic: bool = False) -> str:
    """The lines printed once the server listens at ``url`` (the one the server reports: always connectable)."""
    if sign_in.keys:
        label = next(iter(sign_in.keys))
        token = sign_in.keys[label] if sign_in.demo else f"<key for {label} from {KEYS_VARIABLE}>"
    else:
        token = "<a JWT>"
    return "\n".join(
        [
            f"Memory MCP server (name mcpkit-memory) at {url}",
            f"Tools: {', '.join(MEMORY_TOOL_NAMES)}; each on the signed-in user's own memories.",
            f"Store: {store.describe()}. {_secret_line(store)}",
            *_search_line(semantic),
            *_sign_in_lines(sign_in),
            "Callers without a key or token are refused by every tool (REMEMBER_IDENTITY_REQUIRED).",
            "",
            "Connect an agent: streamable HTTP transport, URL " + url + ",",
            f"  header Authorization: Bearer {token}",
            "List its tools with the MCP Inspector (Node >= 22.19):",
            f'  npx -y {INSPECTOR} --cli {url} --transport http --header "Authorization: Bearer {token}" '
            "--method tools/list",
            "",
            "Stop with Ctrl+C.",
        ]
    )
