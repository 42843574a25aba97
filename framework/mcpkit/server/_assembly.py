"""Building a ``Server`` from its app classes and mounts: each tool bound to the plugins that wrap it (a mounted
server's too), each app's resources and prompts, the plugins set up; and the checks of ``Server``'s own arguments.
Every failure is a ``ConfigurationError`` naming the class or argument, raised while the server is built."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..auth import StaticKeys
from ..base import Authenticator, Clock, ConfigurationError, Identity, SystemClock, checked_seconds
from ..core import DEFAULT_TURN_TIMEOUT, Plugin, PluginSetup, app_options, check_hooks, tool_options
from ..telemetry import Telemetry
from ..tools import (
    BoundTool,
    RateLimit,
    SharedRateLimiter,
    ToolSpec,
    build_tool_spec,
    checked_rate_limit_store,
    parse_rate_limit,
)
from ._catalog import AppFeatures
from ._mount import Mount, checked_prefix

__all__ = [
    "Assembled",
    "assemble",
    "checked_authenticators",
    "checked_clock",
    "local_identity",
    "shared_limits",
]

_LOCAL_USER = re.compile(r"^[A-Za-z0-9_.@\-]{1,64}$")


@dataclass
class Assembled:
    """What a server is built from: its tools (bound to their plugins), each app's other features, and the plugin
    instances it works on (copies of the templates given to ``@app`` and ``Server``, in order)."""

    tools: dict[str, BoundTool] = field(default_factory=dict)
    features: list[AppFeatures] = field(default_factory=list)
    plugins: list[Plugin] = field(default_factory=list)


def assemble(
    apps: Sequence[Any],
    plugins: Sequence[Plugin],
    server_name: str,
    clock: Callable[[], Clock],
    turn_timeout: float = DEFAULT_TURN_TIMEOUT,
    telemetry: Telemetry | None = None,
) -> Assembled:
    """Collect and check ``apps`` and the server's ``plugins`` (``clock``: the server's, read when a plugin asks;
    ``turn_timeout`` and ``telemetry``: what each plugin learns in its setup)."""
    assembly = _Assembly(server_name, clock, checked_seconds("turn_timeout", turn_timeout), telemetry)
    return assembly.collect(apps, plugins)


@dataclass(frozen=True, slots=True)
class _Place:
    """Where a server's apps are assembled: inside which mounts (their prefixes, outermost first), wrapped by which
    plugins of the servers around them, under which of their rate limits."""

    prefixes: tuple[str, ...] = ()
    outer: tuple[Plugin, ...] = ()
    limits: tuple[tuple[str, RateLimit], ...] = ()

    @property
    def prefix(self) -> str:
        """What goes in front of each name clients call: ``a_b_`` inside ``a``, then ``b``."""
        return "".join(prefix + "_" for prefix in self.prefixes)

    @property
    def label(self) -> str:
        return f" mounted as {'_'.join(self.prefixes)!r}" if self.prefixes else ""


class _Assembly:
    def __init__(
        self, server_name: str, clock: Callable[[], Clock], turn_timeout: float, telemetry: Telemetry | None
    ) -> None:
        self.name = server_name
        self.clock = clock
        self.turn_timeout = turn_timeout
        self.telemetry = telemetry
        self.done = Assembled()
        self.owners: dict[str, str] = {}  # tool name -> who declared it
        self.shared: dict[str, Any] = {}  # one per server, mounted apps included
        self.app_ids: set[str] = set()

    def _adopt(self, plugin: Plugin, where: str) -> Plugin:
        if not isinstance(plugin, Plugin):
            raise ConfigurationError(f"{where}: {plugin!r} is not a mcpkit.Plugin instance.")
        check_hooks(type(plugin), where)
        own = copy.copy(plugin)
        self.done.plugins.append(own)
        return own

    def collect(self, apps: Sequence[Any], plugins: Sequence[Plugin]) -> Assembled:
        if not apps:
            raise ConfigurationError("Server(apps=[...]) needs at least one @app class.")
        self._server(apps, plugins, _Place(), "Server(plugins=...)")
        return self.done

    def _server(self, apps: Sequence[Any], plugins: Sequence[Plugin], place: _Place, where: str) -> list[str]:
        """Assemble one server's apps and plugins (the host's, or a mounted one's) at ``place``; its tools' names."""
        server_plugins = [self._adopt(plugin, where) for plugin in plugins]
        inside = _Place(place.prefixes, (*place.outer, *server_plugins), place.limits)
        names: list[str] = []
        for entry in apps:
            names += self._mount(entry, inside) if isinstance(entry, Mount) else self._app(entry, inside)
        for spec in [self._spec(cls, "", where, place.prefix) for plugin in server_plugins for cls in plugin.tools()]:
            _claim(self.owners, spec, f"{spec.cls.__qualname__} from {where}")
            self._bind(spec, inside)
            names.append(spec.name)
        everything = PluginSetup(
            self.name, "", self.name, tuple(names), self.clock, self.shared, self.turn_timeout, self.telemetry
        )
        for plugin in server_plugins:
            _setup(plugin, everything, where)
        resources = tuple(cls for plugin in server_plugins for cls in plugin.resources())
        prompts = tuple(cls for plugin in server_plugins for cls in plugin.prompts())
        if resources or prompts:
            self.done.features.append(AppFeatures("", where, resources, prompts, inside.outer, place.prefix))
        return names

    def _app(self, app_cls: Any, place: _Place) -> list[str]:
        options = app_options(app_cls) if isinstance(app_cls, type) else None
        if options is None:
            raise ConfigurationError(
                f"{app_cls!r} is not an app: decorate the class with @app(id=..., tools=[...]), or mount(...) it."
            )
        if place.prefix + options.id in self.app_ids:
            raise ConfigurationError(
                f"Two apps have the id {options.id!r}{place.label}; app ids must be unique in a server."
            )
        self.app_ids.add(place.prefix + options.id)
        where = f"app {options.id!r} ({app_cls.__qualname__}){place.label}"
        app_plugins = [self._adopt(p, where) for p in options.plugins]
        tool_classes = list(options.tools)
        for plugin in app_plugins:
            tool_classes.extend(plugin.tools())
        specs = [self._spec(cls, options.id, where, place.prefix) for cls in tool_classes]
        for spec in specs:
            _claim(self.owners, spec, f"{spec.cls.__qualname__} in {where}")
        names = [s.name for s in specs]
        setup = PluginSetup(
            self.name,
            options.id,
            options.name,
            tuple(names),
            self.clock,
            self.shared,
            self.turn_timeout,
            self.telemetry,
        )
        for plugin in app_plugins:
            _setup(plugin, setup, where)
        around = _Place(place.prefixes, (*place.outer, *app_plugins), place.limits)
        for spec in specs:
            self._bind(spec, around)
        resources = (*options.resources, *(cls for plugin in app_plugins for cls in plugin.resources()))
        prompts = (*options.prompts, *(cls for plugin in app_plugins for cls in plugin.prompts()))
        self.done.features.append(AppFeatures(options.id, where, resources, prompts, around.outer, place.prefix))
        return names

    def _mount(self, found: Mount, place: _Place) -> list[str]:
        """A mounted app or server, assembled inside ``place`` under its prefix (and its server's rate limit)."""
        prefix = checked_prefix(found)
        prefixes = (*place.prefixes, prefix)
        limit = parse_rate_limit(repr(found), found.parts.rate_limit)
        limits = place.limits if limit is None else (*place.limits, ("_".join(prefixes), limit))
        where = f"{found.parts.label} (plugins=...) mounted as {'_'.join(prefixes)!r}"
        return self._server(found.parts.apps, found.parts.plugins, _Place(prefixes, place.outer, limits), where)

    def _bind(self, spec: ToolSpec, place: _Place) -> None:
        if place.limits:
            spec = dataclasses.replace(spec, mount_limits=place.limits)
        self.done.tools[spec.name] = BoundTool.bind(spec, place.outer)

    @staticmethod
    def _spec(target: Any, app_id: str, where: str, prefix: str) -> ToolSpec:
        options = tool_options(target) if isinstance(target, type) or inspect.isfunction(target) else None
        if options is None:
            raise ConfigurationError(
                f"{target!r} in {where} is not a tool: decorate it with @tool(name=..., description=...)."
            )
        return build_tool_spec(target, options, app_id, prefix)


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


def local_identity(user: str | None) -> Identity | None:
    """The stdio caller ``serve_stdio(user=...)`` signs in as ``local:<user>``, checked; None for anonymous."""
    if user is None:
        return None
    if not _LOCAL_USER.match(user):
        raise ConfigurationError(f"stdio user {user!r} is not valid: use 1-64 letters, digits, '_', '-', '.' or '@'.")
    return Identity(user_id=f"local:{user}", kind="local", label=user)
