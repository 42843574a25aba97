"""The help desk's views at work in a real browser (issue 40): headless Chromium loads each view in a sandboxed
iframe of a small host written to the MCP Apps extension, under the CSP its ``_meta.ui`` asks for; the host calls the
tool as the model would, the view renders the result, and clicks in it call the server through the host as the
signed-in agent. Two agents, both eras: what Nour's view changes is Nour's, and Sam's stays as it was. Skips, saying
so, without Chromium or Playwright; fails then under CI=true."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from browser_host import BrowserHost, browser_host, csp_of

from mcpkit.testing import CallAs
from mcpkit_helpdesk import DEFAULT_SIGNATURE

TICKET = {"ticketId": "T-4", "text": "Your refund is on its way."}


@pytest.fixture
async def host() -> AsyncIterator[BrowserHost]:
    async with browser_host() as opened:
        yield opened


async def test_nour_corrects_and_sends_her_draft_in_the_view_and_sams_draft_stays(
    call_as: CallAs, host: BrowserHost
) -> None:
    from playwright.async_api import expect

    nour, sam = call_as("nour", ui=True, elicit=[]), call_as("sam", ui=True)  # Nour's host would say if it were asked
    await sam.call("save_draft", {"ticketId": "T-4", "text": "Sam's own answer"})

    shown = await host.show(nour, "draft_reply", TICKET)
    view = shown.frame
    await expect(view.locator("#ticket")).to_have_text("Reply to T-4")
    await expect(view.locator("#reply")).to_have_value(f"Your refund is on its way.\n\n{DEFAULT_SIGNATURE}")

    corrected = "Your refund is on its way: it left us today.\n\nNour"
    await view.locator("#reply").fill(corrected)
    await view.locator("#send").click()
    await expect(view.locator("#question")).to_have_text("Send this reply to T-4?")
    await expect(view.locator("#preview")).to_have_text(corrected)
    assert await nour.call("get_draft", {"ticketId": "T-4"}) == {"draft": corrected}  # saved before asking

    await view.locator("#no").click()  # Keep editing: nothing sent
    await expect(view.locator("#status")).to_have_text("Not sent: your draft is saved.")
    assert await nour.call("get_draft", {"ticketId": "T-4"}) == {"draft": corrected}

    await view.locator("#send").click()
    await view.locator("#yes").click()
    await expect(view.locator("#status")).to_have_text("Sent to T-4.")

    assert await nour.call("get_draft", {"ticketId": "T-4"}) == {"draft": None}  # sent, so forgotten
    assert await sam.call("get_draft", {"ticketId": "T-4"}) == {"draft": "Sam's own answer"}
    assert (await shown.calls())[-1] == ("send_draft", {"ticketId": "T-4", "text": corrected, "confirmed": True})
    answers = [entry for entry in await shown.log() if entry.get("answered") == "tools/call"]
    assert answers[-1]["result"]["structuredContent"] == {"sent": True, "text": corrected}
    assert nour.asked == []  # the click was the confirmation: the host was not asked again
    assert shown.errors == []  # no CSP violation, no script error


async def test_the_view_shows_each_agent_their_own_signature_and_saves_it_as_them(
    call_as: CallAs, host: BrowserHost
) -> None:
    from playwright.async_api import expect

    nour, sam = call_as("nour", ui=True), call_as("sam", ui=True)

    editor = await host.show(nour, "set_signature", {"signature": "Nour"})
    await expect(editor.frame.locator("#signature")).to_have_value("Nour")
    await editor.frame.locator("#signature").fill("Nour, Customer Care")
    await editor.frame.locator("#save").click()
    await expect(editor.frame.locator("#status")).to_have_text("Saved: your replies end with it from now on.")

    assert await nour.call("get_signature") == {"signature": "Nour, Customer Care"}
    assert await sam.call("get_signature") == {"signature": DEFAULT_SIGNATURE}
    nours_draft = await host.show(nour, "draft_reply", TICKET)
    await expect(nours_draft.frame.locator("#reply")).to_have_value("Your refund is on its way.\n\nNour, Customer Care")
    sams_draft = await host.show(sam, "draft_reply", TICKET)
    await expect(sams_draft.frame.locator("#reply")).to_have_value(f"Your refund is on its way.\n\n{DEFAULT_SIGNATURE}")
    assert editor.errors == nours_draft.errors == sams_draft.errors == []


async def test_the_banner_view_shows_the_banner_and_a_change_reaches_every_agent(
    call_as: CallAs, host: BrowserHost
) -> None:
    from playwright.async_api import expect

    nour, sam = call_as("nour", ui=True), call_as("sam", ui=True)

    nours = await host.show(nour, "get_banner", {})
    await expect(nours.frame.locator("#shown")).to_have_text("No banner is shown.")
    await nours.frame.locator("#banner").fill("Phones are down until 3pm.")
    await nours.frame.locator("#publish").click()
    await expect(nours.frame.locator("#status")).to_have_text("Every agent sees it now.")
    await expect(nours.frame.locator("#shown")).to_have_text("Phones are down until 3pm.")

    assert await sam.call("get_banner") == {"banner": "Phones are down until 3pm."}  # global scope: everyone's
    sams = await host.show(sam, "get_banner", {})
    await expect(sams.frame.locator("#shown")).to_have_text("Phones are down until 3pm.")
    assert nours.errors == sams.errors == []


async def test_a_call_that_failed_shows_the_tools_own_message_in_its_view(call_as: CallAs, host: BrowserHost) -> None:
    from playwright.async_api import expect

    nour = call_as("nour", ui=True)
    too_long = "N" * 81
    failed = await nour.call_tool("set_signature", {"signature": too_long})

    editor = await host.show(nour, "set_signature", {"signature": too_long})

    said = "".join(block.text for block in failed.content if block.type == "text")
    assert failed.is_error
    assert "80" in said  # the tool's own message, which the view shows as it is
    await expect(editor.frame.locator("#status")).to_have_text(said)
    await expect(editor.frame.locator("#signature")).to_have_value(DEFAULT_SIGNATURE)  # what is remembered, unchanged
    assert editor.errors == []


async def test_the_sandbox_refuses_what_the_view_did_not_declare(call_as: CallAs, host: BrowserHost) -> None:
    shown = await host.show(call_as("nour", ui=True), "get_banner", {})

    fetched = await shown.frame.locator("body").evaluate(
        "() => fetch(location.origin + '/').then(() => 'fetched', () => 'refused')"
    )

    assert fetched == "refused"  # connect-src 'none': a view reaches the server only through the host
    assert any("Content Security Policy" in error for error in shown.errors), shown.errors


def test_the_views_csp_is_the_extensions_strict_default_when_nothing_is_declared() -> None:
    assert csp_of({}) == (
        "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; font-src 'self'; media-src 'self' data:; connect-src 'none'; frame-src 'none'; "
        "base-uri 'self'; object-src 'none'"
    )
