"""The server the resumable-stream tests run as ``mcpkit run ... --sse``: a long call that releases its SSE stream
halfway (``self.close_stream()``) and reports progress on both sides of the gap."""

from __future__ import annotations

import asyncio

from mcpkit import Server, StaticKeys, ToolContext, app, tool

KEYS = {"nour": "nour-key-0123456789abcdef", "sam": "sam-key-0123456789abcdef"}


@tool(name="long_report", description="Builds a report slowly, releasing its stream while it works.")
class LongReport(ToolContext):
    async def execute(self, secret: str = "nothing") -> dict[str, object]:
        await self.progress(1, 3, "started")
        closed = await self.close_stream()  # the client reconnects with Last-Event-ID
        await asyncio.sleep(0.3)
        await self.progress(2, 3, "halfway")
        await asyncio.sleep(0.1)
        return {"report": f"done for {secret}", "stream_closed": closed}


@app(id="reports", tools=[LongReport])
class ReportsApp: ...


server = Server([ReportsApp], auth=StaticKeys(KEYS))
