"""The help desk's first view (issue 40): the signature editor, shown beside ``set_signature`` by a host that renders
MCP Apps; it reads the signature with the view-only ``get_signature`` and saves it with ``set_signature``, as its
caller, so Sam's editor never shows Nour's signature. A host that renders no views sees the help desk unchanged."""

from __future__ import annotations

import re

from mcpkit.testing import CallAs
from mcpkit_helpdesk import DEFAULT_SIGNATURE, SIGNATURE_EDITOR


async def test_a_host_that_renders_views_shows_set_signature_in_the_editor(call_as: CallAs) -> None:
    listed = {tool.name: tool.meta for tool in await call_as("nour", ui=True).list_tools()}

    assert listed["set_signature"] == {"ui": {"resourceUri": SIGNATURE_EDITOR, "visibility": ["model", "app"]}}
    assert listed["get_signature"] == {"ui": {"resourceUri": SIGNATURE_EDITOR, "visibility": ["app"]}}


async def test_the_editor_ships_in_the_package_and_loads_nothing_from_elsewhere(call_as: CallAs) -> None:
    view = await call_as("nour", ui=True).view_of("set_signature")

    assert view.uri == "ui://helpdesk/signature"
    assert view.mime_type == "text/html;profile=mcp-app"
    assert view.html.startswith("<!DOCTYPE html>")
    assert view.ui == {"prefersBorder": True}
    assert view.csp == {}  # the strict default sandbox: no origin outside the view
    assert re.findall(r"""(?:src|href)\s*=|https?://|@import""", view.html) == []  # no CDN, nothing fetched
    assert '"tools/call"' in view.html
    assert '"set_signature"' in view.html
    assert '"get_signature"' in view.html


async def test_the_editor_reads_and_saves_as_its_caller_so_sam_never_sees_nours_signature(call_as: CallAs) -> None:
    nours_editor, sams_editor = call_as("nour", ui=True), call_as("sam", ui=True)

    await nours_editor.call("set_signature", {"signature": "Nour, Customer Care"})  # Save, in Nour's editor

    assert await nours_editor.call("get_signature") == {"signature": "Nour, Customer Care"}
    assert await sams_editor.call("get_signature") == {"signature": DEFAULT_SIGNATURE}
    assert (await sams_editor.call("draft_reply", {"ticketId": "T-1", "text": "Hi!"}))["reply"] == (
        f"Hi!\n\n{DEFAULT_SIGNATURE}"
    )


async def test_a_host_that_renders_no_views_sees_neither_the_editor_nor_its_tool(call_as: CallAs) -> None:
    plain = call_as("nour")

    assert "get_signature" not in {tool.name for tool in await plain.list_tools()}
    assert SIGNATURE_EDITOR not in {resource.uri for resource in await plain.list_resources()}
    assert all(tool.meta is None or "ui" not in tool.meta for tool in await plain.list_tools())
