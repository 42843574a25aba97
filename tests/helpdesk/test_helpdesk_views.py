"""The help desk's views (issue 40), without a browser: the signature editor, shown beside ``set_signature`` (it reads
with the view-only ``get_signature`` and saves with ``set_signature``, as its caller, so Sam's editor never shows
Nour's signature); the draft view, shown beside ``draft_reply`` (it sends with the view-only ``send_draft`` once the
agent confirmed by clicking); and the banner view. A host that renders no views sees the help desk unchanged.
tests/helpdesk/test_helpdesk_views_in_a_browser.py runs their scripts in Chromium."""

from __future__ import annotations

import re
import time

import jwt
import pytest

from core._support import JWT_SECRET, URL, call_modern, running, structured
from mcpkit import JWTAuth, Server
from mcpkit.testing import CallAs
from mcpkit_helpdesk import BANNER_VIEW, DEFAULT_SIGNATURE, DRAFT_VIEW, SEND_SCOPE, SIGNATURE_EDITOR, help_desk_app
from mcpkit_remember import StoreConfig


async def test_a_host_that_renders_views_shows_set_signature_in_the_editor(call_as: CallAs) -> None:
    listed = {tool.name: tool.meta for tool in await call_as("nour", ui=True).list_tools()}

    assert listed["set_signature"] == {"ui": {"resourceUri": SIGNATURE_EDITOR, "visibility": ["model", "app"]}}
    assert listed["get_signature"] == {"ui": {"resourceUri": SIGNATURE_EDITOR, "visibility": ["app"]}}
    assert listed["draft_reply"] == {"ui": {"resourceUri": DRAFT_VIEW, "visibility": ["model", "app"]}}
    assert listed["send_draft"] == {"ui": {"resourceUri": DRAFT_VIEW, "visibility": ["app"]}}
    assert (
        listed["get_banner"]
        == listed["set_banner"]
        == {"ui": {"resourceUri": BANNER_VIEW, "visibility": ["model", "app"]}}
    )


@pytest.mark.parametrize(
    ("tool", "uri", "calls"),
    [
        ("set_signature", "ui://helpdesk/signature", ["get_signature", "set_signature"]),
        ("draft_reply", "ui://helpdesk/draft", ["save_draft", "send_draft"]),
        ("get_banner", "ui://helpdesk/banner", ["get_banner", "set_banner"]),
    ],
)
async def test_each_view_ships_in_the_package_and_loads_nothing_from_elsewhere(
    call_as: CallAs, tool: str, uri: str, calls: list[str]
) -> None:
    view = await call_as("nour", ui=True).view_of(tool)

    assert view.uri == uri
    assert view.mime_type == "text/html;profile=mcp-app"
    assert view.html.startswith("<!DOCTYPE html>")
    assert view.ui == {"prefersBorder": True}
    assert view.csp == {}  # the strict default sandbox: no origin outside the view
    assert re.findall(r"""(?:src|href)\s*=|https?://|@import""", view.html) == []  # no CDN, nothing fetched
    assert '"tools/call"' in view.html  # the bridge, inlined
    assert "/* the bridge */" not in view.html
    assert "/* the style */" not in view.html
    assert all(f'"{name}"' in view.html for name in calls)
    assert "innerHTML" not in view.html  # what a caller typed is shown as text, never parsed as HTML


async def test_the_editor_reads_and_saves_as_its_caller_so_sam_never_sees_nours_signature(call_as: CallAs) -> None:
    nours_editor, sams_editor = call_as("nour", ui=True), call_as("sam", ui=True)

    await nours_editor.call("set_signature", {"signature": "Nour, Customer Care"})  # Save, in Nour's editor

    assert await nours_editor.call("get_signature") == {"signature": "Nour, Customer Care"}
    assert await sams_editor.call("get_signature") == {"signature": DEFAULT_SIGNATURE}
    assert (await sams_editor.call("draft_reply", {"ticketId": "T-1", "text": "Hi!"}))["reply"] == (
        f"Hi!\n\n{DEFAULT_SIGNATURE}"
    )


async def test_a_host_that_renders_no_views_sees_neither_the_views_nor_their_tools(call_as: CallAs) -> None:
    plain = call_as("nour")

    assert {"get_signature", "send_draft"}.isdisjoint(tool.name for tool in await plain.list_tools())
    assert {resource.uri for resource in await plain.list_resources()}.isdisjoint(
        {SIGNATURE_EDITOR, DRAFT_VIEW, BANNER_VIEW}
    )
    assert all(tool.meta is None or "ui" not in tool.meta for tool in await plain.list_tools())


async def test_send_draft_sends_only_the_confirmed_text_and_only_the_callers(call_as: CallAs) -> None:
    nour, sam = call_as("nour", ui=True), call_as("sam", ui=True)
    await nour.call("save_draft", {"ticketId": "T-2", "text": "Nour's reply"})
    await sam.call("save_draft", {"ticketId": "T-2", "text": "Sam's reply"})
    shown = {"ticketId": "T-2", "text": "Nour's reply"}

    assert await nour.call("send_draft", {**shown, "confirmed": False}) == {"sent": False}  # not confirmed
    assert await nour.call("send_draft", {**shown, "text": "another text", "confirmed": True}) == {"sent": False}
    assert await nour.call("get_draft", {"ticketId": "T-2"}) == {"draft": "Nour's reply"}
    assert await nour.call("send_draft", {**shown, "confirmed": True}) == {"sent": True, "text": "Nour's reply"}
    assert await nour.call("send_draft", {**shown, "confirmed": True}) == {"sent": False}  # once
    assert await nour.call("get_draft", {"ticketId": "T-2"}) == {"draft": None}
    assert await sam.call("get_draft", {"ticketId": "T-2"}) == {"draft": "Sam's reply"}


async def test_a_view_cannot_send_what_its_agents_token_may_not() -> None:
    """send_draft needs send_reply's scope: a view reaches nothing its caller could not."""
    issuer = "http://127.0.0.1:9000/"
    auth = JWTAuth(secret=JWT_SECRET, issuer=issuer)
    server = Server([help_desk_app(StoreConfig(type="memory"))], auth=auth, resource_url=URL)

    def token(scope: str) -> str:
        claims = {"sub": "nour", "iss": issuer, "aud": URL, "exp": int(time.time()) + 600, "scope": scope}
        return jwt.encode(claims, JWT_SECRET, algorithm="HS256")

    draft = {"ticketId": "T-3", "text": "On its way."}
    async with running(server.http_app()) as http:
        assert structured(await call_modern(http, "save_draft", draft, token=token("tickets:read"))) == {"saved": "T-3"}
        sent = {**draft, "confirmed": True}
        refused = await call_modern(http, "send_draft", sent, token=token("tickets:read"))
        assert refused.status_code == 403
        assert SEND_SCOPE in refused.json()["error"]["data"]["error_description"]
        granted = await call_modern(http, "send_draft", sent, token=token(f"tickets:read {SEND_SCOPE}"))
        assert structured(granted) == {"sent": True, "text": "On its way."}
