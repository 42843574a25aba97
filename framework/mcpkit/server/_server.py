"""``Server``: collects apps, validates them, and serves them over HTTP or stdio on the MCP SDK."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import uuid
import warnings
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Literal

import anyio
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPDeprecationWarning
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import TracerProvider
from starlette.applications import Starlette

from ..auth import RequiredScopes, adopt, issuers_of, resource_metadata
from ..base import (
    Authenticator,
    Clock,
    ConfigurationError,
    LocalConnection,
    StartupError,
    checked_flag,
    checked_icons,
    checked_seconds,
    local_connection,
)
from ..core import DEFAULT_TURN_TIMEOUT, Plugin, caller_of
from ..elicitation import DEFAULT_QUESTION_TIMEOUT, request_state_boundary
from ..http import DEFAULT_CALLS_PER_CALLER, DEFAULT_RETRY_MS, HttpOptions, Serving, build_http_app, held_while_running
from ..subscriptions import (
    Kind,
    ListChangingServer,
    Services,
    SubscriptionLimits,
    Subscriptions,
    Switchable,
    switch,
)
from ..tasks import DEFAULT_LEASE, DEFAULT_LIMIT, DEFAULT_MAX_BYTES, DEFAULT_TTL, Tasks
from ..telemetry import AuditSink, Telemetry, install_server_spans
from ..tools import Dispatcher, ToolSpec, ToolThreads, parse_rate_limit
from ._assembly import assemble, checked_authenticators, checked_clock, local_identity, shared_limits
from ._catalog import catalog
from ._middleware import Middleware, sdk_middleware
from ._mount import Mount, MountParts
from ._views import checked_views

__all__ = ["Server"]

logger = logging.getLogger("mcpkit")


class Server:
    """Hosts apps over MCP, checking everything when it is built, so that a mistake fails before anything is served.

    Each argument is described with its feature: ``auth``, ``allow_anonymous`` and ``resource_url`` in
    docs/authorization.md, ``rate_limit`` in docs/deployment.md, ``middleware`` in docs/middleware.md, ``state_secrets``
    in docs/elicitation.md, ``task_*`` in docs/tasks.md, ``question_timeout`` and ``turn_timeout`` in
    docs/reliability.md, ``telemetry``, ``tracer_provider``, ``meter_provider``, ``telemetry_*``, ``audit`` and
    ``prometheus`` in docs/observability.md.
    """

    def __init__(
        self,
        apps: Sequence[type[Any] | Mount],
        *,
        auth: Authenticator | Sequence[Authenticator] | None = None,
        allow_anonymous: bool = False,
        name: str = "mcpkit-server",
        version: str = "0.1.0",
        instructions: str | None = None,
        plugins: Sequence[Plugin] = (),
        clock: Clock | None = None,
        resource_url: str | None = None,
        authorization_servers: Sequence[str] | None = None,
        resource_documentation: str | None = None,
        list_permitted_tools_only: bool = False,
        rate_limit: str | None = None,
        rate_limit_store: str | None = None,
        state_secrets: Sequence[str | bytes] | None = None,
        middleware: Sequence[Middleware] = (),
        title: str | None = None,
        website_url: str | None = None,
        icons: Sequence[Any] = (),
        task_ttl: float | None = DEFAULT_TTL,
        task_limit: int | None = DEFAULT_LIMIT,
        task_lease: float = DEFAULT_LEASE,
        task_max_bytes: int | None = DEFAULT_MAX_BYTES,
        subscription_limits: SubscriptionLimits | None = None,
        question_timeout: float = DEFAULT_QUESTION_TIMEOUT,
        turn_timeout: float = DEFAULT_TURN_TIMEOUT,
        telemetry: str = "native",
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        telemetry_resource_uris: bool = False,
        telemetry_callers: bool = False,
        telemetry_key_labels: bool = False,
        audit: AuditSink | None = None,
        prometheus: bool = False,
    ) -> None:
        self.name = name
        #: What the server records (``telemetry``, docs/observability.md): checked first, it fails before the rest.
        self.telemetry = Telemetry(
            telemetry,
            tracer_provider=tracer_provider,
            meter_provider=meter_provider,
            resource_uris=telemetry_resource_uris,
            callers=telemetry_callers,
            key_labels=telemetry_key_labels,
            audit=audit,
            prometheus=prometheus,
        )
        self.version = version
        self.clock: Clock = checked_clock(clock)
        self.allow_anonymous = allow_anonymous
        authenticators = checked_authenticators(auth)
        issuers = issuers_of(authenticators)
        #: The Protected Resource Metadata served with the HTTP app (None without ``resource_url``).
        self.resource_metadata = resource_metadata(resource_url, authorization_servers, resource_documentation, issuers)
        resource = None if self.resource_metadata is None else self.resource_metadata.resource
        #: As the server uses them: bound to this server's audience, each issuer after the first in a namespace.
        self.authenticators: tuple[Authenticator, ...] = adopt(authenticators, resource)
        self._configured_authenticators = authenticators
        assembled = assemble(apps, plugins, name, lambda: self.clock, turn_timeout, self.telemetry)
        self._parts = MountParts(tuple(apps), tuple(plugins), rate_limit, tuple(middleware), f"server {name!r}")
        self._plugins: list[Plugin] = assembled.plugins
        bound = assembled.tools
        self.tools: dict[str, ToolSpec] = {name: b.spec for name, b in bound.items()}
        if subscription_limits is not None and not isinstance(subscription_limits, SubscriptionLimits):
            raise ConfigurationError(f"subscription_limits is a SubscriptionLimits, not {subscription_limits!r:.60}.")
        services = self._services = Services(
            subscriptions=Subscriptions(subscription_limits),
            question_timeout=checked_seconds("question_timeout", question_timeout),
        )
        #: The apps' resources and prompts, served beside the tools.
        self.catalog = catalog(assembled.features, lambda: self.clock, caller_of, services)
        services.subscriptions.known = self.catalog.resources.serves
        advertised = checked_views(self.tools.values(), self.catalog.resources.views())
        if self.resource_metadata is not None:  # the scopes clients may ask for: every tool's, prompt's, resource's
            scopes = sorted(self.required_scopes().every)
            self.resource_metadata = dataclasses.replace(self.resource_metadata, scopes_supported=tuple(scopes))
        self._dispatcher = Dispatcher(
            bound,
            lambda: self.clock,
            list_permitted_only=checked_flag("list_permitted_tools_only", list_permitted_tools_only),
            rate_limit=parse_rate_limit("Server", rate_limit),
            shared_limits=shared_limits(rate_limit_store, name),
            services=services,
            threads=ToolThreads(turn_timeout),
        )
        # The tasks extension, served when a tool may run as a task (None: no tool may).
        self._tasks: Tasks | None = None
        if any(spec.task is not None for spec in self.tools.values()):
            self._tasks = Tasks(
                self._dispatcher,
                lambda: self.clock,
                ttl=task_ttl,
                limit=task_limit,
                lease=task_lease,
                max_bytes=task_max_bytes,
                telemetry=self.telemetry,
            )
            self._dispatcher.tasks = self._tasks
        with warnings.catch_warnings():
            # logging/setLevel is gone in 2026-07-28 and the SDK says so; mcpkit serves 2025-11-25 sessions too.
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            self._sdk = ListChangingServer(
                name,
                version=version,
                title=title,
                website_url=website_url,
                icons=checked_icons("Server", icons),
                instructions=instructions,
                get_tool_input_schema=self._dispatcher.input_schema,
                on_list_tools=self._dispatcher.list_tools,
                on_call_tool=self._dispatcher.call_tool,
                on_set_logging_level=services.log_levels.set_level,
                on_subscriptions_listen=services.subscriptions.listen,
                **self.catalog.handlers(services.subscriptions),
            )
        if self._tasks is not None:
            for method, params, handler in self._tasks.methods():
                self._sdk.add_request_handler(method, params, handler)
            self._sdk.extensions.update(self._tasks.advertised())
        self._sdk.extensions.update(advertised)  # MCP Apps, when a tool or resource has a view
        install_server_spans(
            self.telemetry, self._sdk.middleware
        )  # the server span first, in the SDK's own span's place
        self._sdk.middleware.append(held_while_running)  # an admitted request's work holds its caller's slot too
        # 2026-07-28 multi-round calls: the SDK seals the requestState mcpkit writes, and checks it on return.
        self._sdk.middleware.append(request_state_boundary(state_secrets, name))
        self._sdk.middleware.extend(sdk_middleware(middleware, caller_of))  # around every method, outermost first

    def __repr__(self) -> str:
        return f"Server(name={self.name!r}, tools={sorted(self.tools)!r})"

    def mount_parts(self) -> MountParts:
        """What ``mount(server, prefix=...)`` takes from this server into another: its apps, plugins and rate limit."""
        return self._parts

    # -- serving ------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Start every plugin (in order) and stop them (in reverse) around serving."""
        async with contextlib.AsyncExitStack() as stack:
            for plugin in self._plugins:
                try:
                    await plugin.startup()
                except ConfigurationError as exc:
                    raise ConfigurationError(f"Plugin {plugin.plugin_name} failed to start: {exc}") from exc
                except Exception as exc:
                    raise StartupError(f"Plugin {plugin.plugin_name} failed to start: {exc}") from exc
                stack.push_async_callback(plugin.shutdown)
            if self._tasks is not None:
                self._keep_tasks(self._tasks)
                stack.push_async_callback(self._tasks.close)  # before the plugins stop: runs record their end
            stack.push_async_callback(self._dispatcher.close)
            stack.callback(self._services.subscriptions.close)  # end the listen streams, or shutdown waits
            yield

    def _keep_tasks(self, tasks: Tasks) -> None:
        """Keep tasks in the first plugin's task store (the remember plugin's), else in this process's memory."""
        for plugin in self._plugins:
            store = plugin.task_store()
            if store is not None:
                try:
                    tasks.use(store)  # type: ignore[arg-type]  # checked by use()
                except ConfigurationError as exc:
                    raise ConfigurationError(f"Plugin {plugin.plugin_name}: {exc}") from None
                return

    def http_app(
        self,
        *,
        host: str = "127.0.0.1",
        allowed_hosts: Sequence[str] | None = None,
        allowed_origins: Sequence[str] | None = None,
        json_response: bool = True,
        max_body_bytes: int | None = None,
        max_sessions: int = 10_000,
        sessions_per_caller: int = 64,
        session_idle_timeout: float = 1800.0,
        resumable_streams: bool | None = None,
        stream_retry_ms: int = DEFAULT_RETRY_MS,
        calls_per_caller: int = DEFAULT_CALLS_PER_CALLER,
    ) -> Starlette:
        """A new Starlette app serving MCP at ``/mcp``, whose lifespan starts and stops the plugins; the options bound
        what callers may send and hold, and how answers stream (docs/deployment.md, docs/progress-and-logging.md)."""
        return self._http_app(HttpOptions.among(locals()))

    def _http_app(self, options: HttpOptions) -> Starlette:
        serving = Serving(
            name=self.name,
            authenticators=self.authenticators,
            allow_anonymous=self.allow_anonymous,
            plugins=self._plugins,
            clock=lambda: self.clock,
            metadata=self.resource_metadata,
            required_scopes=self.required_scopes(),
            running=self.running,
            session_ended=self._session_ended,
            refused=self.telemetry.refused,
            authenticators_at=lambda other: adopt(self._configured_authenticators, other),
            metrics=None if self.telemetry.scrape is None else self.telemetry.scrape.render,
        )
        return build_http_app(serving, self._sdk, options)

    def _session_ended(self, session: str) -> None:
        self._services.subscriptions.session_ended(session)
        self.telemetry.session_ended(session)

    async def serve_stdio(self, user: str | None = None) -> None:
        """Serve one connection over stdin/stdout; ``user`` signs the local person in as ``local:<user>``."""
        token = local_connection.set(LocalConnection(local_identity(user), uuid.uuid4().hex))
        try:
            async with self.running(), stdio_server() as (read, write):
                await self._sdk.run(read, write, self._sdk.create_initialization_options())
        finally:
            local_connection.reset(token)

    def run(
        self,
        transport: Literal["http", "stdio"] = "http",
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        user: str | None = None,
        log_level: str = "info",
        allowed_hosts: Sequence[str] | None = None,
        allowed_origins: Sequence[str] | None = None,
        max_body_bytes: int | None = None,
        max_sessions: int = 10_000,
        sessions_per_caller: int = 64,
        session_idle_timeout: float = 1800.0,
        max_connections: int | None = None,
        read_timeout: float = 10.0,
        keep_alive_timeout: float = 5.0,
        write_timeout: float = 30.0,
        json_response: bool = True,
        resumable_streams: bool | None = None,
        stream_retry_ms: int = DEFAULT_RETRY_MS,
        calls_per_caller: int = DEFAULT_CALLS_PER_CALLER,
        on_ready: Callable[[str], object] | None = None,
        fd: int | None = None,
    ) -> None:
        """Serve until interrupted, over stdio or streamable HTTP on ``host:port`` (loopback by default): the socket
        bound first, then the plugins started, then ``on_ready(url)``; ``http_app``'s options apply, and four of
        the connections' own (docs/deployment.md)."""
        if transport == "stdio":
            anyio.run(self.serve_stdio, user)
            return
        if transport != "http":
            raise ValueError(f"transport must be 'http' or 'stdio', not {transport!r}")
        if user is not None:
            raise ConfigurationError("user= signs in the stdio caller; over HTTP callers sign in with tokens.")
        # uvicorn's server and h11 protocol take ~25 ms to import: only a server that serves HTTP pays for them.
        from ..http import ConnectionLimits, listening_socket, serve_http

        limits = ConnectionLimits(max_connections, read_timeout, keep_alive_timeout, log_level, write_timeout)
        app = self._http_app(HttpOptions.among(locals()))
        sock = listening_socket(host, port, fd)
        serve_http(app, sock, limits=limits, on_ready=on_ready or self._say_serving)

    async def enable(
        self, *, tools: Sequence[str] = (), prompts: Sequence[str] = (), resources: Sequence[str] = ()
    ) -> None:
        """List declared tools, prompts and resources (by name) again, and tell the clients their lists changed."""
        await self._switch(True, tools, prompts, resources)

    async def disable(
        self, *, tools: Sequence[str] = (), prompts: Sequence[str] = (), resources: Sequence[str] = ()
    ) -> None:
        """Take declared tools, prompts and resources (by name) out of the lists, and refuse calls to them as if
        they did not exist, until ``enable``; clients are told their lists changed (docs/tools.md)."""
        await self._switch(False, tools, prompts, resources)

    def enabled(self, kind: Kind) -> tuple[str, ...]:
        """The names of the ``"tools"``, ``"prompts"`` or ``"resources"`` that are enabled now, as declared."""
        holders = self._holders()
        if kind not in holders:
            raise ConfigurationError(f"enabled() takes 'tools', 'prompts' or 'resources', not {kind!r:.40}.")
        return holders[kind].enabled_names()

    def _holders(self) -> dict[Kind, Switchable]:
        return {"tools": self._dispatcher, "prompts": self.catalog.prompts, "resources": self.catalog.resources}

    async def _switch(
        self, enabled: bool, tools: Sequence[str], prompts: Sequence[str], resources: Sequence[str]
    ) -> None:
        asked: dict[Kind, Sequence[str]] = {"tools": tools, "prompts": prompts, "resources": resources}
        changed = switch(self._holders(), asked, enabled, self.name)
        await self._services.list_changes.changed(changed)

    def required_scopes(self) -> RequiredScopes:
        """The OAuth scopes each tool, prompt and resource needs, as the HTTP gate checks them."""
        tools = {name: spec.scopes for name, spec in self.tools.items() if spec.scopes}
        resources, prompts = self.catalog.resources, self.catalog.prompts
        every = frozenset().union(*tools.values(), resources.every_scope(), prompts.every_scope())
        return RequiredScopes(tools, prompts.scopes_for, resources.scopes_for, every)

    def _say_serving(self, url: str) -> None:
        print(f"Serving {self.name} at {url} (Ctrl+C stops it)", flush=True)
