"""Completion (``completion/complete``) of prompt arguments and resource-template parameters.

A value is completed by a method beside the parameter: ``async def complete_<name>(self, value)`` on the
prompt or resource class, optionally taking ``arguments`` too (the values the client already chose for
the other parameters). It returns the candidates; at most ``MAX_VALUES`` are sent, with ``total`` and
``hasMore`` saying how many there were. A parameter without a method completes to nothing, as the
specification allows; a method whose parameter does not exist is refused when the server is built.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError

from ..base import Clock, ConfigurationError, ToolError

__all__ = ["MAX_VALUES", "Completable", "Completions", "completers_of"]

_log = logging.getLogger("mcpkit.completion")
_PREFIX = "complete_"

#: The most values one completion sends (the specification's limit).
MAX_VALUES = 100


def completers_of(
    cls: type[Any], params: Sequence[str], where: str, wire: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The name clients use for a parameter (``wire``: its alias, if any) -> its ``complete_<parameter>`` method."""
    found: dict[str, str] = {}
    for attribute in dir(cls):
        if not attribute.startswith(_PREFIX):
            continue
        parameter = attribute[len(_PREFIX) :]
        method = getattr(cls, attribute)
        if parameter not in params:
            raise ConfigurationError(
                f"{where}: {attribute}() completes {parameter!r}, which is not one of its parameters "
                f"({', '.join(params) or 'none'}); rename it complete_<parameter>."
            )
        if not inspect.iscoroutinefunction(method):
            raise ConfigurationError(f"{where}: {attribute} must be `async def {attribute}(self, value)`.")
        names = list(inspect.signature(method).parameters)[1:]
        if names not in (["value"], ["value", "arguments"]):
            raise ConfigurationError(
                f"{where}: {attribute}() takes (self, value) or (self, value, arguments), not ({', '.join(names)})."
            )
        found[(wire or {}).get(parameter, parameter)] = attribute
    return found


class Completable(Protocol):
    """A server's prompts or resources, as completion finds their completers (``Prompts``, ``Resources``)."""

    def completes(self) -> bool: ...

    def bound(self, ref: str) -> Any | None:
        """The prompt named ``ref``, or the resource template whose URI template is ``ref`` (its spec and
        providers), or None."""


class Completions:
    """Serves ``completion/complete`` from the completers of a server's prompts and resource templates."""

    def __init__(
        self, resources: Completable, prompts: Completable, clock: Callable[[], Clock], caller: Callable[[Any], Any]
    ) -> None:
        self._resources = resources
        self._prompts = prompts
        self._clock = clock
        self._caller = caller

    def __bool__(self) -> bool:
        return self._resources.completes() or self._prompts.completes()

    async def complete(
        self, ctx: ServerRequestContext[Any, Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        ref = params.ref
        if isinstance(ref, types.PromptReference):
            bound = self._prompts.bound(ref.name)
            what = f"prompt {ref.name!r}"
        else:
            bound = self._resources.bound(ref.uri)
            what = f"resource template {ref.uri!r}"
        if bound is None:
            raise MCPError(types.INVALID_PARAMS, f"There is no {what} to complete; list them to see what there is.")
        spec = bound.spec
        method_name = spec.completers.get(params.argument.name)
        if method_name is None:
            return types.CompleteResult(completion=types.Completion(values=[], total=0, has_more=False))
        instance = spec.cls(self._caller(ctx), self._clock(), spec.declared_name, spec.app_id, bound.providers)
        method = getattr(instance, method_name)
        arguments: Mapping[str, str] = (params.context.arguments or {}) if params.context else {}
        try:
            if "arguments" in inspect.signature(method).parameters:
                values = await method(params.argument.value, dict(arguments))
            else:
                values = await method(params.argument.value)
            candidates = [str(value) for value in values]
        except ToolError as exc:
            raise MCPError(exc.rpc_code, exc.message, data={"code": exc.code}) from None
        except Exception:
            _log.exception("Completing %s of %s failed", params.argument.name, what)
            raise MCPError(types.INTERNAL_ERROR, f"Completing {params.argument.name!r} failed on the server.") from None
        sent = candidates[:MAX_VALUES]
        return types.CompleteResult(
            completion=types.Completion(values=sent, total=len(candidates), has_more=len(candidates) > len(sent))
        )
