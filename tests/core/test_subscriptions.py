"""Resource subscriptions and list changes (issue 12): a client watching a resource is told when a tool says it
changed — on 2026-07-28 through a ``subscriptions/listen`` stream, on 2025-11-25 after ``resources/subscribe`` (and no
more after ``resources/unsubscribe``) — and a client that listed tools or prompts is told when ``Server.enable`` or
``disable`` changes them, against a real ``mcpkit run`` server (by default and with ``--sse``), whose streams must
flow as they are sent."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from subscriptions_server import KEYS

from reliability.processes import serving

HERE = Path(__file__).resolve().parent
HEADERS = {"Authorization": f"Bearer {KEYS['nour']}"}


@pytest.fixture(scope="module", params=[[], ["--sse"]], ids=["default", "sse"])
def url(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[str]:
    """The server as ``mcpkit run`` serves it by default (answers in JSON until a call sends more), and with
    ``--sse`` (every answer a stream)."""
    target = f"{HERE / 'subscriptions_server.py'}:server"
    with serving(target, cwd=tmp_path_factory.mktemp("subscriptions"), args=request.param) as server:
        yield server.url


async def test_a_2026_07_28_listen_stream_hears_of_an_update(url: str) -> None:
    async with (
        httpx2.AsyncClient(headers=HEADERS, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode="2026-07-28") as watcher,
        Client(streamable_http_client(url, http_client=http), mode="2026-07-28") as editor,
    ):
        async with watcher.listen(resource_subscriptions=["notes://plan"]) as subscription:
            await editor.call_tool("edit_note", {"key": "other", "text": "not watched"})
            await editor.call_tool("edit_note", {"key": "plan", "text": "v2"})
            async with asyncio.timeout(10):
                event = await anext(aiter(subscription))
        assert getattr(event, "uri", None) == "notes://plan"
        assert (await watcher.read_resource("notes://plan")).contents[0].text == "v2"  # type: ignore[union-attr]


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # the client's, for 2025-11-25
async def test_a_2025_11_25_session_is_told_until_it_unsubscribes(url: str) -> None:
    heard: asyncio.Queue[str] = asyncio.Queue()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            await heard.put(str(message.params.uri))

    async with (
        httpx2.AsyncClient(headers=HEADERS, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy", message_handler=on_message) as watcher,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as editor,
    ):
        with pytest.raises(MCPError) as unknown:  # only what the server serves can be watched
            await watcher.subscribe_resource("elsewhere://x")
        assert unknown.value.error.code == -32602
        await watcher.subscribe_resource("notes://plan")
        await editor.call_tool("edit_note", {"key": "plan", "text": "v3"})
        async with asyncio.timeout(10):
            assert await heard.get() == "notes://plan"
        await watcher.unsubscribe_resource("notes://plan")
        await editor.call_tool("edit_note", {"key": "plan", "text": "v4"})
        await asyncio.sleep(0.5)
        assert heard.empty()


async def test_a_2026_07_28_listen_stream_hears_that_the_tools_changed_and_the_lists_follow(url: str) -> None:
    async with (
        httpx2.AsyncClient(headers=HEADERS, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode="auto") as watcher,  # discovers: capabilities
        Client(streamable_http_client(url, http_client=http), mode="2026-07-28") as admin,
    ):
        assert watcher.protocol_version == "2026-07-28"
        capabilities = watcher.server_capabilities
        assert capabilities is not None
        assert capabilities.tools is not None
        assert capabilities.tools.list_changed
        assert "beta_search" not in {tool.name for tool in (await watcher.list_tools()).tools}
        refused = await watcher.call_tool("beta_search", {"query": "x"})  # disabled: as if it did not exist
        assert refused.is_error
        assert (refused.meta or {})["mcpkit/error"]["code"] == "UNKNOWN_TOOL"
        async with watcher.listen(tools_list_changed=True) as subscription:
            switched = await admin.call_tool("switch_beta", {"on": True})
            async with asyncio.timeout(10):
                event = await anext(aiter(subscription))
        assert type(event).__name__ == "ToolsListChanged"
        assert switched.structured_content == {"result": ["edit_note", "beta_search", "switch_beta", "beta_summary"]}
        assert [tool.name for tool in (await watcher.list_tools()).tools] == ["edit_note", "beta_search", "switch_beta"]
        assert (await watcher.call_tool("beta_search", {"query": "x"})).structured_content is None
        assert [p.name for p in (await watcher.list_prompts()).prompts] == ["beta_summary"]
        await admin.call_tool("switch_beta", {"on": False})
        assert "beta_search" not in {tool.name for tool in (await watcher.list_tools()).tools}
        with pytest.raises(MCPError) as gone:
            await watcher.get_prompt("beta_summary")
        assert gone.value.error.code == -32602


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # the client's, for 2025-11-25
async def test_a_2025_11_25_session_that_listed_tools_and_prompts_is_told_when_they_change(url: str) -> None:
    heard: asyncio.Queue[str] = asyncio.Queue()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification | types.PromptListChangedNotification):
            await heard.put(message.method)

    async with (
        httpx2.AsyncClient(headers=HEADERS, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy", message_handler=on_message) as watcher,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as admin,
    ):
        capabilities = watcher.server_capabilities
        assert capabilities is not None
        assert capabilities.tools is not None
        assert capabilities.tools.list_changed
        assert capabilities.prompts is not None
        assert capabilities.prompts.list_changed
        await watcher.list_tools()
        await watcher.list_prompts()
        await admin.call_tool("switch_beta", {"on": True})
        async with asyncio.timeout(10):
            told = {await heard.get(), await heard.get()}
        assert told == {"notifications/tools/list_changed", "notifications/prompts/list_changed"}
        assert "beta_search" in {tool.name for tool in (await watcher.list_tools()).tools}
        await admin.call_tool("switch_beta", {"on": True})  # already on: nothing changed, nobody is told
        await asyncio.sleep(0.5)
        assert heard.empty()
        await admin.call_tool("switch_beta", {"on": False})
        async with asyncio.timeout(10):
            assert await heard.get() == "notifications/tools/list_changed"
