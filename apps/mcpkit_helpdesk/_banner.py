"""The banner every caller sees, like an outage notice: global scope, so everyone shares one; and its view, where a
host that renders MCP Apps shows the banner beside ``get_banner`` and ``set_banner`` and lets an agent change it."""

from __future__ import annotations

from typing_extensions import TypedDict

from mcpkit import ResourceContext, ToolContext, Ui, UiResource, resource, tool

from ._views import view_html

__all__ = ["BANNER_VIEW", "BannerResource", "BannerView", "GetBanner", "SetBanner"]

#: The banner view's URI: ``get_banner`` and ``set_banner`` are shown in it.
BANNER_VIEW = "ui://helpdesk/banner"


class BannerResult(TypedDict):
    banner: str | None


@tool(name="set_banner", description="Show a banner to everyone, like an outage notice.", ui=Ui(view=BANNER_VIEW))
class SetBanner(ToolContext):
    async def execute(self, text: str) -> BannerResult:
        await self.remember.set("banner", text, scope="global")
        return {"banner": text}


@tool(name="get_banner", description="The banner everyone sees, if there is one.", ui=Ui(view=BANNER_VIEW))
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


@resource(uri=BANNER_VIEW, name="banner_view", ui=UiResource(prefers_border=True))
class BannerView(ResourceContext):
    """The banner every agent sees, and a field to change it (set_banner, as you: the banner is everyone's)."""

    async def read(self) -> str:
        return view_html("banner.html")
