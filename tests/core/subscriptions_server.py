"""The server the subscription tests watch, run as ``mcpkit run ... --sse``: a note resource and a tool that edits
it and says so."""

from __future__ import annotations

from mcpkit import ResourceContext, Server, StaticKeys, ToolContext, app, resource, tool
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


@app(id="notes", tools=[EditNote], resources=[Note], plugins=[RememberPlugin.init(type="memory")])
class NotesApp: ...


server = Server([NotesApp], auth=StaticKeys(KEYS))
