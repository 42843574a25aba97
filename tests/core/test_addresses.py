"""Addresses: who counts as one client, whose ``X-Forwarded-For`` is believed, and the URL a wildcard bind prints.

The behaviour these feed is tested through the real stack elsewhere (sessions per anonymous caller in
``test_sessions.py``, the connection cap in ``test_connections.py``); here are the rules themselves.
"""

from __future__ import annotations

import pytest

from mcpkit.base._addresses import ForwardedClients, client_group, connect_host, is_loopback
from mcpkit.http._serving import url_of


@pytest.mark.parametrize(
    ("host", "group"),
    [
        ("192.0.2.7", "192.0.2.7"),
        ("2001:db8:1:2::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"),
        ("2001:db8:1:3::1", "2001:db8:1:3::/64"),
        ("::ffff:192.0.2.7", "192.0.2.7"),  # an IPv4 client on a dual-stack socket
        ("::1", "::/64"),
        ("/run/mcp.sock", "/run/mcp.sock"),  # not an address: itself
    ],
)
def test_ipv4_clients_are_counted_by_address_and_ipv6_clients_by_their_64(host: str, group: str) -> None:
    assert client_group(host) == group


@pytest.mark.parametrize(
    ("host", "connectable"),
    [
        ("0.0.0.0", "127.0.0.1"),
        ("::", "::1"),
        ("", "127.0.0.1"),
        ("127.0.0.1", "127.0.0.1"),
        ("192.0.2.10", "192.0.2.10"),
        ("mcp.example.com", "mcp.example.com"),
    ],
)
def test_a_wildcard_bind_is_connected_to_on_loopback(host: str, connectable: str) -> None:
    assert connect_host(host) == connectable


class BoundTo:
    """What ``url_of`` reads of a bound socket (tests bind nothing but 127.0.0.1)."""

    def __init__(self, *address: object) -> None:
        self.address = address

    def getsockname(self) -> tuple[object, ...]:
        return self.address


@pytest.mark.parametrize(
    ("address", "url"),
    [
        (("0.0.0.0", 8123), "http://127.0.0.1:8123/mcp"),
        (("::", 8123, 0, 0), "http://[::1]:8123/mcp"),
        (("127.0.0.1", 8123), "http://127.0.0.1:8123/mcp"),
        (("2001:db8::5", 8123, 0, 0), "http://[2001:db8::5]:8123/mcp"),
    ],
)
def test_the_url_printed_once_serving_is_one_a_client_can_connect_to(address: tuple[object, ...], url: str) -> None:
    assert url_of(BoundTo(*address)) == url  # type: ignore[arg-type]


def test_localhost_and_loopback_addresses_are_loopback() -> None:
    assert [is_loopback(h) for h in ("localhost", "127.0.0.2", "::1", "[::1]")] == [True] * 4
    assert [is_loopback(h) for h in ("0.0.0.0", "::", "192.0.2.1", "example.com")] == [False] * 4


def test_a_trusted_proxys_request_is_counted_for_the_last_client_that_is_not_a_trusted_proxy() -> None:
    proxies = ForwardedClients("127.0.0.1, 10.0.0.0/8")

    assert proxies.client("127.0.0.1", [b"203.0.113.9"]) == "203.0.113.9"
    assert proxies.client("127.0.0.1", [b"198.51.100.1, 203.0.113.9, 10.1.2.3"]) == "203.0.113.9"  # via 10.1.2.3
    assert proxies.client("127.0.0.1", [b"198.51.100.1", b"203.0.113.9:5123"]) == "203.0.113.9"
    assert proxies.client("127.0.0.1", [b"[2001:db8::7]:443"]) == "2001:db8::7"
    assert proxies.client("127.0.0.1", [b"10.0.0.5, 10.0.0.6"]) == "10.0.0.5"  # every hop a proxy: the first
    assert proxies.client("127.0.0.1", []) == "127.0.0.1"  # the proxy's own request


def test_the_x_forwarded_for_of_anyone_else_is_ignored() -> None:
    proxies = ForwardedClients()  # uvicorn's default: 127.0.0.1 and ::1

    assert proxies.client("192.0.2.50", [b"203.0.113.9"]) == "192.0.2.50"
    assert proxies.trusts("::1")
    assert not proxies.trusts("127.0.0.2")
    assert ForwardedClients("*").client("192.0.2.50", [b"203.0.113.9, 198.51.100.1"]) == "203.0.113.9"


def test_the_proxies_trusted_come_from_forwarded_allow_ips_as_for_uvicorn(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "192.0.2.0/24")
    assert ForwardedClients.from_environment().trusts("192.0.2.50")

    monkeypatch.delenv("FORWARDED_ALLOW_IPS")
    assert ForwardedClients.from_environment().trusted == "127.0.0.1,::1"
