"""``Plugin``: how code outside mcpkit adds attributes, tools, lifecycle and call hooks."""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..base import ConfigurationError

if TYPE_CHECKING:
    from ..base import Clock
    from ..telemetry import Telemetry
    from ._context import Context, ToolContext

__all__ = ["DEFAULT_TURN_TIMEOUT", "Plugin", "PluginSetup", "check_hooks", "providers_for"]

#: How long a call queued behind its caller's earlier ones waits for its turn, unless ``Server(turn_timeout=...)``.
DEFAULT_TURN_TIMEOUT = 30.0


@dataclass(frozen=True, slots=True)
class PluginSetup:
    """What a plugin learns when a server is built around it."""

    server_name: str
    app_id: str
    app_name: str
    tool_names: tuple[str, ...]
    clock: Callable[[], Clock]
    #: One dict per server, for plugins to share resources (e.g. one in-process store).
    shared: dict[str, Any] = field(default_factory=dict)
    #: How long a call that queues behind its caller's earlier ones may wait for its turn (``Server(turn_timeout)``).
    turn_timeout: float = DEFAULT_TURN_TIMEOUT
    #: What the server records (spans, metrics, the audit log), for a plugin that observes its own work; None outside
    #: a server.
    telemetry: Telemetry | None = None


class Plugin:
    """Base class for plugins; override only what you need.

    A plugin instance given to ``@app(plugins=[...])`` or ``Server(plugins=[...])``
    is a template: every ``Server`` works on its own shallow copy, so state made
    in :meth:`setup` or :meth:`startup` belongs to that server alone.

    Call hooks run in the declared order (server plugins first, then the app's):
    ``before_call`` outermost-first, ``after_call`` and ``on_error`` innermost-first.
    """

    def setup(self, setup: PluginSetup) -> None:
        """Check configuration when the server is built; raise to refuse it (the error names you)."""

    def attributes(self) -> Mapping[str, Callable[[Context], object]]:
        """Attributes this plugin adds to every context (tools, resources, prompts): name -> factory(ctx), built on
        first use. ``ctx.kind`` says which of the three it is."""
        return {}

    def tools(self) -> Sequence[type[ToolContext]]:
        """Tool classes this plugin contributes to its app."""
        return ()

    def resources(self) -> Sequence[type[Any]]:
        """``@resource`` classes this plugin contributes to its app (checked with the app's own)."""
        return ()

    def prompts(self) -> Sequence[type[Any]]:
        """``@prompt`` classes this plugin contributes to its app (checked with the app's own)."""
        return ()

    def max_request_bytes(self) -> int:
        """The largest HTTP request body this plugin's tools must accept; 0 when the default is enough.

        The server's body limit (256 KiB by default) is raised to the largest of these, and an
        explicit ``max_body_bytes`` below one is refused when the app is built.
        """
        return 0

    def task_store(self) -> object | None:
        """Where the server keeps its tasks (a ``mcpkit.tasks.TaskStore``), once this plugin has started; None
        (the default) leaves them to another plugin or to the server's memory (docs/tasks.md)."""
        return None

    async def startup(self) -> None:
        """Run when the server starts serving (open a store, a connection pool)."""

    async def shutdown(self) -> None:
        """Run when the server stops, in reverse order of startup."""

    async def before_call(self, ctx: ToolContext, arguments: Mapping[str, Any]) -> None:
        """Run before ``execute``; raise ``ToolError`` to refuse the call."""

    async def after_call(self, ctx: ToolContext, result: Any) -> Any:
        """Run after a successful ``execute``; return the (possibly replaced) result."""
        return result

    async def on_error(self, ctx: ToolContext, error: BaseException) -> None:
        """Run when ``execute`` or a later plugin's hook raised; cannot swallow the error."""

    @property
    def plugin_name(self) -> str:
        """How errors and logs name this plugin."""
        return type(self).__name__


#: The prefixes of hook names: a public method named so that is not one of ``Plugin``'s is a misspelt hook.
_HOOK_PREFIXES = ("before_", "after_", "on_")


def check_hooks(cls: type[Plugin], where: str) -> None:
    """Refuse a plugin class with a public method named like a hook that is none (``before_cal``, ``on_call``),
    which would silently never run; ``where`` says where the plugin was given."""
    api = [name for name, value in vars(Plugin).items() if not name.startswith("_") and inspect.isfunction(value)]
    for klass in cls.__mro__[: cls.__mro__.index(Plugin)]:
        for name, value in vars(klass).items():
            function = inspect.isfunction(getattr(value, "__func__", value))
            if name.startswith("_") or hasattr(Plugin, name) or not function:
                continue
            near = difflib.get_close_matches(name, api, n=1, cutoff=0.8)
            if near or name.startswith(_HOOK_PREFIXES):
                hint = f"did you mean {near[0]}()?" if near else f"a plugin overrides {', '.join(sorted(api))}."
                raise ConfigurationError(
                    f"Plugin {cls.__name__} in {where} defines {name}(), which is not a Plugin hook and would "
                    f"never be called: {hint} Rename it, or make it private (_{name}) if it is the plugin's helper."
                )


def providers_for(cls: type[Context], plugins: Sequence[Plugin], what: str) -> dict[str, Callable[[Context], object]]:
    """The attribute factories ``plugins`` give ``cls`` (``what`` names it in errors, e.g. "tool 'x'")."""
    providers: dict[str, Callable[[Context], object]] = {}
    givers: dict[str, str] = {}
    declared = {name for klass in cls.__mro__ for name in getattr(klass, "__annotations__", {})}
    for plugin in plugins:
        for name, factory in plugin.attributes().items():
            if name in givers:
                raise ConfigurationError(
                    f"Plugins {givers[name]} and {plugin.plugin_name} both add the attribute {name!r} "
                    f"to {what}; each attribute can come from one plugin only."
                )
            if name.startswith("_") or name in declared or hasattr(cls, name):
                raise ConfigurationError(
                    f"Plugin {plugin.plugin_name} adds the attribute {name!r}, which {cls.__qualname__} "
                    "already has (or which is private); the plugin's would never be seen."
                )
            givers[name] = plugin.plugin_name
            providers[name] = factory
    return providers
