"""MCP Apps (SEP-1865, the ``io.modelcontextprotocol/ui`` extension): ``ui://`` views and the tools shown in them,
checked when the server is built, and the tool list a host without the extension sees."""

from ._negotiation import EXTENSION, MIME_TYPE, declares_ui, plain_tools
from ._tool_ui import ToolUi, checked_tool_ui
from ._view import View, checked_view

__all__ = [
    "EXTENSION",
    "MIME_TYPE",
    "ToolUi",
    "View",
    "checked_tool_ui",
    "checked_view",
    "declares_ui",
    "plain_tools",
]
