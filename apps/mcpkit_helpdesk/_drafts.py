"""Reply drafts: kept per agent (user scope) for a day, and forgotten once the reply is sent; and the draft view, an
MCP Apps view where the agent reads the draft ``draft_reply`` made, corrects it, and sends it after confirming."""

from __future__ import annotations

from typing import Annotated, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from mcpkit import ResourceContext, ResourceNotFoundError, ToolContext, Ui, UiResource, resource, tool

from ._tickets import QUEUE, TicketId
from ._views import view_html

__all__ = [
    "DRAFT_TTL",
    "DRAFT_VIEW",
    "SEND_SCOPE",
    "DraftResource",
    "DraftView",
    "GetDraft",
    "SaveDraft",
    "SendDraft",
    "SendReply",
]

#: How long a draft is kept, in seconds: there tomorrow morning, gone next month.
DRAFT_TTL = 24 * 60 * 60
#: The OAuth scope ``send_reply`` requires of a token (sending reaches a customer).
SEND_SCOPE = "tickets:write"
#: The draft view's URI: ``draft_reply`` is shown in it.
DRAFT_VIEW = "ui://helpdesk/draft"

Confirmed = Annotated[
    bool, Field(description="True once the agent, shown 'Send this reply to ...?' in the draft view, clicked Send it.")
]


def _key(ticket_id: str) -> str:
    return f"draft:{ticket_id}"


class SavedResult(TypedDict):
    saved: str


class DraftResult(TypedDict):
    draft: str | None


class Confirm(TypedDict):
    confirm: bool


class SendResult(TypedDict):
    sent: bool
    text: NotRequired[str]


@tool(name="save_draft", description="Save a reply draft for a ticket. Drafts are kept for a day.")
class SaveDraft(ToolContext):
    async def execute(self, ticket_id: TicketId, text: str) -> SavedResult:
        await self.remember.set(_key(ticket_id), text, scope="user", ttl=DRAFT_TTL)
        return {"saved": ticket_id}


@tool(name="get_draft", description="Your reply draft for a ticket, if you have one.")
class GetDraft(ToolContext):
    async def execute(self, ticket_id: TicketId) -> DraftResult:
        return {"draft": await self.remember.get(_key(ticket_id), scope="user", default=None)}


@tool(
    name="send_reply",
    description="Send your reply draft for a ticket to the customer.",
    scopes=[SEND_SCOPE],  # signed in with OAuth, a token must grant it; static keys are not limited by scope
)
class SendReply(ToolContext):
    async def execute(self, ticket_id: TicketId) -> SendResult:
        key = _key(ticket_id)
        draft = await self.remember.get(key, scope="user")
        if not draft:
            return {"sent": False}
        if self.client_can("elicitation"):  # ask the agent first; a client that cannot be asked sends as before
            answer = await self.elicit(f"Send this reply to {ticket_id}?\n\n{draft}", Confirm, key="confirm_send")
            if not (answer.accepted and answer.content and answer.content["confirm"]):
                return {"sent": False}
        # The sending comes last, after the question (on 2026-07-28 everything before it runs once per round).
        return await _sent(self, key, draft)


@tool(
    name="send_draft",
    description="Send your reply draft for a ticket once you confirmed it in the draft view.",
    scopes=[SEND_SCOPE],
    ui=Ui(view=DRAFT_VIEW, visibility=["app"]),  # the host offers it to no model: only the view's click calls it
)
class SendDraft(ToolContext):
    """``send_reply`` for the draft view: the view asked the question and the agent answered by clicking, so the
    call carries the answer; it sends only the text the agent was shown, and only while it is still the draft."""

    async def execute(self, ticket_id: TicketId, text: str, confirmed: Confirmed) -> SendResult:
        key = _key(ticket_id)
        if not confirmed or await self.remember.get(key, scope="user") != text:
            return {"sent": False}
        return await _sent(self, key, text)


async def _sent(tool: ToolContext, key: str, draft: str) -> SendResult:
    """Send ``draft`` if it is still remembered under ``key``: forget() says whether it was, so two sends at once
    send it once."""
    if not await tool.remember.forget(key, scope="user"):
        return {"sent": False}
    return {"sent": True, "text": draft}


@resource(
    uri="helpdesk://drafts/{ticket_id}",
    name="draft",
    description="Your reply draft for a ticket (only yours: drafts are kept per agent).",
    mime_type="text/plain",
)
class DraftResource(ResourceContext):
    async def read(self, ticket_id: str) -> str:
        draft = await self.remember.get(_key(ticket_id), scope="user", default=None)
        if draft is None:
            raise ResourceNotFoundError(f"you have no draft for {ticket_id}")
        return str(draft)

    async def complete_ticket_id(self, value: str) -> list[str]:
        return [ticket for ticket in QUEUE if ticket.startswith(value.upper())]


@resource(uri=DRAFT_VIEW, name="draft_view", ui=UiResource(prefers_border=True))
class DraftView(ResourceContext):
    """The reply ``draft_reply`` drafted, signed with your signature: correct it by hand, save it, or send it after
    confirming; it saves with save_draft and sends with send_draft, as you."""

    async def read(self) -> str:
        return view_html("draft.html")
