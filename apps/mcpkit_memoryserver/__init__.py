"""mcpkit's memory server: the five memory tools agents detect by name, on each signed-in user's memory.

Run it with ``python -m mcpkit_memoryserver`` or ``mcpkit run mcpkit_memoryserver:server``; build one in code (or in
tests) with ``create_server()``.
"""

from __future__ import annotations

import os

from mcpkit import Server

from ._server import SEMANTIC_VARIABLE, SERVER_NAME, create_server
from ._signin import DEMO_KEYS, KEYS_VARIABLE, SignIn, load_sign_in
from ._startup import startup_message
from ._tools import MEMORY_TOOL_NAMES, MEMORY_TOOLS

__all__ = [
    "DEMO_KEYS",
    "KEYS_VARIABLE",
    "MEMORY_TOOLS",
    "MEMORY_TOOL_NAMES",
    "SEMANTIC_VARIABLE",
    "SERVER_NAME",
    "SignIn",
    "create_server",
    "load_sign_in",
    "server",
    "startup_message",
]


def __getattr__(name: str) -> Server:
    """``memoryserver.server`` (for ``mcpkit run mcpkit_memoryserver:server``), built on first use, not at import."""
    if name != "server":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    built = create_server(os.environ.get("REMEMBER_STORE") or None)
    globals()["server"] = built
    return built
