"""``reply_to_ticket``: the prompt an agent picks to have the model write a reply, in their own voice."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from mcpkit import PromptContext, prompt

from ._signature import DEFAULT_SIGNATURE
from ._tickets import QUEUE, TicketId

__all__ = ["ReplyToTicket"]


@prompt(name="reply_to_ticket", description="Write a reply to a support ticket, ending with your signature.")
class ReplyToTicket(PromptContext):
    async def render(
        self,
        ticket_id: TicketId,
        tone: Annotated[Literal["friendly", "formal"], Field(description="friendly or formal")] = "friendly",
    ) -> str:
        signature = await self.remember.get("signature", scope="user", default=DEFAULT_SIGNATURE)
        draft = await self.remember.get(f"draft:{ticket_id}", scope="user", default=None)
        start = f" Start from your draft:\n\n{draft}\n\n" if draft else " "
        return (
            f"Write a {tone} reply to support ticket {ticket_id}.{start}"
            f"Keep it short, and end it with this signature on its own line: {signature}"
        )

    async def complete_ticket_id(self, value: str) -> list[str]:
        return [ticket for ticket in QUEUE if ticket.startswith(value.upper())]

    async def complete_tone(self, value: str) -> list[str]:
        return [tone for tone in ("friendly", "formal") if tone.startswith(value)]
