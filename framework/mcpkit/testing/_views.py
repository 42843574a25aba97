"""``ShownView``: an MCP Apps view as a host loads it for a tool (the tool's ``_meta.ui``, then its ``ui://`` resource
read), so a test asserts a view's HTML, MIME type and sandbox without a browser."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import mcp_types as types

__all__ = ["ShownView", "shown_view"]


class _Lists(Protocol):
    name: str

    async def list_tools(self) -> list[types.Tool]: ...

    async def read_resource(self, uri: str) -> types.ReadResourceResult: ...


@dataclass(frozen=True, slots=True)
class ShownView:
    """A tool's view: its URI, the tool's ``visibility``, the HTML and MIME type read, and its ``_meta.ui``."""

    uri: str
    visibility: tuple[str, ...]
    html: str
    mime_type: str | None
    ui: Mapping[str, Any]

    @property
    def csp(self) -> Mapping[str, list[str]]:
        """The origins the view's sandbox may reach, by directive (``connectDomains``, ...); empty: none."""
        csp = self.ui.get("csp")
        return csp if isinstance(csp, dict) else {}


async def shown_view(client: _Lists, tool: str) -> ShownView:
    listed = {found.name: found for found in await client.list_tools()}
    if tool not in listed:
        raise AssertionError(f"{client.name} is not listed a tool {tool!r}; it is listed {sorted(listed)}.")
    ui = (listed[tool].meta or {}).get("ui")
    if not isinstance(ui, dict) or not isinstance(ui.get("resourceUri"), str):
        raise AssertionError(
            f"{tool!r} has no view for {client.name}: its _meta.ui is {ui!r:.200} (a client must declare the "
            "MCP Apps extension to see views: call_as(..., ui=True))."
        )
    uri: str = ui["resourceUri"]
    contents = (await client.read_resource(uri)).contents
    if len(contents) != 1 or not isinstance(contents[0], types.TextResourceContents):
        raise AssertionError(f"{uri} read as {len(contents)} contents, not one text: {contents!r:.200}")
    content = contents[0]
    shown = (content.meta or {}).get("ui")
    visibility = tuple(ui.get("visibility", ("model", "app")))
    return ShownView(uri, visibility, content.text, content.mime_type, shown if isinstance(shown, dict) else {})
