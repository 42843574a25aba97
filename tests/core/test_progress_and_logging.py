"""A tool that talks while it runs (issue 12): ``self.progress`` and ``self.log`` reach the official client, in order,
in both eras, with the default app (a call that sends them is answered with SSE: lazy SSE) and with SSE answers to
everything — honouring the log level each era's way; nothing is sent to a client that
did not ask, and the call's result is the same either way."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from _support import NOUR_KEY as KEY
from _support import URL, body_of, post_modern
from _support import running as serving
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from mcpkit import PromptContext, Server, StaticKeys, ToolContext, app, prompt, tool


@tool(name="export_tickets", description="Export tickets, saying how far it got.")
class ExportTickets(ToolContext):
    async def execute(self, count: int = 3) -> str:
        await self.log.debug("opening the export")
        for done in range(count):
            await self.progress(done + 1, count, f"ticket {done + 1} of {count}")
            await self.log.info({"exported": done + 1})
        await self.log.warning("one ticket had no subject", logger="export")
        return f"exported {count}"


@prompt(name="summarise", description="Summarise a ticket.")
class Summarise(PromptContext):
    async def render(self) -> str:
        await self.log.notice("rendering summarise")
        return "Summarise the ticket."


@app(id="export", tools=[ExportTickets], prompts=[Summarise])
class ExportApp: ...


def make_server() -> Server:
    return Server([ExportApp], auth=StaticKeys({"nour": KEY}))


class Heard:
    """What the client was told while the call ran."""

    def __init__(self) -> None:
        self.logs: list[tuple[str, Any, str | None]] = []
        self.progress: list[tuple[float, float | None, str | None]] = []

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append((params.level, params.data, params.logger))

    async def on_progress(self, done: float, total: float | None, message: str | None) -> None:
        self.progress.append((done, total, message))


@contextlib.asynccontextmanager
async def client(asgi: Any, mode: str, heard: Heard, **options: Any) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=asgi), headers={"Authorization": f"Bearer {KEY}"}, timeout=30
    )
    async with (
        http,
        Client(streamable_http_client(URL, http_client=http), mode=mode, logging_callback=heard.log, **options) as c,
    ):
        yield c


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
@pytest.mark.parametrize(
    ("mode", "json_response"), [("2026-07-28", True), ("2026-07-28", False), ("legacy", True), ("legacy", False)]
)
async def test_progress_and_logs_arrive_in_order(mode: str, json_response: bool) -> None:
    heard = Heard()
    asgi = make_server().http_app(json_response=json_response)
    async with asgi.router.lifespan_context(asgi):
        options = {"log_level": "info"} if mode == "2026-07-28" else {}
        async with client(asgi, mode, heard, **options) as c:
            if mode == "legacy":
                await c.set_logging_level("info")
            result = await c.call_tool("export_tickets", {"count": 3}, progress_callback=heard.on_progress)
            prompt_result = await c.get_prompt("summarise")
    assert result.content == [types.TextContent(type="text", text="exported 3")]
    assert heard.progress == [(1, 3, "ticket 1 of 3"), (2, 3, "ticket 2 of 3"), (3, 3, "ticket 3 of 3")]
    assert heard.logs == [
        ("info", {"exported": 1}, "export_tickets"),
        ("info", {"exported": 2}, "export_tickets"),
        ("info", {"exported": 3}, "export_tickets"),
        ("warning", "one ticket had no subject", "export"),  # debug was below the level asked for
        ("notice", "rendering summarise", "summarise"),
    ]
    assert prompt_result.messages[0].content == types.TextContent(type="text", text="Summarise the ticket.")


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
@pytest.mark.parametrize("json_response", [True, False])
async def test_on_2025_11_25_the_session_level_filters(json_response: bool) -> None:
    heard = Heard()
    asgi = make_server().http_app(json_response=json_response)
    async with asgi.router.lifespan_context(asgi), client(asgi, "legacy", heard) as c:
        await c.set_logging_level("warning")
        result = await c.call_tool("export_tickets", {"count": 1}, progress_callback=heard.on_progress)
    assert heard.logs == [("warning", "one ticket had no subject", "export")]
    assert heard.progress == [(1, 1, "ticket 1 of 1")]
    assert result.content == [types.TextContent(type="text", text="exported 1")]


async def test_on_2026_07_28_only_requests_that_ask_get_sse() -> None:
    asgi = make_server().http_app()
    async with serving(asgi) as http:
        plain = await post_modern(
            http, "tools/call", {"name": "export_tickets", "arguments": {}}, token=KEY, name="export_tickets"
        )
        assert plain.headers["content-type"].startswith("application/json")
        assert body_of(plain)["result"]["content"][0]["text"] == "exported 3"
        asking = await post_modern(
            http,
            "tools/call",
            {"name": "export_tickets", "arguments": {}, "_meta": {"progressToken": "p-1"}},
            token=KEY,
            name="export_tickets",
        )
        assert asking.headers["content-type"].startswith("text/event-stream")
        assert asking.text.count("notifications/progress") == 3
        assert "notifications/message" not in asking.text  # no logLevel asked for: no log messages


STDIO_SERVER = Path(__file__).resolve().parent / "test_progress_and_logging.py"
server = Server([ExportApp], allow_anonymous=True)  # what the stdio test serves (`mcpkit run ...:server --stdio`)


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_over_stdio_the_level_holds_for_the_connection_and_progress_arrives() -> None:
    heard = Heard()
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcpkit", "run", f"{STDIO_SERVER}:server", "--stdio"]
    )
    async with Client(params, mode="legacy", logging_callback=heard.log) as c:
        await c.set_logging_level("warning")
        await c.call_tool("export_tickets", {"count": 2}, progress_callback=heard.on_progress)
        await c.call_tool("export_tickets", {"count": 1})
    assert heard.logs == [("warning", "one ticket had no subject", "export")] * 2  # the level, on every later call
    assert heard.progress == [(1, 2, "ticket 1 of 2"), (2, 2, "ticket 2 of 2")]
