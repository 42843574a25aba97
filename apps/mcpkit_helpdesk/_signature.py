"""The signature an agent's replies end with, kept in user scope so each agent has their own; and its editor, an
MCP Apps view a host that renders views shows beside ``set_signature``."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from typing_extensions import TypedDict

from mcpkit import ResourceContext, ToolContext, Ui, UiResource, resource, tool

from ._drafts import DRAFT_VIEW
from ._tickets import TicketId
from ._views import view_html

__all__ = ["DEFAULT_SIGNATURE", "SIGNATURE_EDITOR", "DraftReply", "GetSignature", "SetSignature", "SignatureEditor"]

#: What a reply is signed with until the agent sets a signature of their own.
DEFAULT_SIGNATURE = "The Help Desk"

#: The signature editor's URI: ``set_signature`` is shown in it.
SIGNATURE_EDITOR = "ui://helpdesk/signature"

Signature = Annotated[str, Field(max_length=80, description="How your replies end, at most 80 characters.")]


class SignatureResult(TypedDict):
    signature: str


class DraftReplyResult(TypedDict):
    ticketId: str
    reply: str


@tool(name="set_signature", description="Set the signature your replies end with.", ui=Ui(view=SIGNATURE_EDITOR))
class SetSignature(ToolContext):
    async def execute(self, signature: Signature) -> SignatureResult:
        await self.remember.set("signature", signature, scope="user")
        return {"signature": signature}


@tool(
    name="draft_reply",
    description="Draft a reply to a support ticket, signed with your signature.",
    ui=Ui(view=DRAFT_VIEW),
)
class DraftReply(ToolContext):
    async def execute(self, ticket_id: TicketId, text: str) -> DraftReplyResult:
        signature = await self.remember.get("signature", scope="user", default=DEFAULT_SIGNATURE)
        return {"ticketId": ticket_id, "reply": f"{text}\n\n{signature}"}


@tool(
    name="get_signature",
    description="The signature your replies end with, for the signature editor.",
    read_only=True,
    ui=Ui(view=SIGNATURE_EDITOR, visibility=["app"]),
)
class GetSignature(ToolContext):
    async def execute(self) -> SignatureResult:
        return {"signature": await self.remember.get("signature", scope="user", default=DEFAULT_SIGNATURE)}


@resource(uri=SIGNATURE_EDITOR, name="signature_editor", ui=UiResource(prefers_border=True))
class SignatureEditor(ResourceContext):
    """Shows your signature and lets you correct it by hand; it saves with set_signature, as you."""

    async def read(self) -> str:
        return view_html("signature.html")
