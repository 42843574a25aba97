"""The server ``bench.hardening`` attacks: the six history tools and the memory tools (search on) on one store, and
``get_banner``, a tool that touches no store, whose latency is what every other caller feels."""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette

from bench.tokens import REMEMBER_SECRET, TOKENS
from mcpkit import Server, StaticKeys, ToolContext, app, tool
from mcpkit_history import HistoryPlugin
from mcpkit_remember import RememberPlugin

__all__ = ["build"]


@tool(name="get_banner", description="The desk's banner.", read_only=True)
class GetBanner(ToolContext):
    async def execute(self) -> str:
        return "Welcome to the help desk."


def build(options: dict[str, Any]) -> Starlette:
    store: dict[str, Any] = {"type": options.get("type", "memory"), "secret": REMEMBER_SECRET}
    if options.get("path"):
        store["path"] = options["path"]
    if options.get("url"):
        store["url"] = options["url"]
    prefix = options.get("redis_prefix", "mcpkit:bench-hardening:")
    history = HistoryPlugin.init(**store, tools=True, redis_prefix=prefix)
    notes = RememberPlugin.init(**store, redis_prefix=prefix)

    @app(id="desk", tools=[GetBanner], plugins=[history, notes])
    class Desk: ...

    return Server([Desk], auth=StaticKeys(TOKENS), name="hardening").http_app()
