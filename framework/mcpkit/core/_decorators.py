"""``@tool`` and ``@app``: inert markers that attach frozen options to a class (``@tool`` also to a function), and the
options of MCP Apps views (``Ui``, ``UiResource``) they carry.

Nothing is checked or registered here; :class:`mcpkit.Server` collects and
validates everything when it is built, with errors that name the class.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

if TYPE_CHECKING:
    from ._plugin import Plugin

__all__ = [
    "AppOptions",
    "PromptOptions",
    "ResourceOptions",
    "ToolOptions",
    "Ui",
    "UiResource",
    "app",
    "app_options",
    "prompt",
    "prompt_options",
    "resource",
    "resource_options",
    "tool",
    "tool_options",
]

T = TypeVar("T", bound=type[Any])
ToolT = TypeVar("ToolT", bound=Callable[..., Any])

_TOOL_ATTR = "__mcpkit_tool__"
_APP_ATTR = "__mcpkit_app__"
_RESOURCE_ATTR = "__mcpkit_resource__"
_PROMPT_ATTR = "__mcpkit_prompt__"


@dataclass(frozen=True, slots=True)
class Ui:
    """``@tool(ui=Ui(view="ui://..."))``: the MCP Apps view a host shows the tool's result in, and who may call the
    tool: ``"model"`` (offered to the model), ``"app"`` (callable by a view), or both (docs/apps.md)."""

    view: str | None = None
    visibility: Sequence[Literal["model", "app"]] = ("model", "app")


@dataclass(frozen=True, slots=True)
class UiResource:
    """``@resource(uri="ui://...", ui=UiResource(...))``: what a view's sandbox may reach (origins for ``fetch`` and
    for scripts, styles, images and fonts, nested frames, ``<base>``), the browser features it asks for (``camera``,
    ``microphone``, ``geolocation``, ``clipboard-write``), its dedicated origin, and whether the host draws a border
    around it (docs/apps.md)."""

    connect_domains: Sequence[str] = ()
    resource_domains: Sequence[str] = ()
    frame_domains: Sequence[str] = ()
    base_uri_domains: Sequence[str] = ()
    domain: str | None = None
    prefers_border: bool | None = None
    permissions: Sequence[str] = ()


@dataclass(frozen=True, slots=True)
class ToolOptions:
    """What ``@tool(...)`` said about a tool class, as typed there; the server checks the values when it is built."""

    name: str
    description: str | None
    title: str | None = None
    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    scopes: Sequence[str] = ()
    rate_limit: str | None = None
    input_schema: Mapping[str, Any] | None = None  # a hand-written JSON Schema instead of execute's parameters
    requires: Sequence[str] = ()  # client capabilities
    open_world: bool | None = None
    icons: Sequence[Any] = ()
    enabled: bool = True  # listed and callable from the start; ``Server.enable``/``disable`` change it
    task: bool | Literal["required"] = False
    ask_first: bool = False  # a task tool that asks before it becomes a task (``self.run_as_task()``)
    ui: Ui | None = None  # the MCP Apps view it is shown in, and its visibility


@dataclass(frozen=True, slots=True)
class ResourceOptions:
    """What ``@resource(...)`` said about a resource class."""

    uri: str
    name: str
    description: str | None
    mime_type: str | None
    title: str | None
    scopes: Sequence[str] = ()
    icons: Sequence[Any] = ()
    enabled: bool = True
    ui: UiResource | None = None  # a ``ui://`` view's sandbox and border


@dataclass(frozen=True, slots=True)
class PromptOptions:
    """What ``@prompt(...)`` said about a prompt class."""

    name: str
    description: str | None
    title: str | None
    scopes: Sequence[str] = ()
    icons: Sequence[Any] = ()
    enabled: bool = True


@dataclass(frozen=True, slots=True)
class AppOptions:
    """What ``@app(...)`` said about an app class."""

    id: str
    name: str
    tools: tuple[Callable[..., Any], ...]
    plugins: tuple[Plugin, ...]
    resources: tuple[type[Any], ...] = ()
    prompts: tuple[type[Any], ...] = ()


def tool(
    *,
    name: str,
    description: str | None = None,
    title: str | None = None,
    read_only: bool | None = None,
    destructive: bool | None = None,
    idempotent: bool | None = None,
    scopes: Sequence[str] = (),
    rate_limit: str | None = None,
    input_schema: Mapping[str, Any] | None = None,
    requires: Sequence[str] = (),
    open_world: bool | None = None,
    icons: Sequence[Any] = (),
    enabled: bool = True,
    task: bool | Literal["required"] = False,
    ask_first: bool = False,
    ui: Ui | None = None,
) -> Callable[[ToolT], ToolT]:
    """Mark a :class:`ToolContext` subclass, or a plain function (its parameters are the inputs, and a first one
    annotated ``ToolContext`` gets the call's context), as the tool ``name``, described by ``description`` or else
    its docstring; the server checks the options when it is built (docs/tools.md, docs/authorization.md for
    ``scopes``, docs/tasks.md for ``task``, docs/apps.md for ``ui``).
    """

    options = ToolOptions(
        name,
        description,
        title,
        read_only,
        destructive,
        idempotent,
        scopes,
        rate_limit,
        input_schema,
        requires,
        open_world,
        icons,
        enabled,
        task,
        ask_first,
        ui,
    )

    def mark(target: ToolT) -> ToolT:
        if not (isinstance(target, type) or inspect.isfunction(target)):
            raise TypeError(
                f"@tool(name={name!r}) decorates a ToolContext subclass or a function (def or async def), "
                f"not {target!r}"
            )
        setattr(target, _TOOL_ATTR, options)
        return target

    return mark


def resource(
    *,
    uri: str,
    name: str,
    description: str | None = None,
    mime_type: str | None = None,
    title: str | None = None,
    scopes: Sequence[str] = (),
    icons: Sequence[Any] = (),
    enabled: bool = True,
    ui: UiResource | None = None,
) -> Callable[[T], T]:
    """Mark a :class:`ResourceContext` subclass as the resource at ``uri``.

    A ``uri`` with ``{placeholders}`` (RFC 6570) is a resource template: each placeholder arrives as the
    ``read`` parameter of the same name. ``description`` falls back to the class docstring. ``scopes``: the
    OAuth scopes a caller's token must grant to read it (docs/authorization.md). ``icons`` and ``enabled`` as for
    ``@tool``. A ``ui://`` URI makes it an MCP Apps view (its HTML served as ``text/html;profile=mcp-app``), whose
    sandbox ``ui`` describes (docs/apps.md).
    """
    options = ResourceOptions(uri, name, description, mime_type, title, scopes, icons, enabled, ui)
    return _marker(_RESOURCE_ATTR, options, f"@resource(uri={uri!r})")


def prompt(
    *,
    name: str,
    description: str | None = None,
    title: str | None = None,
    scopes: Sequence[str] = (),
    icons: Sequence[Any] = (),
    enabled: bool = True,
) -> Callable[[T], T]:
    """Mark a :class:`PromptContext` subclass as the prompt ``name``; its arguments are ``render``'s parameters.

    ``scopes``: the OAuth scopes a caller's token must grant to get it (docs/authorization.md). ``icons`` and
    ``enabled`` as for ``@tool``.
    """
    options = PromptOptions(name, description, title, scopes, icons, enabled)
    return _marker(_PROMPT_ATTR, options, f"@prompt(name={name!r})")


def _marker(attribute: str, options: object, label: str) -> Callable[[T], T]:
    def mark(cls: T) -> T:
        if not isinstance(cls, type):
            raise TypeError(f"{label} decorates a class, not {cls!r}")
        setattr(cls, attribute, options)
        return cls

    return mark


def app(
    *,
    id: str,
    name: str | None = None,
    tools: Sequence[Callable[..., Any]] = (),
    plugins: Sequence[Plugin] = (),
    resources: Sequence[type[Any]] = (),
    prompts: Sequence[type[Any]] = (),
) -> Callable[[T], T]:
    """Group tools (classes or ``@tool`` functions), resources and prompts (and the plugins they share) into an app a
    :class:`Server` hosts."""

    options = AppOptions(id, name or id, tuple(tools), tuple(plugins), tuple(resources), tuple(prompts))

    def mark(cls: T) -> T:
        if not isinstance(cls, type):
            raise TypeError(f"@app(id={id!r}) decorates a class, not {cls!r}")
        setattr(cls, _APP_ATTR, options)
        return cls

    return mark


def tool_options(target: Callable[..., Any]) -> ToolOptions | None:
    """The options ``@tool`` put on exactly this class (not inherited from a base) or function."""
    found = getattr(target, "__dict__", {}).get(_TOOL_ATTR)
    return found if isinstance(found, ToolOptions) else None


def app_options(cls: type[Any]) -> AppOptions | None:
    """The options ``@app`` put on exactly this class."""
    found = cls.__dict__.get(_APP_ATTR)
    return found if isinstance(found, AppOptions) else None


def resource_options(cls: type[Any]) -> ResourceOptions | None:
    """The options ``@resource`` put on exactly this class."""
    found = cls.__dict__.get(_RESOURCE_ATTR)
    return found if isinstance(found, ResourceOptions) else None


def prompt_options(cls: type[Any]) -> PromptOptions | None:
    """The options ``@prompt`` put on exactly this class."""
    found = cls.__dict__.get(_PROMPT_ATTR)
    return found if isinstance(found, PromptOptions) else None
