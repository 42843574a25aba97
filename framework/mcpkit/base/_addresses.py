"""Client and server addresses: who counts as one client, which proxies to believe, what URL to print.

- ``client_group``: the unit per-address limits count in. An IPv4 client is its address; an IPv6 client is
  its /64, because one host (a home router, a VM, a phone) is commonly given a whole /64 and can pick any
  of its 2**64 addresses, so counting per IPv6 address would be no limit at all.
- ``ForwardedClients``: behind a reverse proxy every connection comes from the proxy. Requests from a
  trusted proxy (uvicorn's ``forwarded_allow_ips``: ``FORWARDED_ALLOW_IPS``, by default 127.0.0.1 and ::1)
  name their client in ``X-Forwarded-For``; anyone else's header is ignored, or a client could pick its
  own address.
- ``caller_key``: whom per-caller limits count a request against: its signed-in user, else its client group.
- ``is_loopback`` and ``connect_host``: whether a bind address stays on this machine, and the host a
  client connects to when the server listens on a wildcard (0.0.0.0 or ::, which is nobody's address).
"""

from __future__ import annotations

import functools
import ipaddress
import os
from collections.abc import Iterable, Mapping
from typing import Any

from ._credentials import IDENTITY_SCOPE_KEY

__all__ = ["ANONYMOUS_PREFIX", "ForwardedClients", "caller_key", "client_group", "connect_host", "is_loopback"]

#: Before an anonymous caller's key (mcpkit's own: no token may claim a user id starting so).
ANONYMOUS_PREFIX = "anon:"
#: The IPv6 prefix one client is counted by.
IPV6_CLIENT_PREFIX = 64
#: Whom uvicorn believes ``X-Forwarded-For`` from when ``FORWARDED_ALLOW_IPS`` is not set.
DEFAULT_FORWARDED_ALLOW_IPS = "127.0.0.1,::1"
#: Peers whose trust a ``ForwardedClients`` remembers before starting afresh.
_JUDGED_KEPT = 4096

_Address = ipaddress.IPv4Address | ipaddress.IPv6Address
_Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@functools.lru_cache(maxsize=4096)
def client_group(host: str) -> str:
    """The client ``host`` is counted as: an IPv4 address, or an IPv6 /64 such as ``2001:db8:1:2::/64``.

    An IPv4-mapped IPv6 address is its IPv4 address; anything that is not an address (a Unix socket's
    path) is itself.
    """
    address = _address(host)
    if address is None:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, IPV6_CLIENT_PREFIX), strict=False))
    return str(address)


def caller_key(scope: Mapping[str, Any]) -> str:
    """Whom an HTTP request counts against: the signed-in user id the auth gate left in ``scope``, else
    ``anon:`` and the client's group (an anonymous caller is its address, or IPv6 /64)."""
    identity = scope.get(IDENTITY_SCOPE_KEY)
    if identity is not None:
        return str(identity.user_id)
    client = scope.get("client")
    return ANONYMOUS_PREFIX + (client_group(client[0]) if client else "?")


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (``127.0.0.0/8``, ``::1``)."""
    if host == "localhost":
        return True
    address = _address(host)
    return address is not None and address.is_loopback


def connect_host(host: str) -> str:
    """The host a client on this machine connects to for a server bound to ``host``.

    A wildcard bind (``0.0.0.0``, ``::``, or no host) listens on every address, loopback included, but is
    not an address a client can connect to: it is reached on ``127.0.0.1`` (``::1`` for IPv6).
    """
    if host == "":
        return "127.0.0.1"
    address = _address(host)
    if address is None or not address.is_unspecified:
        return host
    return "::1" if isinstance(address, ipaddress.IPv6Address) else "127.0.0.1"


class ForwardedClients:
    """Which peers are trusted proxies, and the client address a trusted proxy's request names.

    ``trusted`` is uvicorn's ``forwarded_allow_ips``: addresses and networks separated by commas, or ``*``
    for every peer. The client is found the way uvicorn's proxy-headers middleware finds it (which sets the
    ASGI scope's ``client`` from the same setting): the last address in ``X-Forwarded-For`` that is not a
    trusted proxy itself, each proxy having appended the address it was reached from.
    """

    def __init__(self, trusted: str = DEFAULT_FORWARDED_ALLOW_IPS) -> None:
        self.trusted = trusted
        entries = [entry.strip() for entry in trusted.split(",") if entry.strip()]
        self._everyone = "*" in entries
        self._addresses: set[_Address] = set()
        self._networks: list[_Network] = []
        self._names: set[str] = set()
        for entry in entries:
            try:
                if "/" in entry:
                    self._networks.append(ipaddress.ip_network(entry, strict=False))
                else:
                    self._addresses.add(ipaddress.ip_address(entry))
            except ValueError:
                self._names.add(entry)  # not an address: uvicorn compares it as text (a Unix socket)
        self._judged: dict[str, bool] = {}  # peers seen, judged once each (a bounded cache)

    @classmethod
    def from_environment(cls) -> ForwardedClients:
        """The proxies uvicorn trusts when nothing else is said: ``FORWARDED_ALLOW_IPS``, or loopback."""
        return cls(os.environ.get("FORWARDED_ALLOW_IPS", DEFAULT_FORWARDED_ALLOW_IPS))

    def __repr__(self) -> str:
        return f"ForwardedClients({self.trusted!r})"

    def trusts(self, peer: str) -> bool:
        """Whether ``peer`` is a proxy whose ``X-Forwarded-For`` is believed."""
        if self._everyone:
            return True
        judged = self._judged.get(peer)
        if judged is None:
            address = _address(peer)
            if address is None:
                judged = peer in self._names
            else:
                judged = address in self._addresses or any(address in network for network in self._networks)
            if len(self._judged) >= _JUDGED_KEPT:
                self._judged.clear()
            self._judged[peer] = judged
        return judged

    def client(self, peer: str, forwarded_for: Iterable[bytes]) -> str:
        """The client behind ``peer``: from the ``X-Forwarded-For`` values if ``peer`` is trusted, else ``peer``."""
        if not self.trusts(peer):
            return peer
        hops = [_host_of(hop) for value in forwarded_for for hop in value.decode("latin-1").split(",")]
        hops = [hop for hop in hops if hop]
        if not hops:
            return peer
        if self._everyone:
            return hops[0]
        for hop in reversed(hops):
            if not self.trusts(hop):
                return hop
        return hops[0]  # every hop is a trusted proxy: the first one is the client


def _address(host: str) -> _Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _host_of(hop: str) -> str:
    """The address in one ``X-Forwarded-For`` entry: ``1.2.3.4``, ``1.2.3.4:5678``, ``[2001:db8::1]:5678``."""
    hop = hop.strip()
    if hop.startswith("["):
        return hop[1 : hop.find("]")] if "]" in hop else hop
    if hop.count(":") == 1:
        return hop.split(":", 1)[0]
    return hop
