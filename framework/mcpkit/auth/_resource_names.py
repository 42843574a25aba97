"""The resource under each name a server answers to: a client is told the address it used.

An OAuth client compares the metadata's ``resource`` with the URL it connected to and stops when they differ,
then asks for tokens meant for that URL (RFC 9728 section 3.3, RFC 8707). So a server configured as
``http://127.0.0.1:8000/mcp`` and reached as ``http://localhost:8000/mcp`` says ``http://localhost:8000/mcp``.
Only names the Host check lets through are reflected, each with the configured scheme, port and path: a
``Host`` header cannot make the server speak for another port (another server on the machine), scheme or path.
An unknown ``Host`` gets the configured resource, and its MCP requests are refused by the Host check as before.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from ..base import ConfigurationError
from ._resource_metadata import ResourceMetadata, canonical_resource, oauth_url

__all__ = ["ResourceNames", "resource_names"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class ResourceNames:
    """The configured resource's metadata, and a copy for each other ``Host`` the server answers to."""

    configured: ResourceMetadata
    by_host: Mapping[str, ResourceMetadata]

    def at(self, host: str | None) -> ResourceMetadata:
        """The metadata for a request whose ``Host`` header is ``host`` (the configured one for an unknown host),
        whatever its case, as DNS compares names."""
        return self.configured if host is None else self.by_host.get(host.lower(), self.configured)

    @property
    def resources(self) -> tuple[str, ...]:
        """Every resource URL the server is, the configured one first, each once."""
        found = dict.fromkeys([self.configured.resource, *(m.resource for m in self.by_host.values())])
        return tuple(found)


def resource_names(metadata: ResourceMetadata, allowed_hosts: Sequence[str]) -> ResourceNames:
    """``metadata`` under each name in ``allowed_hosts`` (the Host check's entries: ``name``, ``name:port``,
    ``name:*``) that reaches the configured port; names no OAuth client could use (http beyond loopback, a
    name that is no URL host) are left out."""
    parts = urlsplit(metadata.resource)
    port = parts.port or _DEFAULT_PORTS[parts.scheme]
    by_host = {parts.netloc: metadata}
    for host in _hosts_at(allowed_hosts, port, parts.scheme):
        if host in by_host:
            continue
        try:
            resource = canonical_resource(oauth_url("resource", f"{parts.scheme}://{host}{parts.path}"))
        except (ConfigurationError, ValueError):
            continue
        by_host[host] = metadata if resource == metadata.resource else replace(metadata, resource=resource)
    return ResourceNames(metadata, by_host)


def _hosts_at(allowed_hosts: Sequence[str], port: int, scheme: str) -> Iterator[str]:
    """The ``Host`` header values, among those the entries allow, that name ``port``."""
    for entry in allowed_hosts:
        if entry.endswith(":*"):
            yield f"{entry[:-2]}:{port}"
            continue
        try:
            named = urlsplit(f"//{entry}").port
        except ValueError:
            continue
        if named == port or (named is None and port == _DEFAULT_PORTS[scheme]):
            yield entry
