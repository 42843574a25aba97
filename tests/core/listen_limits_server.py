"""The server the listen-limit tests run (``mcpkit run``): a note resource, a tool that says a note changed, and
small subscription limits (3 URIs a stream, URIs of 200 characters, 2 listen streams a caller, 3 in all)."""

from __future__ import annotations

from mcpkit import ResourceContext, Server, StaticKeys, SubscriptionLimits, ToolContext, app, resource, tool

KEYS = {"nour": "nour-key-0123456789abcdef", "sam": "sam-key-0123456789abcdef0", "lee": "lee-key-0123456789abcdef0"}
LIMITS = SubscriptionLimits(max_uri_chars=200, per_session=3, listen_per_caller=2, listen_total=3)


@resource(uri="notes://{key}", name="note")
class Note(ResourceContext):
    async def read(self, key: str) -> str:
        return key


@tool(name="touch_note", description="Say that a note changed.")
class TouchNote(ToolContext):
    async def execute(self, key: str) -> str:
        await self.notify_resource_updated(f"notes://{key}")
        return "told"


@app(id="notes", tools=[TouchNote], resources=[Note])
class Notes: ...


server = Server([Notes], auth=StaticKeys(KEYS), subscription_limits=LIMITS)
