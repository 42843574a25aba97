"""The server the elicitation tests call: in process (2026-07-28 rounds) and as ``mcpkit run ... --sse``
(2025-11-25 live requests, which need a real HTTP stream). ``STATE_SECRET`` is shared by every instance."""

from __future__ import annotations

import asyncio

from typing_extensions import TypedDict

from mcpkit import PromptContext, Server, StaticKeys, ToolContext, app, prompt, tool

KEYS = {"nour": "nour-key-0123456789abcdef", "sam": "sam-key-0123456789abcdef"}
STATE_SECRET = "a-state-secret-shared-by-every-instance-0123456789"


class Name(TypedDict):
    name: str


class Confirm(TypedDict):
    confirm: bool


@tool(name="send_greeting", description="Ask who is sending, confirm, then send.")
class SendGreeting(ToolContext):
    async def execute(self, text: str) -> dict[str, object]:
        who = await self.elicit("Who is sending this?", Name, key="who")
        if not who.accepted:
            return {"sent": False, "why": who.action}
        sure = await self.elicit(f"Send {text!r} as {who.content['name']}?", Confirm, key="sure")
        if not (sure.accepted and sure.content["confirm"]):
            return {"sent": False, "why": "not confirmed"}
        return {"sent": True, "by": who.content["name"]}  # the side effect, after the last question


@tool(name="summarise", description="Summarise with the client's model.")
class Summarise(ToolContext):
    async def execute(self, text: str) -> str:
        answer = await self.sample(f"Summarise: {text}", max_tokens=50, system_prompt="Be brief.")
        content = answer.content
        return content.text if hasattr(content, "text") else str(content)


@tool(name="where_am_i", description="The client's roots.")
class WhereAmI(ToolContext):
    async def execute(self) -> list[str]:
        return [str(root.uri) for root in await self.roots()]


@tool(name="polite_send", description="Confirms when the client can be asked, sends anyway when it cannot.")
class PoliteSend(ToolContext):
    async def execute(self) -> str:
        if not self.client_can("elicitation"):
            return "sent without asking"
        sure = await self.elicit("Send it?", Confirm)
        return "sent" if sure.accepted and sure.content["confirm"] else "kept"


@tool(name="ask_carelessly", description="Asks inside a broad except, as some tools will.")
class AskCarelessly(ToolContext):
    async def execute(self) -> str:
        try:
            sure = await self.elicit("Go ahead?", Confirm)
        except Exception:  # a tool's own error handling must not end a 2026-07-28 round early
            return "swallowed"
        return "went ahead" if sure.accepted and sure.content["confirm"] else "stopped"


@tool(name="ask_together", description="Asks the user and the client at once.")
class AskTogether(ToolContext):
    async def execute(self) -> str:
        who, roots = await asyncio.gather(self.elicit("Who is asking?", Name), self.roots())
        return f"{who.content['name'] if who.content else '?'} in {len(roots)} root(s)"


@prompt(name="briefing", description="A briefing in the words the user gives.")
class Briefing(PromptContext):
    async def render(self) -> str:
        who = await self.elicit("Who is the briefing for?", Name, key="audience")
        return f"Brief {who.content['name'] if who.content else 'everyone'} on today's tickets."


@app(id="ask", tools=[SendGreeting, Summarise, WhereAmI, PoliteSend, AskTogether, AskCarelessly], prompts=[Briefing])
class AskApp: ...


def make_server(secret: str = STATE_SECRET) -> Server:
    return Server([AskApp], auth=StaticKeys(KEYS), name="elicitation-tests", state_secrets=[secret])


server = make_server()
