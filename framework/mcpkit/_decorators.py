"""``@tool`` and ``@app``: inert markers that attach frozen options to a class.

Nothing is checked or registered here; :class:`mcpkit.Server` collects and
validates everything when it is built, with errors that name the class.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ._plugin import Plugin

__all__ = ["AppOptions", "ToolOptions", "app", "app_options", "tool", "tool_options"]

T = TypeVar("T", bound=type[Any])

_TOOL_ATTR = "__mcpkit_tool__"
_APP_ATTR = "__mcpkit_app__"


@dataclass(frozen=True, slots=True)
class ToolOptions:
    """What ``@tool(...)`` said about a tool class."""

    name: str
    description: str | None
    title: str | None = None
    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    scopes: object = ()  # checked when the server is built (``_oauth_scopes.checked_scopes``)
    rate_limit: object = None  # checked when the server is built (``_rate_limits.parse_rate_limit``)


@dataclass(frozen=True, slots=True)
class AppOptions:
    """What ``@app(...)`` said about an app class."""

    id: str
    name: str
    tools: tuple[type[Any], ...]
    plugins: tuple[Plugin, ...]


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
) -> Callable[[T], T]:
    """Mark a :class:`ToolContext` subclass as the tool ``name``.

    ``description`` falls back to the class docstring; a tool with neither is
    refused when the server is built, since the model chooses tools by it.
    ``scopes``: the OAuth scopes a caller's token must grant to call it
    (docs/authorization.md); static keys and stdio are not limited by scope.
    ``rate_limit`` (``"10/minute"``) bounds each caller's calls of this tool (docs/deployment.md).
    """

    options = ToolOptions(name, description, title, read_only, destructive, idempotent, scopes, rate_limit)

    def mark(cls: T) -> T:
        if not isinstance(cls, type):
            raise TypeError(f"@tool(name={name!r}) decorates a class (a ToolContext subclass), not {cls!r}")
        setattr(cls, _TOOL_ATTR, options)
        return cls

    return mark


def app(
    *,
    id: str,
    name: str | None = None,
    tools: Sequence[type[Any]] = (),
    plugins: Sequence[Plugin] = (),
) -> Callable[[T], T]:
    """Group tools (and the plugins they share) into an app a :class:`Server` hosts."""

    options = AppOptions(id, name or id, tuple(tools), tuple(plugins))

    def mark(cls: T) -> T:
        if not isinstance(cls, type):
            raise TypeError(f"@app(id={id!r}) decorates a class, not {cls!r}")
        setattr(cls, _APP_ATTR, options)
        return cls

    return mark


def tool_options(cls: type[Any]) -> ToolOptions | None:
    """The options ``@tool`` put on exactly this class (not inherited from a base)."""
    found = cls.__dict__.get(_TOOL_ATTR)
    return found if isinstance(found, ToolOptions) else None


def app_options(cls: type[Any]) -> AppOptions | None:
    """The options ``@app`` put on exactly this class."""
    found = cls.__dict__.get(_APP_ATTR)
    return found if isinstance(found, AppOptions) else None
