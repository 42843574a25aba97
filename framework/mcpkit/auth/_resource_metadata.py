"""Protected Resource Metadata (RFC 9728): how an OAuth client learns where to sign in for this server.

An MCP client that gets 401 reads ``resource_metadata`` from the ``WWW-Authenticate`` header (or tries
the well-known paths), fetches this document, and signs in at one of its ``authorization_servers`` for
a token whose audience is ``resource``. The resource is configured, never taken from a request: it is
what tokens are bound to, so a ``Host`` header must not be able to choose it (``_resource_names`` gives the
same resource under the other names the Host check allows, at the configured port).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.types import Receive, Scope, Send

from ..base import ConfigurationError, encode, is_loopback, send_empty, send_json

__all__ = ["WELL_KNOWN_PATH", "ResourceMetadata", "canonical_resource", "oauth_url", "resource_metadata"]

#: Where RFC 9728 puts the document, before the resource's own path.
WELL_KNOWN_PATH = "/.well-known/oauth-protected-resource"

#: How long clients and proxies may keep the document, in seconds.
CACHE_SECONDS = 3600
_CACHE_CONTROL = f"public, max-age={CACHE_SECONDS}".encode()


@dataclass(frozen=True, slots=True)
class ResourceMetadata:
    """The document a server publishes about itself as an OAuth protected resource."""

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] = ()
    documentation: str | None = None

    @property
    def paths(self) -> tuple[str, ...]:
        """Where it is served: under the resource's path first (what clients try first), then at the root."""
        path = urlsplit(self.resource).path.rstrip("/")
        return (WELL_KNOWN_PATH + path, WELL_KNOWN_PATH) if path else (WELL_KNOWN_PATH,)

    @property
    def url(self) -> str:
        """The document's absolute URL, for the ``resource_metadata`` of every 401."""
        parts = urlsplit(self.resource)
        return f"{parts.scheme}://{parts.netloc}{self.paths[0]}"

    def document(self) -> dict[str, object]:
        body: dict[str, object] = {
            "resource": self.resource,
            "authorization_servers": list(self.authorization_servers),
            "bearer_methods_supported": ["header"],
        }
        if self.scopes_supported:
            body["scopes_supported"] = list(self.scopes_supported)
        if self.documentation is not None:
            body["resource_documentation"] = self.documentation
        return body

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a request for the document: GET, a CORS preflight, or 405 (readable from any web page)."""
        cors = [(b"access-control-allow-origin", b"*")]
        method = scope.get("method", "GET")
        if method == "OPTIONS":
            allowed = [
                (b"access-control-allow-methods", b"GET, OPTIONS"),
                (b"access-control-allow-headers", b"mcp-protocol-version"),  # clients send it on this fetch too
                (b"access-control-max-age", b"600"),
            ]
            await send_empty(send, 204, [*cors, *allowed])
        elif method == "GET":
            await send_json(send, 200, encode(self.document()), [*cors, (b"cache-control", _CACHE_CONTROL)])
        else:
            body = {"error": "method_not_allowed", "error_description": f"{method} is not served here; use GET."}
            await send_json(send, 405, encode(body), [*cors, (b"allow", b"GET, OPTIONS")])


def resource_metadata(
    resource_url: str | None,
    authorization_servers: Sequence[str] | None,
    documentation: str | None,
    issuers: Sequence[str],
) -> ResourceMetadata | None:
    """The server's metadata, or None without ``resource_url``; a ConfigurationError says what is wrong."""
    if resource_url is None:
        if authorization_servers is not None or documentation is not None:
            raise ConfigurationError(
                "authorization_servers and resource_documentation describe the server as an OAuth resource, "
                "which needs its URL: pass resource_url='https://mcp.example.com/mcp' too."
            )
        return None
    resource = canonical_resource(oauth_url("resource_url", resource_url))
    if authorization_servers is None:
        servers = list(dict.fromkeys(issuers))
        if not servers:
            raise ConfigurationError(
                f"resource_url={resource!r} publishes where clients sign in, but no authenticator names an issuer: "
                "pass JWTAuth(issuer='https://login.example.com/', ...) or authorization_servers=[...]. (A server "
                "signed into with static keys alone has nothing for a client to discover; leave resource_url out.)"
            )
    elif isinstance(authorization_servers, str):
        raise ConfigurationError(
            "authorization_servers is a list of URLs, not one string: "
            f"write authorization_servers=[{authorization_servers!r}]."
        )
    else:
        servers = list(authorization_servers)
        if not servers:
            raise ConfigurationError("authorization_servers=[] names no authorization server: list at least one.")
    checked = tuple(oauth_url("authorization_servers entry", server) for server in servers)
    docs = None if documentation is None else oauth_url("resource_documentation", documentation)
    return ResourceMetadata(resource, checked, (), docs)


def canonical_resource(url: str) -> str:
    """The URL as the official client writes it (lower-case scheme and host, no default port): that is the
    ``resource`` it asks tokens for, so that is what the metadata says and what a token's ``aud`` must name."""
    # Imported here: the SDK's auth models take about 20 ms to import, which only servers with resource_url pay.
    from mcp.shared.auth import ProtectedResourceMetadata

    parsed = ProtectedResourceMetadata.model_validate({"resource": url, "authorization_servers": [url]})
    return str(parsed.resource)


def oauth_url(what: str, value: object, *, identifier: bool = True) -> str:
    """``value`` when it is an absolute https URL (http on loopback only), else a ConfigurationError naming ``what``.

    An ``identifier`` (a resource, an issuer) has no query or fragment either.
    """
    parts = urlsplit(value) if isinstance(value, str) else None
    if parts is not None and (parts.username is not None or parts.password is not None):
        raise ConfigurationError(f"{what} has credentials in it; pass them as settings, never inside a URL.")
    if parts is None or parts.scheme not in ("https", "http") or not parts.hostname:
        raise ConfigurationError(f"{what} {value!r} is not an absolute URL: write 'https://mcp.example.com/mcp'.")
    if parts.scheme == "http" and not is_loopback(parts.hostname):
        raise ConfigurationError(
            f"{what} {value!r} uses http beyond loopback: OAuth needs https there (RFC 9728, OAuth 2.1); "
            "write 'https://...', or serve on 127.0.0.1 / localhost while developing."
        )
    if identifier and (parts.fragment or parts.query):
        raise ConfigurationError(f"{what} {value!r} has a query or fragment; an OAuth identifier has neither.")
    return str(value)
