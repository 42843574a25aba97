"""The banner every caller sees, like an outage notice: global scope, so everyone shares one."""

from __future__ import annotations

from typing_extensions import TypedDict

from mcpkit import ResourceContext, ToolContext, resource, tool

__all__ = ["BannerResource", "GetBanner", "SetBanner"]


class BannerResult(TypedDict):
    banner: str | None


@tool(name="set_banner", description="Show a banner to everyone, like an outage notice.")
class SetBanner(ToolContext):
    async def execute(self, text: str) -> BannerResult:
        await self.remember.set("banner", text, scope="global")
        return {"banner": text}


@tool(name="get_banner", description="The banner everyone sees, if there is one.")
class GetBanner(ToolContext):
    async def execute(self) -> BannerResult:
        return {"banner": await self.remember.get("banner", scope="global", default=None)}


@resource(
    uri="helpdesk://banner",
    name="banner",
    description="The banner everyone sees (empty when there is none).",
    mime_type="text/plain",
)
class BannerResource(ResourceContext):
    async def read(self) -> str:
        return str(await self.remember.get("banner", scope="global", default=""))
