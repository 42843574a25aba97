"""Tools: the spec built from a ``@tool`` class (input model, output schema, scopes, rate limits), and the
dispatcher that serves ``tools/list`` and ``tools/call``; and the schema lint strict clients apply."""

from ._dispatch import BoundTool, Dispatcher, TaskOffer
from ._rate_limits import RateLimit, parse_rate_limit
from ._schema_lint import Finding, lint_tool
from ._shared_rate_limits import SharedRateLimiter, checked_rate_limit_store
from ._threads import ToolThreads
from ._tool_spec import ToolSpec, build_tool_spec

__all__ = [
    "BoundTool",
    "Dispatcher",
    "Finding",
    "RateLimit",
    "SharedRateLimiter",
    "TaskOffer",
    "ToolSpec",
    "ToolThreads",
    "build_tool_spec",
    "checked_rate_limit_store",
    "lint_tool",
    "parse_rate_limit",
]
