"""``ToolSpec``: everything the server needs to list and call one tool (a class, or a function), built once."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from pydantic import BaseModel

from ..auth import checked_scopes
from ..base import ConfigurationError, checked_flag, checked_icons, method_hints, parameters_model
from ..core import ToolContext, ToolOptions
from ..ui import ToolUi, checked_tool_ui
from ._capabilities import checked_requires
from ._function_tool import function_tool
from ._output import Output, output_for
from ._rate_limits import RateLimit, parse_rate_limit
from ._schema_input import SchemaInput, schema_input

__all__ = ["ToolSpec", "build_tool_spec"]

#: MCP tool names: 1-128 characters from this set (SEP-986).
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool: its wire description, its input model and how to turn results into MCP results."""

    cls: type[ToolContext]
    #: What clients call it: the declared name, after a mount's prefix (``prefix_name``) when it is mounted.
    name: str
    #: The name ``@tool`` gave it: what its instances see as ``self.tool_name`` (and keep ``tool``-scope data under).
    declared_name: str
    app_id: str
    input_model: type[BaseModel] | SchemaInput
    params: tuple[str, ...]
    is_async: bool
    output: Output
    wire: types.Tool
    scopes: frozenset[str] = frozenset()
    rate_limit: RateLimit | None = None
    requires: tuple[str, ...] = ()
    enabled: bool = True
    #: How the tool runs as a task (docs/tasks.md): None (never), "optional" or "required".
    task: str | None = None
    ask_first: bool = False
    #: Its MCP Apps view and visibility (docs/apps.md), None without ``@tool(ui=...)``.
    ui: ToolUi | None = None
    #: The rate limits of the servers it was mounted from (``mount``), outermost first: (their prefix path, limit).
    mount_limits: tuple[tuple[str, RateLimit], ...] = ()

    @property
    def input_schema(self) -> dict[str, Any]:
        return self.wire.input_schema


def build_tool_spec(target: Callable[..., Any], options: ToolOptions, app_id: str, prefix: str = "") -> ToolSpec:
    """Check a ``@tool`` class or function and derive its schemas; raise ``ConfigurationError`` naming it.

    ``prefix`` (a mount's, with its ``_``) goes in front of the name clients call it by.
    """
    if inspect.isfunction(target):
        where = f"tool function {target.__module__}.{target.__qualname__}"
        hints = method_hints(target, where)
        cls, leading = function_tool(target, hints, where)
        execute: Callable[..., Any] = target
    else:
        where = f"tool class {target.__module__}.{target.__qualname__}"
        if not (isinstance(target, type) and issubclass(target, ToolContext)):
            raise ConfigurationError(f"{where} must subclass mcpkit.ToolContext (or be a function) to be a tool.")
        cls, leading = target, 1
        found = cls.__dict__.get("execute") or getattr(cls, "execute", None)
        if found is None or found is getattr(ToolContext, "execute", None):
            raise ConfigurationError(
                f"{where} ({options.name!r}) has no execute() method; define `async def execute(self, ...)`."
            )
        execute = found
        hints = method_hints(execute, where)
    name = prefix + options.name if isinstance(options.name, str) else options.name
    if not isinstance(name, str) or not _TOOL_NAME.match(name):
        if prefix and _TOOL_NAME.match(options.name):
            raise ConfigurationError(
                f"{where}: tool name {name!r}, after the prefix of the mounts it sits in, has {len(name)} characters, "
                "more than 128: mount it under a shorter prefix."
            )
        raise ConfigurationError(
            f"{where}: tool name {name!r} is not valid; use 1-128 letters, digits, '_', '-' or '.'."
        )
    named = f"{where} ({name!r})"
    scopes = checked_scopes(named, options.scopes)
    rate_limit = parse_rate_limit(named, options.rate_limit)
    requires = checked_requires(named, options.requires)
    icons = checked_icons(named, options.icons)
    enabled = checked_flag(f"{named}: enabled", options.enabled)
    task, ask_first = _checked_task(named, options.task, options.ask_first)
    ui = checked_tool_ui(named, options.ui)
    own_doc = cls.__dict__.get("__doc__")
    description = options.description or (inspect.cleandoc(own_doc) if isinstance(own_doc, str) else "")
    if not description.strip():
        raise ConfigurationError(
            f"{named} has no description: pass @tool(description=...) or give it a docstring; the model chooses "
            "tools by their descriptions."
        )
    input_model: type[BaseModel] | SchemaInput
    if options.input_schema is not None:  # hand-written: advertised verbatim, checked with jsonschema
        input_model, params, input_schema = schema_input(options.input_schema, execute, named, leading=leading)
    else:
        input_model, params = parameters_model(cls, execute, hints, where, purpose="the input schema", leading=leading)
        try:
            input_schema = input_model.model_json_schema(by_alias=True)
        except Exception as exc:
            raise ConfigurationError(
                f"{where}: cannot build a JSON Schema for {execute.__name__}()'s parameters: {exc}"
            ) from exc
    try:
        output = output_for(hints.get("return", inspect.Signature.empty))
    except Exception as exc:
        raise ConfigurationError(
            f"{where}: cannot build an output schema from {execute.__name__}()'s return annotation: {exc}"
        ) from exc
    annotations = None
    hints_given = (options.read_only, options.destructive, options.idempotent, options.open_world, options.title)
    if any(v is not None for v in hints_given):
        annotations = types.ToolAnnotations(
            title=options.title,
            read_only_hint=options.read_only,
            destructive_hint=options.destructive,
            idempotent_hint=options.idempotent,
            open_world_hint=options.open_world,
        )
    wire = types.Tool(
        name=name,
        title=options.title,
        description=description,
        input_schema=input_schema,
        output_schema=output.schema,
        annotations=annotations,
        icons=icons,
        _meta=None if ui is None else dict(ui.meta),
    )
    return ToolSpec(
        cls=cls,
        name=name,
        declared_name=options.name,
        app_id=app_id,
        input_model=input_model,
        params=params,
        is_async=inspect.iscoroutinefunction(execute),
        output=output,
        wire=wire,
        scopes=scopes,
        rate_limit=rate_limit,
        requires=requires,
        enabled=enabled,
        task=task,
        ask_first=ask_first,
        ui=ui,
    )


def _checked_task(where: str, task: object, ask_first: object) -> tuple[str | None, bool]:
    """``@tool(task=..., ask_first=...)`` as the spec keeps it: None, "optional" or "required", and a bool."""
    if task is not True and task is not False and task != "required":
        raise ConfigurationError(f"{where}: task is True, False or 'required', not {task!r:.40}.")
    first = checked_flag(f"{where}: ask_first", ask_first)
    if first and task is False:
        raise ConfigurationError(
            f"{where}: ask_first=True asks before the call becomes a task, so it needs task=True or task='required'."
        )
    return (None if task is False else "optional" if task is True else "required"), first
