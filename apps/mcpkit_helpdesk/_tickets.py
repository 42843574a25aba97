"""Tickets: the one an agent is working on (session scope) and which to take next (tool scope)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from mcpkit import ToolContext, tool

__all__ = ["QUEUE", "CurrentTicket", "NextTicket", "TicketId", "WorkOn"]

#: A ticket id as tools take it: ``ticketId`` on the wire.
TicketId = Annotated[str, Field(alias="ticketId", min_length=1, max_length=64, description="Ticket id, like T-1")]

#: The fixed queue ``next_ticket`` suggests from, in order.
QUEUE = ("T-1", "T-2", "T-3", "T-4", "T-5")


class TicketResult(TypedDict):
    ticketId: str | None


@tool(name="work_on", description="Mark a ticket as the one you're working on.")
class WorkOn(ToolContext):
    async def execute(self, ticket_id: TicketId) -> TicketResult:
        await self.remember.set("ticket", ticket_id)  # session scope, the default
        return {"ticketId": ticket_id}


@tool(name="current_ticket", description="The ticket you're working on.")
class CurrentTicket(ToolContext):
    async def execute(self) -> TicketResult:
        return {"ticketId": await self.remember.get("ticket", default=None)}


def _suggest(state: dict[str, Any]) -> dict[str, Any]:
    """The next state: one more ticket suggested (``latest``), or ``latest`` None once the queue is used up."""
    suggested: list[str] = list(state["suggested"])
    fresh = [ticket for ticket in QUEUE if ticket not in suggested]
    latest = fresh[0] if fresh else None
    return {"suggested": suggested + ([latest] if latest else []), "latest": latest}


@tool(
    name="next_ticket",
    description="Suggest a ticket from the queue to work on next; never suggests the same one to you twice.",
)
class NextTicket(ToolContext):
    async def execute(self) -> TicketResult:
        # Tool scope: this tool's own bookkeeping, kept for the agent (for the session on
        # 2025-11-25 connections). update() is atomic, so two calls at once get different tickets.
        state = await self.remember.update(
            "suggested", _suggest, scope="tool", default={"suggested": [], "latest": None}
        )
        return {"ticketId": state["latest"]}
