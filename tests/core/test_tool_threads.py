"""Synchronous tools run in threads of their own, a fair share per caller (issue 35, review): one caller running
``PER_CALLER`` of them at once has its next one refused with ``TOOL_BUSY`` after the server's ``turn_timeout``,
while another caller's synchronous tool runs at once."""

from __future__ import annotations

import asyncio
import threading

import pytest

from mcpkit import Server, StaticKeys, ToolContext, app, tool
from mcpkit.testing import ToolCallError, running
from mcpkit.tools._threads import PER_CALLER

KEYS = {"nour": "nour-key-0123456789abcdef", "sam": "sam-key-0123456789abcdef"}
let_go = threading.Event()
running_now: list[str] = []


@tool(name="block", description="A synchronous tool that holds its thread until the test lets it go.")
class Block(ToolContext):
    def execute(self) -> dict[str, bool]:
        running_now.append(str(self.caller.label))
        let_go.wait(30)
        return {"done": True}


@tool(name="quick_sync", description="A synchronous tool that answers at once.")
class QuickSync(ToolContext):
    def execute(self) -> dict[str, str]:
        return {"caller": str(self.caller.label)}


@app(id="threads", tools=[Block, QuickSync])
class Threads: ...


async def test_a_caller_running_its_share_of_synchronous_tools_waits_then_gets_tool_busy_and_others_run() -> None:
    let_go.clear()
    running_now.clear()
    async with running(Server([Threads], auth=StaticKeys(KEYS), turn_timeout=0.3)) as call_as:
        held = [asyncio.create_task(call_as("nour", fresh=True).call("block", {})) for _ in range(PER_CALLER)]
        for _ in range(500):
            if len(running_now) == PER_CALLER:
                break
            await asyncio.sleep(0.01)
        with pytest.raises(ToolCallError) as busy:
            await call_as("nour").call("quick_sync", {})
        sams = await call_as("sam").call("quick_sync", {})
        let_go.set()
        done = await asyncio.gather(*held)
        after = await call_as("nour").call("quick_sync", {})

    assert busy.value.code == "TOOL_BUSY"
    assert f"{PER_CALLER} of your synchronous tool calls are running already" in busy.value.message
    assert "within 0.3 seconds" in busy.value.message
    assert sams == {"caller": "sam"}
    assert done == [{"done": True}] * PER_CALLER
    assert after == {"caller": "nour"}
