"""Whether a request's client renders views (it declared the extension with the MCP App MIME type), and what a
client that does not is shown instead: the tools without their ``_meta.ui``, and without the tools only views call."""

from __future__ import annotations

from collections.abc import Sequence

import mcp_types as types

__all__ = ["EXTENSION", "MIME_TYPE", "declares_ui", "plain_tools"]

#: The extension's identifier, under ``capabilities.extensions`` on both sides.
EXTENSION = "io.modelcontextprotocol/ui"
#: What a view's HTML is served as.
MIME_TYPE = "text/html;profile=mcp-app"


def declares_ui(declared: types.ClientCapabilities | None) -> bool:
    """Whether the client declared the extension with ``mimeTypes`` holding :data:`MIME_TYPE` (2026-07-28: on this
    request; 2025-11-25: at ``initialize``)."""
    extensions = None if declared is None else declared.extensions
    settings = None if extensions is None else extensions.get(EXTENSION)
    if not isinstance(settings, dict):
        return False
    mime_types = settings.get("mimeTypes")
    return isinstance(mime_types, list) and MIME_TYPE in mime_types


def plain_tools(tools: Sequence[types.Tool]) -> list[types.Tool]:
    """``tools`` as a host without the extension sees them: no ``_meta.ui``, and no tool only a view may call (such a
    host has no view to call it, and would offer it to its model)."""
    plain: list[types.Tool] = []
    for tool in tools:
        ui = None if tool.meta is None else tool.meta.get("ui")
        if not isinstance(ui, dict):
            plain.append(tool)
            continue
        if "model" not in ui.get("visibility", ("model",)):
            continue
        rest = {key: value for key, value in (tool.meta or {}).items() if key != "ui"}
        plain.append(tool.model_copy(update={"meta": rest or None}))
    return plain
