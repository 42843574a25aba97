"""A small server for the multi-process tests: ``mcpkit run tests/reliability/fleet.py:server``.

Its store comes from ``REMEMBER_STORE`` and ``REMEMBER_SECRET``, and its Redis key prefix from
``FLEET_REDIS_PREFIX``, so each test keeps to keys of its own on a shared Redis. It uses only the
public mcpkit and mcpkit_remember API.
"""

from __future__ import annotations

import os
from typing import Any

from mcpkit import Server, StaticKeys, ToolContext, app, tool
from mcpkit_remember import RememberPlugin

__all__ = ["KEYS", "PREFIX_VARIABLE", "server"]

#: The callers' static keys (label: key).
KEYS = {"nour": "nour-fleet-key-0123456789", "sam": "sam-fleet-key-0123456789"}

#: The environment variable naming the Redis key prefix.
PREFIX_VARIABLE = "FLEET_REDIS_PREFIX"


@tool(name="ping", description="Answers with this process' id, without touching self.remember.")
class Ping(ToolContext):
    async def execute(self) -> dict[str, int]:
        return {"pid": os.getpid()}


@tool(name="put", description="Keep a value under a key, for the signed-in caller.")
class Put(ToolContext):
    async def execute(self, key: str, value: str) -> dict[str, str]:
        await self.remember.set(key, value, scope="user")
        return {"key": key}


@tool(name="read", description="The values kept under these keys for the signed-in caller (null when missing).")
class Read(ToolContext):
    async def execute(self, keys: list[str]) -> dict[str, Any]:
        return {"values": {key: await self.remember.get(key, scope="user") for key in keys}}


@tool(name="drop", description="Forget the value kept under a key, for the signed-in caller.")
class Drop(ToolContext):
    async def execute(self, key: str) -> dict[str, bool]:
        return {"dropped": await self.remember.forget(key, scope="user")}


@tool(name="count", description="Add one to the counter under a key, for the signed-in caller; returns it.")
class Count(ToolContext):
    async def execute(self, key: str) -> dict[str, Any]:
        return {"count": await self.remember.increment(key, scope="user")}


@tool(name="keys", description="The keys kept for the signed-in caller that match a pattern, sorted.")
class Keys(ToolContext):
    async def execute(self, pattern: str = "*") -> dict[str, list[str]]:
        return {"keys": await self.remember.list(scope="user", pattern=pattern)}


@tool(name="fill", description="Keep `count` values f-START, f-START+1, ... for the signed-in caller (store bulk).")
class Fill(ToolContext):
    async def execute(self, count: int, start: int = 0) -> dict[str, int]:
        for number in range(start, start + count):
            await self.remember.set(f"f-{number}", f"filler value {number}", scope="user")
        return {"kept": count}


def server() -> Server:
    """The fleet server: the seven tools above and the model-facing memory tools (user scope)."""
    plugin = RememberPlugin.init(
        tools={"enabled": True, "allowed_scopes": ["user"]},
        redis_prefix=os.environ.get(PREFIX_VARIABLE) or "mcpkit:remember:",
    )

    @app(id="fleet", tools=[Ping, Put, Read, Drop, Count, Keys, Fill], plugins=[plugin])
    class FleetApp:
        """Tools that remember, and one that does not."""

    return Server([FleetApp], auth=StaticKeys(KEYS), name="fleet")
