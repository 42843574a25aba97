"""Middleware over every MCP method: ``Server(middleware=[...])``, each one wrapping the next, in the Starlette
spirit of an app wrapping an app.

A middleware is any ``async def middleware(call, call_next)``: ``call`` is a ``MethodCall`` (the method, its
params as sent, who is calling, the protocol era) and ``await call_next(call)`` runs the rest (the next
middleware, then mcpkit's handler) and returns the result as it goes on the wire (a dict, for ``tools/list``
``{"tools": [...]}``). A middleware can look at both, time them, return a changed result (hide tools from some
callers), or refuse the request with ``MethodRefused(code, message)``, which the client gets as the JSON-RPC error
``-32600`` with ``data.code``. It sees requests only (``tools/list``, ``tools/call``, ``resources/read``,
``prompts/get``, ``completion/complete``, ...), not notifications, and runs on the SDK's own middleware chain,
inside the ``requestState`` boundary. A server without middleware has none of this on its call path.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_REQUEST
from pydantic import BaseModel

from ..base import ConfigurationError
from ..core import Caller

__all__ = ["MethodCall", "MethodRefused", "Middleware", "sdk_middleware"]

_CODE = re.compile(r"^[A-Z][A-Z0-9_]*$")


@dataclass(frozen=True, slots=True)
class MethodCall:
    """One MCP request as a middleware sees it."""

    method: str
    params: Mapping[str, Any]
    caller: Caller
    protocol_version: str
    _context: ServerRequestContext[Any, Any] = field(repr=False, compare=False)

    @property
    def name(self) -> str | None:
        """The tool or prompt a ``tools/call`` or ``prompts/get`` names, or the URI ``resources/read`` reads."""
        value = self.params.get("uri" if self.method == "resources/read" else "name")
        return value if isinstance(value, str) else None


class MethodRefused(Exception):
    """Raise it in a middleware to refuse the request: the client gets ``-32600`` with ``data.code``."""

    def __init__(self, code: str, message: str) -> None:
        if not _CODE.match(code):
            raise ValueError(f"MethodRefused code must be UPPER_SNAKE_CASE (like 'NOT_ALLOWED'), got {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message


Middleware = Callable[[MethodCall, Callable[[MethodCall], Awaitable[Any]]], Awaitable[Any]]


def sdk_middleware(middleware: Sequence[Middleware], caller: Callable[[Any], Caller]) -> list[Any]:
    """Each of ``middleware`` as one of the SDK's server middlewares (outermost first)."""
    if isinstance(middleware, str) or not isinstance(middleware, Sequence):
        raise ConfigurationError("Server(middleware=...) is a list of async functions (call, call_next).")
    for candidate in middleware:
        if not callable(candidate):
            raise ConfigurationError(
                f"Server(middleware=[...]): {candidate!r} is not an async function (call, call_next)."
            )
    return [_adapted(candidate, caller) for candidate in middleware]


def _adapted(middleware: Middleware, caller: Callable[[Any], Caller]) -> Any:
    async def around(ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        if ctx.request_id is None:  # a notification: not a method call
            return await call_next(ctx)
        call = MethodCall(ctx.method, dict(ctx.params or {}), caller(ctx), ctx.protocol_version, ctx)

        async def rest(passed: MethodCall) -> Any:
            result = await call_next(passed._context)
            if isinstance(result, BaseModel):  # a middleware always sees the wire form
                return result.model_dump(mode="json", by_alias=True, exclude_none=True)
            return result

        try:
            return await middleware(call, rest)
        except MethodRefused as refused:
            raise MCPError(INVALID_REQUEST, refused.message, data={"code": refused.code}) from None

    return around
