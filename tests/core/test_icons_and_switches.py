"""Icons and switching lists at run time (issue 12): icons on tools, resources, prompts and the server reach clients
in both eras and are checked when the server is built; ``Server.enable``/``disable`` change what is listed and
callable, refuse names nobody declared, and leave everything as it was when one name is wrong."""

from __future__ import annotations

import re
from typing import Any

import pytest
from mcp import MCPError

from core._support import running as running_http
from mcpkit import (
    ConfigurationError,
    PromptContext,
    ResourceContext,
    Server,
    StaticKeys,
    ToolContext,
    app,
    prompt,
    resource,
    tool,
)
from mcpkit.testing import ToolCallError, error_code, running

KEYS = {"nour": "nour-key-0123456789abcdef"}
PROTOCOLS = ["2026-07-28", "2025-11-25"]
PNG = {"src": "https://help.example.com/desk-48.png", "mime_type": "image/png", "sizes": ["48x48"]}
DARK = {"src": "data:image/svg+xml;base64,PHN2Zy8+", "mimeType": "image/svg+xml", "sizes": ["any"], "theme": "dark"}


@tool(name="queue", description="The tickets waiting.", icons=[PNG, DARK])
class Queue(ToolContext):
    async def execute(self) -> str:
        return "T-1"


@tool(name="purge_queue", description="Empty the queue (off until an operator switches it on).", enabled=False)
class PurgeQueue(ToolContext):
    async def execute(self) -> str:
        return "purged"


@resource(uri="helpdesk://banner", name="banner", icons=[PNG])
class Banner(ResourceContext):
    async def read(self) -> str:
        return "Open 9-17"


@resource(uri="helpdesk://beta/{ticket_id}", name="beta_ticket", enabled=False)
class BetaTicket(ResourceContext):
    async def read(self, ticket_id: str) -> str:
        return ticket_id


@prompt(name="triage", description="Triage a ticket.", icons=[DARK])
class Triage(PromptContext):
    async def render(self) -> str:
        return "Triage it."


@app(id="desk", tools=[Queue, PurgeQueue], resources=[Banner, BetaTicket], prompts=[Triage])
class Desk: ...


def desk(**options: Any) -> Server:
    return Server([Desk], auth=StaticKeys(KEYS), title="Help desk", website_url="https://help.example.com", **options)


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_icons_reach_the_client_on_tools_resources_and_prompts(protocol: str) -> None:
    async with running(desk(), protocol=protocol) as call_as:
        nour = call_as("nour")
        tools = {listed.name: listed for listed in await nour.list_tools()}
        banner = (await nour.list_resources())[0]
        triage = (await nour.list_prompts())[0]

    assert tools["queue"].icons is not None
    assert [icon.model_dump(exclude_none=True) for icon in tools["queue"].icons] == [
        {"src": PNG["src"], "mime_type": "image/png", "sizes": ["48x48"]},
        {"src": DARK["src"], "mime_type": "image/svg+xml", "sizes": ["any"], "theme": "dark"},
    ]
    assert banner.icons is not None
    assert banner.icons[0].src == PNG["src"]
    assert triage.icons is not None
    assert triage.icons[0].theme == "dark"


async def test_the_server_describes_itself_with_a_title_website_and_icons() -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    headers = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {KEYS['nour']}"}
    async with running_http(desk(icons=[PNG]).http_app()) as http:
        response = await http.post("/mcp", json=initialize, headers=headers)

    result = response.json()["result"]
    assert result["serverInfo"]["title"] == "Help desk"
    assert result["serverInfo"]["websiteUrl"] == "https://help.example.com"
    assert result["serverInfo"]["icons"] == [{"src": PNG["src"], "mimeType": "image/png", "sizes": ["48x48"]}]
    assert result["capabilities"]["tools"]["listChanged"] is True  # what is listed can change: clients are told


@pytest.mark.parametrize(
    ("icons", "problem"),
    [
        ("https://x.example/a.png", "icons is a list of icons"),
        ([{"src": "http://x.example/a.png"}], "src 'http://x.example/a.png' is neither https:// nor data:image/"),
        ([{"src": "javascript:alert(1)"}], "is neither https:// nor data:image/"),
        ([{}], "icons[0] has no src"),
        ([{"src": "https://x.example/a.png", "size": "48"}], "icons[0] has ['size']"),
        ([{"src": "https://x.example/a.png", "sizes": ["48"]}], "size '48' is not WIDTHxHEIGHT"),
        ([{"src": "https://x.example/a.png", "theme": "blue"}], "theme 'blue' is not 'light' or 'dark'"),
        ([{"src": "https://x.example/a.png", "mime_type": "text/html"}], "is not an image type"),
        ([PNG] * 9, "9 icons; give at most 8"),
    ],
)
def test_an_icon_a_client_would_refuse_is_refused_when_the_server_is_built(icons: object, problem: str) -> None:
    @tool(name="iconic", description="Has an icon.", icons=icons)  # type: ignore[arg-type]
    class Iconic(ToolContext):
        async def execute(self) -> str:
            return "ok"

    @app(id="iconic", tools=[Iconic])
    class IconicApp: ...

    with pytest.raises(ConfigurationError, match=r"Iconic \('iconic'\): .*" + re.escape(problem)):
        Server([IconicApp], auth=StaticKeys(KEYS))


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_disabled_tool_resource_or_template_is_not_listed_and_answers_as_if_absent(protocol: str) -> None:
    server = desk()
    async with running(server, protocol=protocol) as call_as:
        nour = call_as("nour")
        names = [listed.name for listed in await nour.list_tools()]
        templates = await nour.list_resource_templates()
        with pytest.raises(ToolCallError) as refused:
            await nour.call("purge_queue")
        with pytest.raises(MCPError) as unread:
            await nour.read("helpdesk://beta/T-1")
        await server.enable(tools=["purge_queue"], resources=["beta_ticket"])
        after = [listed.name for listed in await nour.list_tools()]
        purged = await nour.call("purge_queue")
        read = await nour.read("helpdesk://beta/T-1")
        await server.disable(tools=["queue"], prompts=["triage"], resources=["banner"])
        left = ([t.name for t in await nour.list_tools()], await nour.list_prompts(), await nour.list_resources())

    assert names == ["queue"]
    assert templates == []
    assert error_code(refused.value.result) == "UNKNOWN_TOOL"
    assert unread.value.error.code == -32602
    assert after == ["queue", "purge_queue"]  # in the order they were declared
    assert (purged, read) == ("purged", "T-1")
    assert left == (["purge_queue"], [], [])
    assert server.enabled("tools") == ("purge_queue",)
    assert server.enabled("resources") == ("beta_ticket",)


async def test_a_name_nobody_declared_is_refused_and_nothing_changes() -> None:
    server = desk()
    with pytest.raises(ConfigurationError, match=r"No tools named 'qeue' in mcpkit-server; only declared tools"):
        await server.disable(tools=["qeue"], prompts=["triage"])
    with pytest.raises(ConfigurationError, match=r"tools= is a list of names, like tools=\['name'\]"):
        await server.enable(tools="purge_queue")
    with pytest.raises(ConfigurationError, match="enabled\\(\\) takes 'tools', 'prompts' or 'resources'"):
        server.enabled("tool")  # type: ignore[arg-type]

    assert server.enabled("tools") == ("queue",)
    assert server.enabled("prompts") == ("triage",)


def test_enabled_must_be_a_boolean() -> None:
    @tool(name="maybe", description="Maybe on.", enabled="yes")  # type: ignore[arg-type]
    class Maybe(ToolContext):
        async def execute(self) -> str:
            return "ok"

    @app(id="maybe", tools=[Maybe])
    class MaybeApp: ...

    with pytest.raises(ConfigurationError, match=r"Maybe \('maybe'\): enabled is True or False, not 'yes'"):
        Server([MaybeApp], auth=StaticKeys(KEYS))
