"""The server the subscription tests watch, run as ``mcpkit run ... --sse``: a note resource and a tool that edits
it and says so; a tool and a prompt that start disabled, and a tool that switches them on and off."""

from __future__ import annotations

from mcpkit import PromptContext, ResourceContext, Server, StaticKeys, ToolContext, app, prompt, resource, tool
from mcpkit_remember import RememberPlugin

KEYS = {"nour": "nour-key-0123456789abcdef"}


@tool(name="edit_note", description="Change a note, and tell whoever watches it.")
class EditNote(ToolContext):
    async def execute(self, key: str, text: str) -> str:
        await self.remember.set(f"note:{key}", text, scope="global")
        await self.notify_resource_updated(f"notes://{key}")
        return "edited"


@resource(uri="notes://{key}", name="note")
class Note(ResourceContext):
    async def read(self, key: str) -> str:
        return str(await self.remember.get(f"note:{key}", scope="global", default=""))


@tool(name="beta_search", description="Search the notes (beta: off until switched on).", enabled=False)
class BetaSearch(ToolContext):
    async def execute(self, query: str) -> str:
        return f"searched for {query}"


@prompt(name="beta_summary", description="Summarise the notes (beta: off until switched on).", enabled=False)
class BetaSummary(PromptContext):
    async def render(self) -> str:
        return "Summarise every note."


@tool(name="switch_beta", description="Switch the beta tool and prompt on or off.")
class SwitchBeta(ToolContext):
    async def execute(self, on: bool) -> list[str]:
        if on:
            await server.enable(tools=["beta_search"], prompts=["beta_summary"])
        else:
            await server.disable(tools=["beta_search"], prompts=["beta_summary"])
        return [*server.enabled("tools"), *server.enabled("prompts")]


@app(
    id="notes",
    tools=[EditNote, BetaSearch, SwitchBeta],
    resources=[Note],
    prompts=[BetaSummary],
    plugins=[RememberPlugin.init(type="memory")],
)
class NotesApp: ...


server = Server([NotesApp], auth=StaticKeys(KEYS))
