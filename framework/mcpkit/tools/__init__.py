"""Tools: the spec built from a ``@tool`` class (input model, output schema, scopes, rate limits), and the
dispatcher that serves ``tools/list`` and ``tools/call``."""

from ._dispatch import BoundTool, Dispatcher, TaskOffer
from ._rate_limits import RateLimit, parse_rate_limit
from ._shared_rate_limits import SharedRateLimiter, checked_rate_limit_store
from ._threads import ToolThreads
from ._tool_spec import ToolSpec, build_tool_spec

__all__ = [
    "BoundTool",
    "Dispatcher",
    "RateLimit",
    "SharedRateLimiter",
    "TaskOffer",
    "ToolSpec",
    "ToolThreads",
    "build_tool_spec",
    "checked_rate_limit_store",
    "parse_rate_limit",
]
