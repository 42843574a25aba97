"""``listing(server, protocol)``: what a client of one protocol era is shown, asked through the official client.

The lists come from the real handlers over the SDK's in-process transport (the path a stdio connection takes,
as an anonymous local caller), page by page, without HTTP, a socket or the plugins' start: nothing is opened.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from mcp import Client
from mcp.client.extension import advertise
from pydantic import BaseModel

from ..base import LocalConnection, local_connection
from ..tasks import EXTENSION
from ..ui import EXTENSION as UI_EXTENSION
from ..ui import MIME_TYPE
from ._server import Server

__all__ = ["LISTED_PROTOCOLS", "listing"]

#: The protocol eras a listing can be asked in, newest first.
LISTED_PROTOCOLS = ("2026-07-28", "2025-11-25")
#: How the official client is told to speak each era (``auto`` asks ``server/discover`` first, as clients do).
_MODES = {"2026-07-28": "auto", "2025-11-25": "legacy"}
#: More pages than any server lists: a cursor that never ends is a bug, not a long list.
_MAX_PAGES = 1000


async def listing(server: Server, protocol: str, *, tasks: bool = False, ui: bool = False) -> dict[str, Any]:
    """The server's info, capabilities, tools, resources, resource templates and prompts as ``protocol`` shows them
    (with ``tasks``, to a client that declares the tasks extension: ``task="required"`` tools included; with ``ui``,
    to one that renders MCP Apps views: the tools' ``_meta.ui``, the views and the tools only views call)."""
    if protocol not in _MODES:
        raise ValueError(f"protocol must be one of {LISTED_PROTOCOLS}, not {protocol!r}")
    token = local_connection.set(LocalConnection(None, uuid.uuid4().hex))
    extensions = [advertise(EXTENSION)] if tasks else []
    if ui:
        extensions.append(advertise(UI_EXTENSION, {"mimeTypes": [MIME_TYPE]}))
    try:
        async with Client(server._sdk, mode=_MODES[protocol], extensions=extensions) as client:
            if client.protocol_version != protocol:
                raise RuntimeError(f"the client spoke {client.protocol_version}, not {protocol}")
            capabilities = client.server_capabilities
            shown: dict[str, Any] = {
                "serverInfo": _wire(client.server_info),
                "capabilities": _wire(capabilities),
                "tools": await _every(client.list_tools, "tools"),
            }
            if client.instructions:
                shown["instructions"] = client.instructions
            if capabilities.resources is not None:
                shown["resources"] = await _every(client.list_resources, "resources")
                shown["resourceTemplates"] = await _every(client.list_resource_templates, "resource_templates")
            if capabilities.prompts is not None:
                shown["prompts"] = await _every(client.list_prompts, "prompts")
            return shown
    finally:
        local_connection.reset(token)


async def _every(ask: Callable[..., Awaitable[Any]], field: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor = None
    for _ in range(_MAX_PAGES):
        page = await ask(cursor=cursor)
        items.extend(_wire(item) for item in getattr(page, field))
        cursor = page.next_cursor
        if cursor is None:
            return items
    raise RuntimeError(f"listing {field} did not end after {_MAX_PAGES} pages")


def _wire(model: BaseModel | None) -> Any:
    return None if model is None else model.model_dump(by_alias=True, exclude_none=True, mode="json")
