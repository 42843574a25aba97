"""``create_server``: the memory server, named so that agents detect it, with its five tools."""

from __future__ import annotations

import os
from collections.abc import Sequence

from mcpkit import Authenticator, ConfigurationError, Server, app
from mcpkit_remember import RememberPlugin, parse_store_url
from mcpkit_search import MiniLM, SemanticUnavailableError

from ._signin import load_sign_in
from ._tools import MEMORY_TOOLS

__all__ = ["SEMANTIC_VARIABLE", "SERVER_NAME", "create_server", "semantic_on"]

#: Agents detect a memory server by a name containing "memory" or "mem" and by its tool names.
SERVER_NAME = "mcpkit-memory"

#: Set to 1 (or true) to search memories by meaning too, with the semantic extra's local model.
SEMANTIC_VARIABLE = "MEMORY_SEMANTIC"


def create_server(
    store: str | None = None, auth: Sequence[Authenticator] | None = None, *, semantic: bool | None = None
) -> Server:
    """A new memory server; nothing is opened or printed until it serves.

    ``store`` is ``memory`` (the default) or any store URL of ``STORE_URLS`` (SQLite, Redis, Redis Cluster,
    PostgreSQL), its secret ``REMEMBER_SECRET`` as everywhere. ``auth`` defaults to what ``MEMORY_KEYS`` and the
    ``MEMORY_JWT_*`` variables configure, else the demo keys. ``semantic`` (default: ``MEMORY_SEMANTIC``)
    makes ``search_memory`` hybrid, by words and by meaning, with the semantic extra's ``MiniLM``, whose model
    loads in the background once the server serves (until then ``search_memory`` goes by words, and says so).
    """
    config = parse_store_url(store or "memory")
    try:
        embedder = MiniLM() if semantic_on(semantic) else None
    except SemanticUnavailableError as exc:
        raise ConfigurationError(f"{exc} (asked for by --semantic or {SEMANTIC_VARIABLE})") from None
    plugin = RememberPlugin.init(type=config.type, url=config.url, path=config.path, search=True, embedder=embedder)
    memories = app(id="memory", name="Memory", tools=list(MEMORY_TOOLS), plugins=[plugin])(
        type("MemoryApp", (), {"__doc__": "The signed-in user's long-term memory."})
    )
    authenticators = load_sign_in().authenticators if auth is None else tuple(auth)
    # Anonymous callers reach the tools (and can list them) so that they are told what to do: every tool
    # keeps to user scope, which refuses them with REMEMBER_IDENTITY_REQUIRED.
    return Server([memories], auth=list(authenticators), allow_anonymous=True, name=SERVER_NAME)


def semantic_on(semantic: bool | None) -> bool:
    """Whether to search by meaning: ``semantic`` when given, else ``MEMORY_SEMANTIC`` (1, true or yes)."""
    if semantic is not None:
        return semantic
    return os.environ.get(SEMANTIC_VARIABLE, "").strip().lower() in ("1", "true", "yes")
