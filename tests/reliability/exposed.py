"""A server open to anonymous callers, with the model-facing memory tools in every scope: what an attacker meets.

``mcpkit run tests/reliability/exposed.py:server``. Its store and secret come from ``REMEMBER_STORE`` and
``REMEMBER_SECRET``; ``EXPOSED_MAX_VALUES`` and ``EXPOSED_MAX_BYTES`` set the quotas and ``EXPOSED_HISTORY`` the
change history (default: the plugin's), ``EXPOSED_REDIS_PREFIX`` the Redis key prefix. Public API only.
"""

from __future__ import annotations

import os

from mcpkit import Server, StaticKeys, ToolContext, app, tool
from mcpkit_remember import RememberPlugin

__all__ = ["KEYS", "server"]

KEYS = {"nour": "nour-exposed-key-0123456789", "sam": "sam-exposed-key-0123456789"}


@tool(name="ping", description="Answers at once, touching no memory: what a legitimate caller's latency is made of.")
class Ping(ToolContext):
    async def execute(self) -> dict[str, bool]:
        return {"pong": True}


def _limit(name: str) -> dict[str, int]:
    value = os.environ.get(name)
    return {} if not value else {name.removeprefix("EXPOSED_").lower(): int(value)}


def server() -> Server:
    plugin = RememberPlugin.init(
        tools={"enabled": True},
        redis_prefix=os.environ.get("EXPOSED_REDIS_PREFIX") or "mcpkit:remember:",
        **_limit("EXPOSED_MAX_VALUES"),
        **_limit("EXPOSED_MAX_BYTES"),
        **_limit("EXPOSED_HISTORY"),
    )

    @app(id="exposed", tools=[Ping], plugins=[plugin])
    class ExposedApp:
        """Memory for anyone who can reach it."""

    return Server([ExposedApp], auth=StaticKeys(KEYS), allow_anonymous=True, name="exposed")
