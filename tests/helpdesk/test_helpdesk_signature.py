"""A signature belongs to the agent who set it (user scope): the tutorial's first scenarios and its challenge."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import Field

from mcpkit import Server, StaticKeys, ToolContext, app, tool
from mcpkit.testing import CallAs, ToolCallError
from mcpkit_helpdesk import DEFAULT_SIGNATURE, DEMO_KEYS, DraftReply, DraftView, SetSignature, SignatureEditor
from mcpkit_remember import RememberPlugin

REPLY = {"ticketId": "T-1", "text": "Your printer is fixed."}


def signed(signature: str) -> dict[str, str]:
    return {"ticketId": "T-1", "reply": f"Your printer is fixed.\n\n{signature}"}


async def test_nours_signature_is_nours(call_as: CallAs) -> None:
    nour = call_as("nour")
    assert await nour.call("set_signature", {"signature": "Nour, Tier 2"}) == {"signature": "Nour, Tier 2"}
    assert await nour.call("draft_reply", REPLY) == signed("Nour, Tier 2")


async def test_sam_gets_the_default_until_he_sets_his_own(call_as: CallAs) -> None:
    await call_as("nour").call("set_signature", {"signature": "Nour, Tier 2"})
    sam = call_as("sam")
    assert await sam.call("draft_reply", REPLY) == signed(DEFAULT_SIGNATURE)
    await sam.call("set_signature", {"signature": "Sam from Support"})
    assert await sam.call("draft_reply", REPLY) == signed("Sam from Support")
    assert await call_as("nour").call("draft_reply", REPLY) == signed("Nour, Tier 2")


async def test_both_signatures_are_there_on_the_next_request(call_as: CallAs) -> None:
    await call_as("nour").call("set_signature", {"signature": "Nour, Tier 2"})
    await call_as("sam").call("set_signature", {"signature": "Sam from Support"})
    # fresh=True: a new connection (on 2025-11-25 also a new session), as an agent's next request would be.
    assert await call_as("nour", fresh=True).call("draft_reply", REPLY) == signed("Nour, Tier 2")
    assert await call_as("sam", fresh=True).call("draft_reply", REPLY) == signed("Sam from Support")


async def test_default_signature_is_the_help_desk(call_as: CallAs) -> None:
    assert DEFAULT_SIGNATURE == "The Help Desk"
    assert await call_as("nour").call("draft_reply", REPLY) == signed("The Help Desk")


@pytest.mark.parametrize(
    ("tool_name", "arguments"),
    [("set_signature", {"signature": "Anonymous"}), ("draft_reply", REPLY)],
)
async def test_anonymous_caller_is_refused_user_scope(
    call_as: CallAs, tool_name: str, arguments: dict[str, str]
) -> None:
    with pytest.raises(ToolCallError) as refused:
        await call_as(None).call(tool_name, arguments)
    assert refused.value.code == "REMEMBER_IDENTITY_REQUIRED"
    assert "Authenticate the request" in refused.value.message
    assert "global scope" in refused.value.message


async def test_signature_of_80_characters_is_accepted(call_as: CallAs) -> None:
    signature = "N" * 80
    assert await call_as("nour").call("set_signature", {"signature": signature}) == {"signature": signature}


async def test_signature_longer_than_80_characters_is_invalid_input(call_as: CallAs) -> None:
    nour = call_as("nour")
    with pytest.raises(ToolCallError) as refused:
        await nour.call("set_signature", {"signature": "N" * 81})
    assert refused.value.code == "INVALID_INPUT"
    assert "signature" in refused.value.message
    assert await nour.call("draft_reply", REPLY) == signed(DEFAULT_SIGNATURE)


# The tutorial's challenge: the same two tools, with the signature in global scope.


@tool(name="set_signature", description="Set the signature your replies end with.")
class GlobalSetSignature(ToolContext):
    async def execute(self, signature: Annotated[str, Field(max_length=80)]) -> dict[str, str]:
        await self.remember.set("signature", signature, scope="global")  # the bug: every caller shares it
        return {"signature": signature}


@tool(name="draft_reply", description="Draft a reply to a support ticket, signed with your signature.")
class GlobalDraftReply(ToolContext):
    async def execute(self, ticket_id: Annotated[str, Field(alias="ticketId")], text: str) -> dict[str, str]:
        signature = await self.remember.get("signature", scope="global", default=DEFAULT_SIGNATURE)
        return {"ticketId": ticket_id, "reply": f"{text}\n\n{signature}"}


def signature_server(tools: list[type[ToolContext]]) -> Server:
    # set_signature is shown in the signature editor, draft_reply in the draft view
    views = [view for tool, view in ((SetSignature, SignatureEditor), (DraftReply, DraftView)) if tool in tools]

    @app(id="help-desk", name="Help Desk", tools=tools, resources=views, plugins=[RememberPlugin.init(type="memory")])
    class HelpDeskApp:
        pass

    return Server([HelpDeskApp], auth=StaticKeys(DEMO_KEYS), allow_anonymous=True)


async def test_challenge_signature_in_global_scope_leaks_to_sam(serve) -> None:
    async with serve(signature_server([GlobalSetSignature, GlobalDraftReply])) as broken:
        await broken("nour").call("set_signature", {"signature": "Nour, Tier 2"})
        assert await broken("sam").call("draft_reply", REPLY) == signed("Nour, Tier 2")


async def test_challenge_fixed_signature_in_user_scope_does_not_leak(serve) -> None:
    async with serve(signature_server([SetSignature, DraftReply])) as fixed:
        await fixed("nour").call("set_signature", {"signature": "Nour, Tier 2"})
        assert await fixed("sam").call("draft_reply", REPLY) == signed(DEFAULT_SIGNATURE)
        assert await fixed("nour").call("draft_reply", REPLY) == signed("Nour, Tier 2")
