"""Tools written as functions: ``@tool`` on a plain ``async def``, for a one-liner beside the classes.

When the server is built the function becomes the ``execute`` of a ``ToolContext`` subclass made for it: a method
when its first parameter is annotated ``ToolContext`` (the call's context arrives there, as ``self`` does in a
class), a static method when it takes no context. The function itself is not changed or wrapped, so a call costs
what a class's call costs, and the input schema comes from its own parameters (docs/architecture.md says why).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, cast

from ..base import ConfigurationError
from ..core import Context, ToolContext

__all__ = ["function_tool"]


def function_tool(fn: Callable[..., Any], hints: Mapping[str, Any], where: str) -> tuple[type[ToolContext], int]:
    """The ``ToolContext`` subclass that runs ``fn``, and how many of ``fn``'s leading parameters are not inputs
    (1 when it takes the context, else 0); a ConfigurationError naming ``where`` for a function that cannot be one."""
    if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
        raise ConfigurationError(f"{where} yields values; a tool returns its one result: use return, not yield.")
    takes_context = False
    for index, param in enumerate(inspect.signature(fn).parameters.values()):
        hint = hints.get(param.name)
        if not (isinstance(hint, type) and issubclass(hint, Context)):
            continue
        if index != 0:
            raise ConfigurationError(
                f"{where}: parameter {param.name!r} is annotated {hint.__name__}: the call's context is the first "
                "parameter (it stands where self does in a tool class); move it there."
            )
        if hint is not ToolContext:
            raise ConfigurationError(
                f"{where}: parameter {param.name!r} is annotated {hint.__name__}; annotate it mcpkit.ToolContext, "
                "which is what a function tool is given (a subclass of your own would need a tool class)."
            )
        if param.kind not in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            raise ConfigurationError(f"{where}: the context parameter {param.name!r} must not be keyword-only.")
        takes_context = True
    namespace = {
        "execute": fn if takes_context else staticmethod(fn),
        "__module__": fn.__module__,
        "__qualname__": fn.__qualname__,
        "__doc__": fn.__doc__,
    }
    return cast(type[ToolContext], type(fn.__name__, (ToolContext,), namespace)), int(takes_context)
