"""``create_server``: the help desk's three apps on one server, with the agents' static keys."""

from __future__ import annotations

from collections.abc import Mapping

from mcpkit import JWTAuth, Server, StaticKeys
from mcpkit_remember import parse_store_url

from ._apps import assistant_app, help_desk_app
from ._conversations import conversations_app
from ._keys import load_keys

__all__ = ["SERVER_NAME", "create_oauth_server", "create_server"]

SERVER_NAME = "helpdesk"


def create_server(
    store: str | None = None, keys: Mapping[str, str] | None = None, *, memory_prefix: str = ""
) -> Server:
    """A new help-desk server; nothing is opened or printed until it serves.

    ``store`` is ``memory`` (the default, as in the tutorial) or any store URL of ``STORE_URLS`` (SQLite, Redis,
    Redis Cluster, PostgreSQL); every app uses it (the third, "conversations", keeps
    each ticket's exchange with its customer and the agents' notes and runbooks). ``keys``
    maps agent labels to static keys (default: ``HELPDESK_KEYS``, else the demo keys).
    ``memory_prefix`` goes in front of the assistant's memory tool names, like ``memory_recall``.
    """
    config = parse_store_url(store or "memory")
    agent_keys = load_keys().keys if keys is None else keys
    return Server(
        [help_desk_app(config), assistant_app(config, memory_prefix), conversations_app(config)],
        auth=StaticKeys(agent_keys),
        allow_anonymous=True,
        name=SERVER_NAME,
    )


def create_oauth_server(
    store: str | None, *, issuer: str, jwks_url: str, resource_url: str, memory_prefix: str = ""
) -> Server:
    """The help desk for OAuth clients: tokens from ``issuer`` (keys at ``jwks_url``) meant for ``resource_url``.

    A request without a token gets 401 pointing at the server's protected resource metadata, so MCP
    clients sign their user in; there are no anonymous callers and no static keys in this mode.
    """
    config = parse_store_url(store or "memory")
    return Server(
        [help_desk_app(config), assistant_app(config, memory_prefix), conversations_app(config)],
        auth=JWTAuth(jwks_url=jwks_url, issuer=issuer),
        resource_url=resource_url,
        name=SERVER_NAME,
    )
