"""Serving an HTTP app with uvicorn: the socket bound first, plugins started, and only then "serving".

``uvicorn.run()`` starts the app's lifespan (the plugins) before it binds, reports a taken port as a
log line after the app has started, and turns a lifespan failure into a logged traceback. Here the
socket is bound before anything else (a taken port is a ``ConfigurationError``), the app's lifespan
runs inside uvicorn's startup so a plugin that cannot start raises its own error, and ``on_ready``
is called once uvicorn accepts connections, with a URL a client can use (on loopback for a wildcard bind).
The proxies whose ``X-Forwarded-For`` is believed are read once (``FORWARDED_ALLOW_IPS``) and given to both
uvicorn (the ASGI scope's ``client``) and the connection guard (its per-client fair share).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import socket
from collections.abc import Callable
from typing import Any

import uvicorn
from starlette.applications import Starlette

from ..base import ConfigurationError, ForwardedClients, connect_host
from ._connections import ACCEPT_BACKLOG, MAX_HEADER_BYTES, ConnectionLimits, guarded_protocol

__all__ = ["listening_socket", "serve_http", "url_of"]

#: uvicorn's own logger: the lifespan lines read as they do when uvicorn runs the lifespan itself.
_log = logging.getLogger("uvicorn.error")


def serve_http(
    app: Starlette,
    sock: socket.socket,
    *,
    limits: ConnectionLimits,
    on_ready: Callable[[str], object],
) -> None:
    """Serve ``app`` on the bound ``sock`` until SIGINT or SIGTERM; ``on_ready(url)`` once it accepts."""
    forwarded = ForwardedClients.from_environment()
    try:
        protocol = guarded_protocol(limits, forwarded)
    except BaseException:
        sock.close()
        raise
    config = uvicorn.Config(
        app,
        log_level=limits.log_level,
        lifespan="off",  # run by _Uvicorn below, so its errors are raised rather than logged
        http=protocol,
        ws="none",
        backlog=ACCEPT_BACKLOG,
        timeout_keep_alive=limits.keep_alive_timeout,  # type: ignore[arg-type]  # a float works
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        forwarded_allow_ips=forwarded.trusted,
    )
    server = _Uvicorn(config, app, lambda: on_ready(url_of(sock)))
    try:
        with contextlib.suppress(KeyboardInterrupt):  # uvicorn re-raises the signal it stopped on
            server.run(sockets=[sock])
    finally:
        sock.close()


class _Uvicorn(uvicorn.Server):
    """uvicorn's server, entering the app's lifespan in its startup and leaving it after its shutdown."""

    def __init__(self, config: uvicorn.Config, app: Starlette, ready: Callable[[], object]) -> None:
        super().__init__(config)
        self._app = app
        self._ready = ready
        self._lifespan = contextlib.AsyncExitStack()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        _log.info("Waiting for application startup.")
        await self._lifespan.enter_async_context(self._app.router.lifespan_context(self._app))
        _log.info("Application startup complete.")
        await super().startup(sockets=sockets)
        if self.started:
            self._ready()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().shutdown(sockets=sockets)
        finally:
            _log.info("Waiting for application shutdown.")
            await self._lifespan.aclose()
            _log.info("Application shutdown complete.")


def listening_socket(host: str, port: int, fd: int | None = None) -> socket.socket:
    """A TCP socket bound to ``host:port`` (port 0: any free one), or the bound one a supervisor passed as ``fd``;
    a ConfigurationError saying why not."""
    if fd is not None:
        return _inherited_socket(fd)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ConfigurationError(f"port {port!r} is not a port number: use 1-65535 (or 0 for any free port).")
    try:
        family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    except (socket.gaierror, UnicodeError):
        raise ConfigurationError(
            f"Cannot listen on host {host!r}: it is not an address or name of this machine "
            "(use 127.0.0.1, 0.0.0.0 or one of its addresses)."
        ) from None
    # IPPROTO_TCP, as asyncio's own create_server uses: only then does asyncio set TCP_NODELAY on accepted
    # connections (without it every response waits ~40 ms for a delayed ACK).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise ConfigurationError(_bind_failure(host, port, exc)) from None
    return sock


def _inherited_socket(fd: int) -> socket.socket:
    """The listening TCP socket at file descriptor ``fd`` (``mcpkit run --reload`` binds once; each child inherits)."""
    try:
        sock = socket.socket(fileno=fd)
    except OSError as exc:
        raise ConfigurationError(
            f"File descriptor {fd} is not a socket of this process ({exc.strerror or exc}): pass a bound TCP socket."
        ) from None
    if sock.type != socket.SOCK_STREAM or sock.family not in (socket.AF_INET, socket.AF_INET6):
        sock.detach()
        raise ConfigurationError(f"File descriptor {fd} is not a TCP socket: pass a bound TCP socket.")
    return sock


def _bind_failure(host: str, port: int, exc: OSError) -> str:
    where = f"{host}:{port}"
    if exc.errno == errno.EADDRINUSE:
        return f"Port {port} on {host} is already in use by another program: stop it, or choose another port."
    if exc.errno == errno.EACCES:
        return f"Cannot listen on {where}: ports below 1024 need privileges; use a port from 1024 to 65535."
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"Cannot listen on {where}: {host} is not an address of this machine."
    return f"Cannot listen on {where}: {exc.strerror or exc}."


def url_of(sock: socket.socket) -> str:
    """The MCP URL a client connects to for a bound socket (with the port it really got; loopback for a wildcard)."""
    address: Any = sock.getsockname()
    host, port = connect_host(address[0]), address[1]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/mcp"
