"""Serving over streamable HTTP: the Starlette app and its layers (host and body checks, the protocol-error
mask, per-caller sessions and requests in progress, lazy SSE answers, resumable streams), and uvicorn with
connection limits."""

from ._admission import DEFAULT_CALLS_PER_CALLER, held_while_running
from ._connections import ACCEPT_BACKLOG, ConnectionLimits
from ._http_app import DEFAULT_RETRY_MS, HttpOptions, Serving, build_http_app
from ._lone_surrogates import LONE_SURROGATES_SCOPE_KEY, lone_surrogate_problems
from ._serving import listening_socket, serve_http, url_of

__all__ = [
    "ACCEPT_BACKLOG",
    "DEFAULT_CALLS_PER_CALLER",
    "DEFAULT_RETRY_MS",
    "LONE_SURROGATES_SCOPE_KEY",
    "ConnectionLimits",
    "HttpOptions",
    "Serving",
    "build_http_app",
    "held_while_running",
    "listening_socket",
    "lone_surrogate_problems",
    "serve_http",
    "url_of",
]
