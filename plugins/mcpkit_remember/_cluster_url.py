"""``ClusterURL``: what a ``redis+cluster://`` store URL names — nodes, credentials, TLS and ``wait``."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

__all__ = ["DEFAULT_WAIT_MS", "ClusterURL", "parse_cluster_url"]

#: How long a write waits for its replicas with ``wait=N`` before saying it may not survive a failover.
DEFAULT_WAIT_MS = 100

_OPTIONS = ("wait", "wait_timeout_ms")


@dataclass(frozen=True, slots=True)
class ClusterURL:
    """``redis+cluster://[user:password@]host:port[,host:port...][?wait=N&wait_timeout_ms=M]``."""

    nodes: tuple[tuple[str, int], ...]
    tls: bool
    username: str | None
    password: str | None
    wait: int
    wait_timeout_ms: int

    def redacted(self) -> str:
        """The URL without its password, for logs and errors."""
        scheme = "rediss+cluster" if self.tls else "redis+cluster"
        user = f"{self.username}@" if self.username else ""
        hosts = ",".join(f"[{h}]:{p}" if ":" in h else f"{h}:{p}" for h, p in self.nodes)
        options = []
        if self.wait:
            options.append(f"wait={self.wait}")
        if self.wait_timeout_ms != DEFAULT_WAIT_MS:
            options.append(f"wait_timeout_ms={self.wait_timeout_ms}")
        return f"{scheme}://{user}{hosts}{'?' + '&'.join(options) if options else ''}"


def parse_cluster_url(url: str) -> ClusterURL:
    """The nodes, credentials and options of a cluster URL; ValueError saying what is wrong (never the password)."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in ("redis+cluster", "rediss+cluster"):
        raise ValueError(f"a Redis Cluster URL starts redis+cluster:// or rediss+cluster://, not {url.split(':')[0]!r}")
    if "#" in rest:
        raise ValueError("a Redis Cluster URL has no #fragment")
    credentials, at, after = rest.rpartition("@")  # a password may hold '?', '/' or ','; hosts never hold '@'
    where, _, query = after.partition("?")
    where, slash, path = where.partition("/")
    if slash and path not in ("", "0"):
        raise ValueError(f"a Redis Cluster has database 0 only, not /{path}")
    username = password = None
    if at:
        user, colon, secret = credentials.partition(":")
        username, password = unquote(user) or None, unquote(secret) if colon else None
    return ClusterURL(
        tuple(_node(item.strip()) for item in where.split(",")),
        tls=scheme == "rediss+cluster",
        username=username,
        password=password,
        **_options(query),
    )


def _node(item: str) -> tuple[str, int]:
    parts = urlsplit(f"//{item}")
    try:
        port = parts.port
    except ValueError:  # not a number, or out of range
        port = None
    if not parts.hostname or not port:
        raise ValueError(f"Redis Cluster node {item!r} is not HOST:PORT (a port from 1 to 65535)")
    return parts.hostname, port


def _options(query: str) -> dict[str, int]:
    given = parse_qs(query, keep_blank_values=True) if query else {}
    unknown = sorted(set(given) - set(_OPTIONS))
    if unknown:
        raise ValueError(f"unknown Redis Cluster option(s) {unknown}; the options are wait and wait_timeout_ms")
    values = {"wait": "0", "wait_timeout_ms": str(DEFAULT_WAIT_MS)}
    for name, found in given.items():
        if len(found) != 1 or not (found[0].isascii() and found[0].isdigit()):
            raise ValueError(f"{name} is given once, as a whole number (replicas for wait, milliseconds for the other)")
        values[name] = found[0]
    options = {name: int(value) for name, value in values.items()}
    if options["wait_timeout_ms"] < 1:
        raise ValueError("wait_timeout_ms is at least 1")
    return options
