"""Building a ``Server`` from its app classes: each tool bound to the plugins that wrap it, each app's resources and
prompts, the plugins set up; and the checks of ``Server``'s own arguments. Every failure is a ``ConfigurationError``
naming the class or argument, raised while the server is built."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..auth import StaticKeys
from ..base import Authenticator, Clock, ConfigurationError, SystemClock
from ..core import DEFAULT_TURN_TIMEOUT, Plugin, PluginSetup, app_options, tool_options
from ..tools import BoundTool, SharedRateLimiter, ToolSpec, build_tool_spec, checked_rate_limit_store
from ._catalog import AppFeatures

__all__ = ["Assembled", "assemble", "checked_authenticators", "checked_clock", "shared_limits"]


@dataclass
class Assembled:
    """What a server is built from: its tools (bound to their plugins), each app's other features, and the plugin
    instances it works on (copies of the templates given to ``@app`` and ``Server``, in order)."""

    tools: dict[str, BoundTool] = field(default_factory=dict)
    features: list[AppFeatures] = field(default_factory=list)
    plugins: list[Plugin] = field(default_factory=list)


def assemble(
    apps: Sequence[type[Any]],
    plugins: Sequence[Plugin],
    server_name: str,
    clock: Callable[[], Clock],
    turn_timeout: float = DEFAULT_TURN_TIMEOUT,
) -> Assembled:
    """Collect and check ``apps`` and the server's ``plugins`` (``clock``: the server's, read when a plugin asks;
    ``turn_timeout``: what each plugin learns in its setup)."""
    return _Assembly(server_name, clock, checked_turn_timeout(turn_timeout)).collect(apps, plugins)


def checked_turn_timeout(seconds: object) -> float:
    """``turn_timeout``, checked: a positive, finite number of seconds."""
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 0 < seconds < float("inf"):
        raise ConfigurationError(f"turn_timeout is a positive number of seconds, not {seconds!r:.40}.")
    return float(seconds)


class _Assembly:
    def __init__(self, server_name: str, clock: Callable[[], Clock], turn_timeout: float) -> None:
        self.name = server_name
        self.clock = clock
        self.turn_timeout = turn_timeout
        self.done = Assembled()

    def _adopt(self, plugin: Plugin, where: str) -> Plugin:
        if not isinstance(plugin, Plugin):
            raise ConfigurationError(f"{where}: {plugin!r} is not a mcpkit.Plugin instance.")
        own = copy.copy(plugin)
        self.done.plugins.append(own)
        return own

    def collect(self, apps: Sequence[type[Any]], plugins: Sequence[Plugin]) -> Assembled:
        server_plugins = [self._adopt(plugin, "Server(plugins=...)") for plugin in plugins]
        if not apps:
            raise ConfigurationError("Server(apps=[...]) needs at least one @app class.")
        bound = self.done.tools
        owners: dict[str, str] = {}
        shared: dict[str, Any] = {}
        app_ids: set[str] = set()
        for app_cls in apps:
            options = app_options(app_cls) if isinstance(app_cls, type) else None
            if options is None:
                raise ConfigurationError(
                    f"{app_cls!r} is not an app: decorate the class with @app(id=..., tools=[...])."
                )
            if options.id in app_ids:
                raise ConfigurationError(f"Two apps have the id {options.id!r}; app ids must be unique in a server.")
            app_ids.add(options.id)
            where = f"app {options.id!r} ({app_cls.__qualname__})"
            app_plugins = [self._adopt(p, where) for p in options.plugins]
            tool_classes = list(options.tools)
            for plugin in app_plugins:
                tool_classes.extend(plugin.tools())
            specs = [self._spec(cls, options.id, where) for cls in tool_classes]
            for spec in specs:
                _claim(owners, spec, f"{spec.cls.__qualname__} in {where}")
            names = tuple(s.name for s in specs)
            setup = PluginSetup(self.name, options.id, options.name, names, self.clock, shared, self.turn_timeout)
            for plugin in app_plugins:
                _setup(plugin, setup, where)
            for spec in specs:
                bound[spec.name] = BoundTool.bind(spec, [*server_plugins, *app_plugins])
            wrapping = (*server_plugins, *app_plugins)
            resources = (*options.resources, *(cls for plugin in app_plugins for cls in plugin.resources()))
            prompts = (*options.prompts, *(cls for plugin in app_plugins for cls in plugin.prompts()))
            self.done.features.append(AppFeatures(options.id, where, resources, prompts, wrapping))
        where = "Server(plugins=...)"
        contributed = [self._spec(cls, "", where) for plugin in server_plugins for cls in plugin.tools()]
        for spec in contributed:
            _claim(owners, spec, f"{spec.cls.__qualname__} from {where}")
            bound[spec.name] = BoundTool.bind(spec, server_plugins)
        everything = PluginSetup(self.name, "", self.name, tuple(bound), self.clock, shared, self.turn_timeout)
        for plugin in server_plugins:
            _setup(plugin, everything, where)
        resources = tuple(cls for plugin in server_plugins for cls in plugin.resources())
        prompts = tuple(cls for plugin in server_plugins for cls in plugin.prompts())
        if resources or prompts:
            self.done.features.append(AppFeatures("", where, resources, prompts, tuple(server_plugins)))
        return self.done

    @staticmethod
    def _spec(target: Any, app_id: str, where: str) -> ToolSpec:
        options = tool_options(target) if isinstance(target, type) or inspect.isfunction(target) else None
        if options is None:
            raise ConfigurationError(
                f"{target!r} in {where} is not a tool: decorate it with @tool(name=..., description=...)."
            )
        return build_tool_spec(target, options, app_id)


def checked_clock(clock: Clock | None) -> Clock:
    """The server's clock: the one given, checked, or the system's."""
    if clock is None:
        return SystemClock()
    missing = [name for name in ("now", "monotonic") if not callable(getattr(clock, name, None))]
    if missing:
        raise ConfigurationError(
            f"clock={clock!r} has no {' and no '.join(f'{name}()' for name in missing)}: a clock needs now() (wall "
            "time, seconds since the epoch) and monotonic() (seconds that never go back, for durations); use "
            "mcpkit.SystemClock() or mcpkit.ManualClock()."
        )
    return clock


def _check_order(authenticators: Sequence[Authenticator]) -> None:
    """Refuse an authenticator that sends tokens to a provider before StaticKeys: the keys would leave the server."""
    for position, authenticator in enumerate(authenticators):
        if getattr(authenticator, "sends_tokens_away", False) and any(
            isinstance(later, StaticKeys) for later in authenticators[position + 1 :]
        ):
            raise ConfigurationError(
                f"auth=[...] tries {type(authenticator).__name__} before StaticKeys, so every static key would be "
                "sent to the identity provider (and refused while it is down): put StaticKeys first."
            )


def checked_authenticators(auth: Authenticator | Sequence[Authenticator] | None) -> tuple[Authenticator, ...]:
    """``auth=`` as a tuple of authenticators, checked (each has ``authenticate``; StaticKeys before providers)."""
    if auth is None:
        return ()
    candidates = tuple(auth) if isinstance(auth, Sequence) else (auth,)
    for candidate in candidates:
        if not callable(getattr(candidate, "authenticate", None)):
            raise ConfigurationError(
                f"auth={candidate!r} is not an authenticator: use StaticKeys({{...}}), JWTAuth(...) "
                "or an object with `async def authenticate(token)`."
            )
    _check_order(candidates)
    return candidates


def _claim(owners: dict[str, str], spec: ToolSpec, label: str) -> None:
    """Record who owns a tool name; a second owner is a configuration error naming both."""
    if spec.name in owners:
        raise ConfigurationError(
            f"Two tools are named {spec.name!r}: {owners[spec.name]} and {label}. Tool names must be unique."
        )
    owners[spec.name] = label


def _setup(plugin: Plugin, setup: PluginSetup, where: str) -> None:
    try:
        plugin.setup(setup)
    except ConfigurationError as exc:
        raise ConfigurationError(f"Plugin {plugin.plugin_name} in {where}: {exc}") from exc
    except Exception as exc:
        raise ConfigurationError(f"Plugin {plugin.plugin_name} in {where} refused the configuration: {exc}") from exc


def shared_limits(url: object, server_name: str) -> SharedRateLimiter | None:
    """The rate limits shared among instances through Redis at ``url`` (``rate_limit_store``), or None."""
    checked = checked_rate_limit_store(url)
    return None if checked is None else SharedRateLimiter(checked, server_name)
