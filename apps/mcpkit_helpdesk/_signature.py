"""The signature an agent's replies end with, kept in user scope so each agent has their own."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from typing_extensions import TypedDict

from mcpkit import ToolContext, tool

from ._tickets import TicketId

__all__ = ["DEFAULT_SIGNATURE", "DraftReply", "SetSignature"]

#: What a reply is signed with until the agent sets a signature of their own.
DEFAULT_SIGNATURE = "The Help Desk"

Signature = Annotated[str, Field(max_length=80, description="How your replies end, at most 80 characters.")]


class SignatureResult(TypedDict):
    signature: str


class DraftReplyResult(TypedDict):
    ticketId: str
    reply: str


@tool(name="set_signature", description="Set the signature your replies end with.")
class SetSignature(ToolContext):
    async def execute(self, signature: Signature) -> SignatureResult:
        await self.remember.set("signature", signature, scope="user")
        return {"signature": signature}


@tool(name="draft_reply", description="Draft a reply to a support ticket, signed with your signature.")
class DraftReply(ToolContext):
    async def execute(self, ticket_id: TicketId, text: str) -> DraftReplyResult:
        signature = await self.remember.get("signature", scope="user", default=DEFAULT_SIGNATURE)
        return {"ticketId": ticket_id, "reply": f"{text}\n\n{signature}"}
