"""Prompts: ``@prompt`` classes, listed by ``prompts/list`` and rendered by ``prompts/get``.

A prompt's arguments are ``render``'s parameters: required when they have no default, described by
``Annotated[str, Field(description=...)]``. MCP sends argument values as strings; each is converted to
its annotation as a tool's input is, so an ``int`` argument is refused unless it reads as one. ``render``
returns a string (one user message) or a list of messages: strings (user text), ``PromptMessage`` objects
or dicts in their shape (``{"role": "assistant", "content": {"type": "text", "text": "..."}}``), which
carry text, image and embedded-resource content.
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError

from ..auth import checked_scopes, refuse_without_scopes
from ..base import (
    Clock,
    ConfigurationError,
    ToolError,
    checked_flag,
    checked_icons,
    method_hints,
    page,
    parameters_model,
    validation_problems,
)
from ..completion import completers_of
from ..core import CallState, Context, PromptOptions
from ..elicitation import InputNeeded
from ..subscriptions import Services, switched

__all__ = ["BoundPrompt", "PromptContext", "PromptSpec", "Prompts", "build_prompt"]

_log = logging.getLogger("mcpkit.prompts")
_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")


class PromptContext(Context):
    """Subclass it, decorate it with ``@prompt``, and write ``async def render(self, ...)``.

    ``self.caller``, ``self.clock`` and plugin attributes such as ``self.remember`` are there as in a tool.
    """

    kind: ClassVar[str] = "prompt"


@dataclass(frozen=True, slots=True)
class PromptSpec:
    cls: type[PromptContext]
    name: str  # as listed: after a mount's prefix
    declared_name: str  # as ``@prompt`` gave it: what its instances see as ``self.name``
    app_id: str
    input_model: type[BaseModel]
    completers: Mapping[str, str]
    wire: types.Prompt
    scopes: frozenset[str] = frozenset()
    enabled: bool = True


@dataclass(frozen=True, slots=True)
class BoundPrompt:
    spec: PromptSpec
    providers: Mapping[str, Callable[[Context], object]]


def build_prompt(cls: type[Any], options: PromptOptions, app_id: str, prefix: str = "") -> PromptSpec:
    """Check a ``@prompt`` class; raise ``ConfigurationError`` naming it. ``prefix`` (a mount's) goes in front of
    its name."""
    where = f"prompt class {cls.__module__}.{cls.__qualname__}"
    if not (isinstance(cls, type) and issubclass(cls, PromptContext)):
        raise ConfigurationError(f"{where} must subclass mcpkit.PromptContext to be a prompt.")
    listed = prefix + options.name if isinstance(options.name, str) else options.name
    if prefix and isinstance(listed, str) and _NAME.match(options.name) and not _NAME.match(listed):
        raise ConfigurationError(
            f"{where}: prompt name {listed!r}, after the prefix of the mounts it sits in, has {len(listed)} "
            "characters, more than 128: mount it under a shorter prefix."
        )
    if not isinstance(listed, str) or not _NAME.match(listed):
        raise ConfigurationError(
            f"{where}: prompt name {listed!r} is not valid; use 1-128 letters, digits, '_', '-' or '.'."
        )
    render = getattr(cls, "render", None)
    if render is None or not inspect.iscoroutinefunction(render):
        raise ConfigurationError(f"{where} ({options.name!r}) needs `async def render(self, ...)`.")
    hints = method_hints(render, where)
    model, params = parameters_model(cls, render, hints, where, purpose="how the argument's string is converted")
    arguments = []
    wire_names = {name: model.model_fields[name].alias or name for name in params}
    for name in params:
        field = model.model_fields[name]
        arguments.append(
            types.PromptArgument(name=field.alias or name, description=field.description, required=field.is_required())
        )
    own_doc = cls.__dict__.get("__doc__")
    description = options.description or (inspect.cleandoc(own_doc) if isinstance(own_doc, str) else None)
    label = f"{where} ({options.name!r})"
    wire = types.Prompt(
        name=listed,
        title=options.title,
        description=description,
        arguments=arguments,
        icons=checked_icons(label, options.icons),
    )
    completers = completers_of(cls, params, where, wire_names)
    scopes = checked_scopes(label, options.scopes)
    return PromptSpec(
        cls,
        listed,
        options.name,
        app_id,
        model,
        completers,
        wire,
        scopes,
        checked_flag(f"{label}: enabled", options.enabled),
    )


class Prompts:
    """Serves ``prompts/list`` and ``prompts/get`` for one server."""

    def __init__(
        self,
        bound: Sequence[BoundPrompt],
        clock: Callable[[], Clock],
        caller: Callable[[Any], Any],
        services: Services | None = None,
    ) -> None:
        self._services = services
        self._every = {b.spec.name: b for b in bound}  # declared, in order; ``_prompts`` holds the enabled ones
        self._prompts = {name: b for name, b in self._every.items() if b.spec.enabled}
        self._clock = clock
        self._caller = caller

    def __bool__(self) -> bool:
        return bool(self._every)

    def completes(self) -> bool:
        return any(b.spec.completers for b in self._every.values())

    def names(self) -> tuple[str, ...]:
        return tuple(self._every)

    def enabled_names(self) -> tuple[str, ...]:
        return tuple(self._prompts)

    def switch(self, names: Iterable[str], enabled: bool) -> bool:
        """Enable or disable declared prompts (``Server.enable``/``disable``); whether the list changed."""
        on = switched(self._prompts, names, enabled)
        if on is None:
            return False
        self._prompts = {name: b for name, b in self._every.items() if name in on}
        return True

    def bound(self, ref: str) -> BoundPrompt | None:
        """The enabled prompt named ``ref`` (what completion asks for)."""
        return self._prompts.get(ref)

    def scopes_for(self, name: str) -> frozenset[str]:
        bound = self._prompts.get(name)
        return bound.spec.scopes if bound is not None else frozenset()

    def every_scope(self) -> frozenset[str]:
        return frozenset().union(*(b.spec.scopes for b in self._every.values()))

    async def list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        if self._services is not None:
            self._services.list_changes.listed("prompts", ctx)
        listed = [b.spec.wire for b in self._prompts.values()]
        items, cursor = page(listed, params.cursor if params else None, "prompts")
        return types.ListPromptsResult(prompts=items, next_cursor=cursor)

    async def get(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        bound = self._prompts.get(params.name)
        if bound is None:
            raise MCPError(
                types.INVALID_PARAMS, f"There is no prompt named {params.name[:100]!r}; list prompts to see them."
            )
        spec = bound.spec
        refuse_without_scopes(ctx, spec.scopes, f"The prompt {spec.name!r}")
        try:
            model = spec.input_model.model_validate(params.arguments or {})
        except ValidationError as exc:
            problems = "; ".join(validation_problems(exc))
            raise MCPError(types.INVALID_PARAMS, f"Prompt {spec.name!r}: {problems}.") from None
        state = CallState(ctx, self._services, params)
        instance = spec.cls(self._caller(ctx), self._clock(), spec.declared_name, spec.app_id, bound.providers, state)
        try:
            rendered = await instance.render(**dict(model))
            messages = _messages(rendered)
        except InputNeeded as needed:  # 2026-07-28: the client answers, then gets the prompt again
            return needed.result()
        except ToolError as exc:  # written for the client: sent as it is, with its code
            raise MCPError(exc.rpc_code, exc.message, data={"code": exc.code}) from None
        except MCPError:
            raise
        except Exception:
            _log.exception("Rendering prompt %r failed", spec.name)
            raise MCPError(types.INTERNAL_ERROR, f"Rendering prompt {spec.name!r} failed on the server.") from None
        return types.GetPromptResult(description=spec.wire.description, messages=messages)


def _messages(rendered: object) -> list[types.PromptMessage]:
    items = [rendered] if isinstance(rendered, str) else rendered
    if not isinstance(items, list | tuple):
        raise TypeError(f"render() returned {type(rendered).__name__}, not a string or a list of messages")
    messages = []
    for item in items:
        if isinstance(item, str):
            messages.append(types.PromptMessage(role="user", content=types.TextContent(type="text", text=item)))
        elif isinstance(item, types.PromptMessage):
            messages.append(item)
        else:
            messages.append(types.PromptMessage.model_validate(item))
    return messages
