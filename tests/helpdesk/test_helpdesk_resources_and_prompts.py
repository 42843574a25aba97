"""The help desk's resources and prompt (issue 12): the banner as a resource everyone reads, each agent's drafts
as a template only they can read, and ``reply_to_ticket`` rendered in the agent's own voice — the tutorial's tools
unchanged beside them."""

from __future__ import annotations

import mcp_types as types
import pytest
from mcp import MCPError

from mcpkit.testing import CallAs
from mcpkit_helpdesk import HELP_DESK_TOOLS

REPLY = types.PromptReference(type="ref/prompt", name="reply_to_ticket")
DRAFTS = types.ResourceTemplateReference(type="ref/resource", uri="helpdesk://drafts/{ticket_id}")


async def test_the_banner_resource_is_what_everyone_sees(call_as: CallAs) -> None:
    assert await call_as(None).read("helpdesk://banner") == ""
    await call_as("nour").call("set_banner", {"text": "Email is down."})
    assert await call_as("sam").read("helpdesk://banner") == "Email is down."
    assert await call_as(None).read("helpdesk://banner") == "Email is down."


async def test_a_draft_resource_is_the_agents_own(call_as: CallAs) -> None:
    await call_as("nour").call("save_draft", {"ticketId": "T-2", "text": "We are on it."})
    assert await call_as("nour").read("helpdesk://drafts/T-2") == "We are on it."
    with pytest.raises(MCPError) as refused:
        await call_as("sam").read("helpdesk://drafts/T-2")
    assert refused.value.error.code == -32602
    assert "you have no draft for T-2" in refused.value.error.message
    with pytest.raises(MCPError) as anonymous:
        await call_as(None).read("helpdesk://drafts/T-2")  # drafts are per agent: an anonymous caller has none
    assert anonymous.value.error.code == -32600  # refused as a request this caller cannot make, not a crash
    assert anonymous.value.error.data["code"] == "REMEMBER_IDENTITY_REQUIRED"
    assert "anonymous" in anonymous.value.error.message
    await call_as("nour").call("send_reply", {"ticketId": "T-2"})
    with pytest.raises(MCPError):
        await call_as("nour").read("helpdesk://drafts/T-2")  # sent, so forgotten


async def test_reply_to_ticket_writes_in_the_agents_voice_and_starts_from_the_draft(call_as: CallAs) -> None:
    nour = call_as("nour")
    await nour.call("set_signature", {"signature": "Nour, tier 2"})
    await nour.call("save_draft", {"ticketId": "T-3", "text": "Refund approved."})
    [message] = (await nour.get_prompt("reply_to_ticket", {"ticketId": "T-3", "tone": "formal"})).messages
    assert message.role == "user"
    assert isinstance(message.content, types.TextContent)
    assert message.content.text == (
        "Write a formal reply to support ticket T-3. Start from your draft:\n\nRefund approved.\n\n"
        "Keep it short, and end it with this signature on its own line: Nour, tier 2"
    )
    [sams] = (await call_as("sam").get_prompt("reply_to_ticket", {"ticketId": "T-3"})).messages
    assert isinstance(sams.content, types.TextContent)
    assert sams.content.text.startswith("Write a friendly reply to support ticket T-3. Keep it short")
    assert sams.content.text.endswith("The Help Desk")
    with pytest.raises(MCPError) as refused:
        await nour.get_prompt("reply_to_ticket", {"ticketId": "T-3", "tone": "rude"})
    assert "tone: Input should be 'friendly' or 'formal'" in refused.value.error.message


async def test_ticket_ids_complete_from_the_queue(call_as: CallAs) -> None:
    nour = call_as("nour")
    assert (await nour.complete(REPLY, "ticketId", "t-")).values == ["T-1", "T-2", "T-3", "T-4", "T-5"]
    assert (await nour.complete(REPLY, "tone", "f")).values == ["friendly", "formal"]
    assert (await nour.complete(DRAFTS, "ticket_id", "T-4")).values == ["T-4"]


async def test_the_tutorials_tools_are_unchanged_beside_them(call_as: CallAs) -> None:
    listed = [tool.name for tool in await call_as("nour").list_tools()]
    names = [f"{tool.__mcpkit_tool__.name}" for tool in HELP_DESK_TOOLS]  # type: ignore[attr-defined]
    assert listed[: len(names)] == names
    assert [p.name for p in await call_as("nour").list_prompts()] == ["reply_to_ticket", "system_prompt"]
    assert [r.uri for r in await call_as("nour").list_resources()] == ["helpdesk://banner"]
    templates = await call_as("nour").list_resource_templates()
    assert [t.uri_template for t in templates] == ["helpdesk://drafts/{ticket_id}", "context://{block}"]
