"""Client capabilities a tool needs: ``@tool(requires=["elicitation"])``.

A server must not rely on a capability the client did not declare (2026-07-28: in every request's
``io.modelcontextprotocol/clientCapabilities``; 2025-11-25: at ``initialize``). A call of a tool whose client
lacks one is refused before the tool runs with ``-32021`` (MissingRequiredClientCapabilityError, HTTP 400 on
2026-07-28) naming what is missing, so a client learns what to declare rather than meeting a tool that
fails halfway.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from ..base import ConfigurationError

__all__ = ["CAPABILITIES", "checked_requires", "missing_capabilities"]

#: What a tool may require: the client capabilities MCP defines.
CAPABILITIES = ("elicitation", "roots", "sampling")


def checked_requires(where: str, requires: object) -> tuple[str, ...]:
    if isinstance(requires, str) or not isinstance(requires, list | tuple | set | frozenset):
        raise ConfigurationError(f"{where}: requires is a list of client capabilities, like ['elicitation'].")
    unknown = [name for name in requires if name not in CAPABILITIES]
    if unknown:
        raise ConfigurationError(
            f"{where}: requires names {unknown[0]!r}, which is not a client capability; use {', '.join(CAPABILITIES)}."
        )
    return tuple(sorted(set(requires)))


def missing_capabilities(
    requires: tuple[str, ...], declared: types.ClientCapabilities | None, tool: str
) -> MCPError | None:
    """The -32021 error for what the client did not declare, or None when it declared everything."""
    missing = [name for name in requires if declared is None or getattr(declared, name, None) is None]
    if not missing:
        return None
    data: Any = types.MissingRequiredClientCapabilityErrorData(
        required_capabilities=types.ClientCapabilities.model_validate({name: {} for name in missing})
    ).model_dump(by_alias=True, exclude_none=True)
    return MCPError(
        types.MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"Calling {tool!r} needs the client capabilities {', '.join(missing)}, which this client did not declare.",
        data=data,
    )
