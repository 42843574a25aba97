"""``Server.http_app()``: the SDK's streamable HTTP app with mcpkit's layers in front and its lifespan around.

In front of the SDK's routes, outermost first: the Host and Origin headers in lower case (names compare as in DNS),
the auth gate (who is calling; 401/403), admission (each caller's requests in progress; 429), the per-caller session
limits, the mask that makes the SDK's refusals clear JSON, and, with ``json_response=True``, the router that sends
2026-07-28 requests asking for notifications to a session manager whose answers may become SSE. The served routes
are the SDK's, with mcpkit's session manager (``_session_manager``: lazy SSE for 2025-11-25 sessions, and each
session's own events when streams are resumable). The lifespan starts the plugins, then the session managers.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, fields
from typing import Any

from mcp.server import Server as SDKServer
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..auth import AuthGate, RequiredScopes, ResourceMetadata
from ..base import Authenticator, Clock, ConfigurationError, checked_optional_flag, checked_whole
from ..core import Plugin
from ._admission import DEFAULT_CALLS_PER_CALLER, CallAdmission, checked_calls
from ._body_limit import body_limit
from ._event_log import EventLog
from ._host_check import LowerCaseHosts, host_check
from ._notification_streams import StreamWhenAsked
from ._protocol_errors import ProtocolErrorMask
from ._session_manager import SessionManager
from ._sessions import SessionGuard, SessionLimits

__all__ = ["DEFAULT_RETRY_MS", "HttpOptions", "Serving", "build_http_app"]

#: How long a client whose SSE stream closed waits before it reconnects (the ``retry`` field), by default.
DEFAULT_RETRY_MS = 1000


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpOptions:
    """How the HTTP app serves: the keyword arguments ``Server.http_app`` and ``Server.run`` both take, with their
    defaults (``Server.http_app``'s docstring says what each does); a test keeps the three the same."""

    host: str = "127.0.0.1"
    allowed_hosts: Sequence[str] | None = None
    allowed_origins: Sequence[str] | None = None
    json_response: bool = True
    max_body_bytes: int | None = None
    max_sessions: int = 10_000
    sessions_per_caller: int = 64
    session_idle_timeout: float = 1800.0
    resumable_streams: bool | None = None
    stream_retry_ms: int = DEFAULT_RETRY_MS
    calls_per_caller: int = DEFAULT_CALLS_PER_CALLER

    @classmethod
    def among(cls, arguments: Mapping[str, Any]) -> HttpOptions:
        """The options among a method's ``arguments`` (its ``locals()``), which take them as keywords."""
        return cls(**{option.name: arguments[option.name] for option in fields(cls)})


@dataclass(frozen=True, slots=True)
class Serving:
    """What the HTTP app needs of the server it serves (``Server`` gives it; this layer does not know ``Server``)."""

    name: str
    authenticators: Sequence[Authenticator]
    allow_anonymous: bool
    plugins: Sequence[Plugin]
    clock: Callable[[], Clock]
    metadata: ResourceMetadata | None
    required_scopes: RequiredScopes
    running: Callable[[], AbstractAsyncContextManager[None]]  # the plugins started for as long as it serves
    session_ended: Callable[[str], None] = lambda session: None  # a 2025-11-25 session ended: forget its state
    #: The authenticators as bound to another name of the resource (``metadata``), for a client that uses it.
    authenticators_at: Callable[[str], Sequence[Authenticator]] | None = None
    #: A request was refused before any handler saw it: its reason (``TOO_MANY_CALLS``) and method, for telemetry.
    refused: Callable[[str, str | None], None] = lambda reason, method: None
    #: What ``GET /metrics`` serves (the body and its content type), or None: no such route.
    metrics: Callable[[], tuple[bytes, str]] | None = None


def build_http_app(server: Serving, sdk: SDKServer, options: HttpOptions) -> Starlette:
    """The app ``Server.http_app`` returns (its docstring says what each option does)."""
    json_response, max_sessions, idle = options.json_response, options.max_sessions, options.session_idle_timeout
    if not server.authenticators and not server.allow_anonymous:
        raise ConfigurationError(
            f"Server {server.name!r} has no auth and allow_anonymous=False, so every HTTP request would get 401: "
            "pass auth=StaticKeys({...}) or JWTAuth(...), or allow_anonymous=True."
        )
    security = host_check(options.host, options.allowed_hosts, options.allowed_origins)
    both = bool(server.authenticators) and server.allow_anonymous  # anonymous callers get half the table
    sessions = SessionLimits(max_sessions, options.sessions_per_caller, idle, signed_in_too=both)
    limit = body_limit(options.max_body_bytes, server.plugins)
    per_caller = checked_calls(options.calls_per_caller)
    resumable = _resumable(options.resumable_streams, json_response, options.stream_retry_ms)
    if not SessionManager.supported():
        raise ConfigurationError(
            "mcpkit's HTTP serving needs the mcp SDK's session manager and 2025-11-25 transport as mcpkit knows them "
            "(mcp 2.3); this SDK differs: install a version mcpkit supports (pip install 'mcp>=2.3,<3')."
        )
    # 2025-11-25 sessions: answers in JSON until a call sends something else (lazy SSE), or always SSE; with
    # resumable streams, each session's events its own (_session_manager). 2026-07-28 requests: the SDK's own.
    manager = SessionManager(
        app=sdk,
        lazy=json_response,
        log=EventLog() if resumable else None,
        retry_interval=options.stream_retry_ms if resumable else None,
        json_response=json_response,
        security_settings=security,
        max_request_body_size=limit,
        session_idle_timeout=idle,
        max_sessions=max_sessions,
        ended=server.session_ended,
    )
    routes = [Route("/mcp", endpoint=StreamableHTTPASGIApp(manager))]
    if server.metrics is not None:  # behind the same gate as /mcp: a scraper signs in as any caller does
        routes.append(Route("/metrics", endpoint=_scrape(server.metrics), methods=["GET"]))
    sdk_app = Starlette(routes=routes, lifespan=lambda app: manager.run())
    # The SDK's app is the one served: in front of its routes go the gate, the per-caller session
    # limits (they need to know the caller) and the mask that makes the SDK's refusals clear JSON;
    # the lifespan starts the plugins around the SDK's own (its session manager).
    streaming: StreamableHTTPSessionManager | None = None
    if json_response:  # 2026-07-28 requests asking for progress or logs are answered with SSE
        streaming = StreamableHTTPSessionManager(
            app=sdk,
            json_response=False,
            security_settings=security,
            max_request_body_size=limit,
            max_sessions=max_sessions,
            session_idle_timeout=idle,
        )
        sdk_app.add_middleware(StreamWhenAsked, streaming=streaming, path="/mcp")
    sdk_app.add_middleware(ProtocolErrorMask, max_body_bytes=limit)
    sdk_app.add_middleware(SessionGuard, limits=sessions, clock=server.clock)
    sdk_app.add_middleware(
        CallAdmission,
        per_caller=per_caller,
        max_body_bytes=limit,
        monotonic=lambda: server.clock().monotonic(),
        refused=server.refused,
    )
    sdk_app.add_middleware(
        AuthGate,
        authenticators=server.authenticators,
        allow_anonymous=server.allow_anonymous,
        metadata=server.metadata,
        required_scopes=server.required_scopes,
        max_body_bytes=limit,
        allowed_hosts=security.allowed_hosts,
        authenticators_at=server.authenticators_at,
    )
    sdk_app.add_middleware(LowerCaseHosts)  # outermost: every check after it compares names as DNS does
    sdk_lifespan = sdk_app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with server.running(), sdk_lifespan(app):
            if streaming is None:
                yield
            else:
                async with streaming.run():
                    yield

    sdk_app.router.lifespan_context = lifespan
    return sdk_app


def _scrape(metrics: Callable[[], tuple[bytes, str]]) -> Callable[[Request], Awaitable[Response]]:
    async def scrape(request: Request) -> Response:
        body, media_type = metrics()
        return Response(body, media_type=media_type)

    return scrape


def _resumable(asked: bool | None, json_response: bool, retry_ms: object) -> bool:
    """Whether 2025-11-25 SSE streams are resumable: as asked, else whenever responses are SSE."""
    checked_optional_flag("resumable_streams", asked)
    checked_whole("stream_retry_ms", retry_ms, most=600_000, unit="milliseconds")
    resumable = not json_response if asked is None else asked
    return resumable
