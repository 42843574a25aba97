"""The server the admission tests call: in process (a gate a test opens) and as ``mcpkit run`` (live 2025-11-25
questions, which need a real HTTP stream). ``QUESTION_TIMEOUT`` sets its ``question_timeout`` (seconds)."""

from __future__ import annotations

import asyncio
import os

from typing_extensions import TypedDict

from mcpkit import Server, StaticKeys, ToolContext, app, tool
from mcpkit_storage import KeyedLocks

KEYS = {"nour": "nour-key-0123456789abcdef", "sam": "sam-key-0123456789abcdef"}


class Gate:
    """What ``hold`` waits on, in process: the calls holding, and the event that lets them go."""

    def __init__(self) -> None:
        self.holding = 0
        self.open = asyncio.Event()


GATE = Gate()
#: One caller's "heavy reads" take turns, as history's do.
TURNS = KeyedLocks(60.0)


class Confirm(TypedDict):
    confirm: bool


@tool(name="hold", description="Waits until the test lets it go.")
class Hold(ToolContext):
    async def execute(self) -> dict[str, bool]:
        GATE.holding += 1
        try:
            await GATE.open.wait()
        finally:
            GATE.holding -= 1
        return {"held": True}


@tool(name="quick", description="Answers at once.")
class Quick(ToolContext):
    async def execute(self) -> dict[str, str | None]:
        return {"caller": self.caller.label}


@tool(name="queued_read", description="A heavy read: a quarter of a second, one at a time per caller.")
class QueuedRead(ToolContext):
    async def execute(self) -> dict[str, bool]:
        async with TURNS.held(self.caller.user_id or "anonymous"):
            await asyncio.sleep(0.25)
        return {"read": True}


@tool(name="progressive", description="Reports its progress, then answers (its answer becomes a stream).")
class Progressive(ToolContext):
    async def execute(self) -> dict[str, bool]:
        await self.progress(1, 1)
        return {"done": True}


@tool(name="confirm_send", description="Asks the user to confirm, then sends.")
class ConfirmSend(ToolContext):
    async def execute(self) -> dict[str, bool]:
        answer = await self.elicit("Send it?", Confirm, key="confirm")
        return {"sent": bool(answer.accepted and answer.content and answer.content["confirm"])}


@app(id="admission", tools=[Hold, Quick, QueuedRead, Progressive, ConfirmSend])
class AdmissionApp: ...


def make_server(question_timeout: float = 120.0) -> Server:
    return Server(
        [AdmissionApp],
        auth=StaticKeys(KEYS),
        allow_anonymous=True,
        name="admission",
        question_timeout=question_timeout,
    )


server = make_server(float(os.environ.get("QUESTION_TIMEOUT", "120")))
