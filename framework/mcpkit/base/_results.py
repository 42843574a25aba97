"""Error results: what a client sees when a call fails, and nothing more."""

from __future__ import annotations

import mcp_types as types

__all__ = ["ERROR_META_KEY", "error_result"]

#: Where the machine-readable error travels in a result's ``_meta``.
ERROR_META_KEY = "mcpkit/error"


def error_result(code: str, message: str, **details: object) -> types.CallToolResult:
    """An ``isError`` result whose text is ``message`` and whose ``_meta`` carries the code (and ``details``)."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)],
        is_error=True,
        _meta={ERROR_META_KEY: {"code": code, "message": message, **details}},
    )
