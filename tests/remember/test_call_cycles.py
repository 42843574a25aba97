"""A call's context is freed as the call ends, by reference counting alone: its ``self.remember`` (kept on the
context) holds the parts of the context a write's provenance reads, not the context, so a call leaves no cycle for
the garbage collector (one per call made every call's objects wait for a collection, which came three times as
often: docs/architecture.md)."""

from __future__ import annotations

import gc
import weakref

import pytest

from mcpkit import Server, StaticKeys, ToolContext, app, tool
from mcpkit.testing import running
from mcpkit_remember import RememberPlugin

SECRET = "call-cycles-secret-0123456789abcdef"
contexts: list[weakref.ref[ToolContext]] = []


@tool(name="keep", description="Test tool: keep a note, as a tool does.")
class Keep(ToolContext):
    async def execute(self, text: str) -> str:
        contexts.append(weakref.ref(self))
        await self.remember.set("note", text, scope="user")
        await self.remember.increment("count", scope="user")
        return "kept"


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
async def test_a_calls_context_is_freed_without_the_collector(protocol: str) -> None:
    @app(id="desk", tools=[Keep], plugins=[RememberPlugin.init(type="memory", secret=SECRET)])
    class Desk: ...

    contexts.clear()
    async with running(Server([Desk], auth=StaticKeys({"nour": "nour-key"})), protocol=protocol) as call_as:
        await call_as("nour").call("keep", {"text": "warm"})
        gc.collect()
        gc.disable()
        try:
            for number in range(3):
                assert await call_as("nour").call("keep", {"text": f"note {number}"}) == "kept"
            alive = sum(ref() is not None for ref in contexts[1:])
        finally:
            gc.enable()

    assert len(contexts) == 4
    assert alive == 0
