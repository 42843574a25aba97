"""Errors a tool raises on purpose, and errors in how a server is put together."""

from __future__ import annotations

import re

from mcp_types import INTERNAL_ERROR, INVALID_REQUEST

__all__ = ["ConfigurationError", "StartupError", "ToolError"]

_CODE = re.compile(r"^[A-Z][A-Z0-9_]{1,63}$")


class ToolError(Exception):
    """A failure the caller should see: the client gets an ``isError`` result.

    The result's text is ``message`` and its ``_meta["mcpkit/error"]`` is
    ``{"code": code, "message": message}``, so both the model and a program can
    act on it. Write the message for the model: what went wrong, what to do.
    ``refusal=True``: it refuses the caller for who it is (an anonymous caller asking
    for a signed-in user's data), which matters where it becomes a JSON-RPC error.
    """

    def __init__(self, message: str, *, code: str = "TOOL_ERROR", refusal: bool = False) -> None:
        if not _CODE.match(code):
            raise ValueError(f"ToolError code must be UPPER_SNAKE_CASE (like 'TICKET_NOT_FOUND'), got {code!r}")
        super().__init__(message)
        self.message = message
        self.code = code
        self.refusal = refusal

    @property
    def rpc_code(self) -> int:
        """Its JSON-RPC error code outside a tool call (a resource, a prompt, a completion): -32600 for a refusal,
        as every refusal of the caller, else -32603."""
        return INVALID_REQUEST if self.refusal else INTERNAL_ERROR

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, code={self.code!r})"


class ConfigurationError(ValueError):
    """The server's tools, apps, plugins, auth or serving options are set up wrongly; raised before it serves.

    It is a ``ValueError`` too, so code that caught the constructors' ``ValueError`` keeps working.
    """


class StartupError(RuntimeError):
    """A plugin could not start (its store is unreachable, say), so the server does not serve.

    The message names the plugin and says why; ``mcpkit run`` prints it as one line.
    """
