"""Which ``Host`` and ``Origin`` headers a server answers: the DNS-rebinding check the specification requires, never
silently off, with names compared as DNS compares them (docs/architecture.md, "Serving limits")."""

from __future__ import annotations

from collections.abc import Sequence

import idna
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from ..base import ConfigurationError, is_loopback

__all__ = ["LowerCaseHosts", "host_check"]

#: What the SDK allows on loopback: any port of the three loopback names.
LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")


def host_check(
    host: str, allowed_hosts: Sequence[str] | None, allowed_origins: Sequence[str] | None
) -> TransportSecuritySettings:
    """The SDK's Host/Origin settings for a server listening on ``host``; always enabled.

    Without ``allowed_hosts`` a loopback server answers loopback names on any port; a server
    listening anywhere else is refused. Without ``allowed_origins`` the allowed origins are the
    allowed hosts over ``http`` and ``https`` (a page served from the server's own name). A
    request without an ``Origin`` header (a native client, not a browser) is not affected.
    """
    if allowed_hosts is None:
        if not is_loopback(host):
            raise ConfigurationError(
                f"The server would listen on {host!r} (beyond loopback) without checking the Host and Origin headers, "
                "so any web page could reach it through DNS rebinding: pass allowed_hosts=['mcp.example.com'] "
                "(the names clients use, 'name:*' for any port; --allowed-host on `mcpkit run`), and "
                "allowed_origins=['https://app.example.com'] for browser pages that call it."
            )
        own = f"[{host.strip('[]').lower()}]:*" if ":" in host else f"{_ascii(host, 'host')}:*"
        hosts = [*LOOPBACK_HOSTS, *([own] if own not in LOOPBACK_HOSTS else [])]
    else:
        hosts = [_checked_host(entry) for entry in _entries(allowed_hosts, "allowed_hosts")]
    if allowed_origins is None:
        origins = [f"{scheme}://{entry}" for entry in hosts for scheme in ("http", "https")]
    else:
        origins = [_checked_origin(entry) for entry in _entries(allowed_origins, "allowed_origins")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def _entries(values: Sequence[str], name: str) -> list[str]:
    if isinstance(values, str):
        raise ConfigurationError(f"{name} is a list of strings, not one string: write {name}=[{values!r}].")
    entries = list(values)
    if not entries:
        raise ConfigurationError(f"{name}=[] would refuse every request: list at least one entry, or leave it out.")
    return entries


def _checked_host(entry: object) -> str:
    if not isinstance(entry, str) or not entry or "/" in entry or any(c.isspace() for c in entry):
        raise ConfigurationError(
            f"allowed_hosts entry {entry!r} is not a host: write 'mcp.example.com', 'mcp.example.com:8443' or "
            "'mcp.example.com:*' (no scheme, no path)."
        )
    return _ascii(entry, "allowed_hosts entry")


def _checked_origin(entry: object) -> str:
    scheme, sep, rest = entry.partition("://") if isinstance(entry, str) else ("", "", "")
    if scheme not in ("http", "https") or not sep or not rest or "/" in rest or any(c.isspace() for c in rest):
        raise ConfigurationError(
            f"allowed_origins entry {entry!r} is not an origin: write 'https://app.example.com' (a scheme and a host, "
            "an optional ':port' or ':*', no path)."
        )
    return f"{scheme}://{_ascii(rest, 'allowed_origins entry')}"


def _ascii(host: str, what: str) -> str:
    """``host`` (with an optional ``:port`` or ``:*``) as clients send it: in lower case, and a name in Unicode
    in its IDNA form, as the official client (httpx) writes it."""
    if host.isascii():
        return host.lower()
    name, colon, port = host.rpartition(":")
    if not colon or not (port == "*" or port.isdigit()):
        name, colon, port = host, "", ""
    try:
        return idna.encode(name.lower()).decode("ascii") + colon + port
    except idna.IDNAError as exc:
        raise ConfigurationError(f"{what} {host!r} is not a host name ({exc}): write it as clients reach it.") from None


#: The request headers that name a host.
_HOST_HEADERS = (b"host", b"origin")


class LowerCaseHosts:
    """ASGI middleware: a request's ``Host`` and ``Origin`` in lower case, so that every check after it (the Host
    check, which name's metadata and audience apply) compares names as DNS does."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = scope["headers"]
            for name, value in headers:  # a loop, not any(): this runs on every request
                if (name == b"host" or name == b"origin") and value != value.lower():
                    lowered = [(name, value.lower() if name in _HOST_HEADERS else value) for name, value in headers]
                    scope = {**scope, "headers": lowered}
                    break
        await self._app(scope, receive, send)
