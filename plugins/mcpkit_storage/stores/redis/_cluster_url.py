"""``ClusterURL``: what a ``redis+cluster://`` store URL names — nodes, credentials, TLS and ``wait``."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

__all__ = ["DEFAULT_WAIT_MS", "ClusterURL", "parse_cluster_url"]

#: How long a write waits for its replicas with ``wait=N`` before saying it may not survive a failover.
DEFAULT_WAIT_MS = 100

_OPTIONS = ("wait", "wait_timeout_ms")
#: TLS options (rediss+cluster:// only), as redis-py names them: the CA to trust, a client certificate and key,
#: and whether the nodes' certificates are checked.
TLS_OPTIONS = ("ssl_ca_certs", "ssl_certfile", "ssl_keyfile", "ssl_cert_reqs")
_CERT_REQS = ("required", "optional", "none")


@dataclass(frozen=True, slots=True)
class ClusterURL:
    """``redis+cluster://[user:password@]host:port[,host:port...][?wait=N&wait_timeout_ms=M]``; with
    ``rediss+cluster://`` also ``ssl_ca_certs=PATH``, ``ssl_certfile=PATH``, ``ssl_keyfile=PATH`` and
    ``ssl_cert_reqs=required|optional|none``."""

    nodes: tuple[tuple[str, int], ...]
    tls: bool
    username: str | None
    password: str | None
    wait: int
    wait_timeout_ms: int
    #: The TLS options given, in ``TLS_OPTIONS`` order, as redis-py's keyword arguments.
    tls_options: tuple[tuple[str, str], ...] = ()

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
        options += [f"{name}={value}" for name, value in self.tls_options]  # paths and a level: nothing secret
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
    given = parse_qs(query, keep_blank_values=True) if query else {}
    tls = scheme == "rediss+cluster"
    return ClusterURL(
        tuple(_node(item.strip()) for item in where.split(",")),
        tls=tls,
        username=username,
        password=password,
        **_options({name: found for name, found in given.items() if name not in TLS_OPTIONS}),
        tls_options=_tls_options({name: found for name, found in given.items() if name in TLS_OPTIONS}, tls),
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


def _options(given: dict[str, list[str]]) -> dict[str, int]:
    unknown = sorted(set(given) - set(_OPTIONS))
    if unknown:
        known = ", ".join([*_OPTIONS[:-1], f"{_OPTIONS[-1]} (and with rediss+cluster:// {', '.join(TLS_OPTIONS)})"])
        raise ValueError(f"unknown Redis Cluster option(s) {unknown}; the options are {known}")
    values = {"wait": "0", "wait_timeout_ms": str(DEFAULT_WAIT_MS)}
    for name, found in given.items():
        if len(found) != 1 or not (found[0].isascii() and found[0].isdigit()):
            raise ValueError(f"{name} is given once, as a whole number (replicas for wait, milliseconds for the other)")
        values[name] = found[0]
    options = {name: int(value) for name, value in values.items()}
    if options["wait_timeout_ms"] < 1:
        raise ValueError("wait_timeout_ms is at least 1")
    return options


def _tls_options(given: dict[str, list[str]], tls: bool) -> tuple[tuple[str, str], ...]:
    if given and not tls:
        raise ValueError(f"{', '.join(sorted(given))} are TLS options: use rediss+cluster:// (TLS) with them")
    for name, found in given.items():
        if len(found) != 1 or not found[0]:
            raise ValueError(f"{name} is given once, with a value")
    reqs = given.get("ssl_cert_reqs", ["required"])[0]
    if reqs not in _CERT_REQS:
        raise ValueError(f"ssl_cert_reqs is one of {', '.join(_CERT_REQS)}, not {reqs!r}")
    return tuple((name, given[name][0]) for name in TLS_OPTIONS if name in given)
