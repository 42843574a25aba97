"""mcpkit: ``self.remember.increment("hits", scope="user")`` with static keys, encryption on, any store."""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from typing_extensions import TypedDict

from bench.tokens import REMEMBER_SECRET, TOKENS
from mcpkit import Server, StaticKeys, ToolContext, app, tool
from mcpkit_remember import RememberPlugin

__all__ = ["build"]


class CountResult(TypedDict):
    count: int


@tool(name="increment", description="Add one to the caller's counter and return it.")
class Increment(ToolContext):
    async def execute(self) -> CountResult:
        return {"count": int(await self.remember.increment("hits", scope="user"))}


def build(options: dict[str, Any]) -> Starlette:
    plugin = RememberPlugin.init(
        type=options["store"],
        path=options.get("path"),
        url=options.get("url"),
        secret=REMEMBER_SECRET,
        redis_prefix=options.get("prefix") or "mcpkit-bench:",
    )

    @app(id="bench", tools=[Increment], plugins=[plugin])
    class BenchApp:
        """The benchmark's one tool."""

    server = Server([BenchApp], auth=StaticKeys(TOKENS), name="bench-mcpkit")
    if "json_response" in options:  # otherwise mcpkit's own default
        return server.http_app(json_response=bool(options["json_response"]))
    return server.http_app()
