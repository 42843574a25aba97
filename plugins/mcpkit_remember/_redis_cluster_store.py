"""The Redis Cluster store: ``RedisStore``'s layout and scripts, spread over a cluster's primaries.

Every key of one owner group shares the hash tag ``{group}`` (the placement prefix of a placed keyring's
owners, the same under every secret), so each operation is still one atomic script on one node, a move
between secrets included. Each script declares every key it writes, so a slot being resharded answers
TRYAGAIN or ASK before the script starts rather than half-way; the client follows redirections and retries.
Scans walk every primary. With ``wait=N`` each write also waits until ``N`` replicas have it (``WAIT``), so a
failover cannot lose a write that was acknowledged.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from typing import Any, ClassVar, cast
from urllib.parse import parse_qs, unquote, urlsplit

from redis import exceptions as redis_errors
from redis.asyncio import Redis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff

from mcpkit_remember import _redis_scripts as lua
from mcpkit_remember._redis_store import (
    EXPIRY_MARGIN_MS,
    TIMEOUT_SECONDS,
    RedisStore,
    _unpack,
)
from mcpkit_remember._store import Address, Entry, Record, StoreUnavailableError

__all__ = ["ClusterURL", "RedisClusterStore", "parse_cluster_url"]

#: How many times a script is run again when the cluster moved one of its keys under it, and the pause.
MOVED_ATTEMPTS, MOVED_PAUSE_SECONDS = 40, 0.05
#: How long a write waits for its replicas with ``wait=N`` before saying it may not survive a failover.
DEFAULT_WAIT_MS = 100

#: Errors a script may meet inside a cluster when a slot it touches is moving: nothing of it ran past them,
#: or it is safe to run again (every script is: a resent swap finds the marker it left).
_MOVING = ("TRYAGAIN", "non local key", "CLUSTERDOWN", "ASK ", "MOVED ")


class ClusterURL:
    """``redis+cluster://[user:password@]host:port[,host:port...][?wait=N&wait_timeout_ms=M]``."""

    def __init__(
        self,
        nodes: list[tuple[str, int]],
        *,
        tls: bool,
        username: str | None,
        password: str | None,
        wait: int,
        wait_timeout_ms: int,
    ) -> None:
        self.nodes, self.tls, self.username, self.password = nodes, tls, username, password
        self.wait, self.wait_timeout_ms = wait, wait_timeout_ms

    def redacted(self) -> str:
        scheme = "rediss+cluster" if self.tls else "redis+cluster"
        user = f"{self.username}@" if self.username else ""
        wait = f"?wait={self.wait}" if self.wait else ""
        return f"{scheme}://{user}{','.join(f'{h}:{p}' for h, p in self.nodes)}{wait}"


def parse_cluster_url(url: str) -> ClusterURL:
    """The nodes, credentials and ``wait`` of a cluster URL; ValueError saying what is wrong."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in ("redis+cluster", "rediss+cluster"):
        raise ValueError(f"a Redis Cluster URL starts redis+cluster:// or rediss+cluster://, not {url.split(':')[0]!r}")
    where, _, query = rest.partition("?")
    where = where.rstrip("/")
    credentials, at, hosts = where.rpartition("@")
    username = password = None
    if at:
        user, colon, secret = credentials.partition(":")
        username, password = unquote(user) or None, unquote(secret) if colon else None
    nodes = []
    for item in hosts.split(","):
        parts = urlsplit(f"//{item.strip()}")
        try:
            port = parts.port
        except ValueError:
            port = None
        if not parts.hostname or port is None:
            raise ValueError(f"Redis Cluster node {item.strip()!r} is not HOST:PORT")
        nodes.append((parts.hostname, port))
    options = {k: v[-1] for k, v in parse_qs(query).items()}
    unknown = set(options) - {"wait", "wait_timeout_ms"}
    if unknown:
        raise ValueError(f"unknown Redis Cluster option(s) {sorted(unknown)}; the options are wait and wait_timeout_ms")
    try:
        wait = int(options.get("wait", "0"))
        wait_timeout_ms = int(options.get("wait_timeout_ms", str(DEFAULT_WAIT_MS)))
    except ValueError:
        raise ValueError("wait and wait_timeout_ms are whole numbers (replicas, milliseconds)") from None
    if wait < 0 or wait_timeout_ms < 1:
        raise ValueError("wait is 0 or more replicas and wait_timeout_ms at least 1")
    return ClusterURL(
        nodes,
        tls=scheme == "rediss+cluster",
        username=username,
        password=password,
        wait=wait,
        wait_timeout_ms=wait_timeout_ms,
    )


class RedisClusterStore(RedisStore):
    """Keeps entries in the Redis Cluster at ``url`` (any of its nodes), every key under ``prefix``.

    Owners must come from a placed keyring (``Keyring(placed=True)``): ``group.hash``, the group being the
    hash tag.
    """

    SCRIPTS: ClassVar[dict[str, str]] = lua.CLUSTER
    _OWNER_GLOB: ClassVar[str] = "{*}*"

    def __init__(self, url: str, *, prefix: str = "mcpkit:remember:") -> None:
        super().__init__(url, prefix=prefix)
        self._parsed = parse_cluster_url(url)
        self._where = self._parsed.redacted()
        self._cluster: RedisCluster | None = None
        self._nodes: dict[str, Redis] = {}

    def __repr__(self) -> str:
        return f"RedisClusterStore({self._where!r}, prefix={self._prefix!r})"

    async def open(self) -> None:
        """Connect to the cluster, learn its slots and load the scripts on every primary."""
        if self._cluster is not None:
            return
        parsed = self._parsed
        client = RedisCluster(
            startup_nodes=[ClusterNode(host, port) for host, port in parsed.nodes],
            username=parsed.username,
            password=parsed.password,
            ssl=parsed.tls,
            socket_connect_timeout=TIMEOUT_SECONDS,
            socket_timeout=TIMEOUT_SECONDS,
            # A failover takes the cluster's node timeout and an election (seconds): keep trying that long.
            retry=Retry(ExponentialBackoff(cap=1.0, base=0.05), 8),
            require_full_coverage=False,
        )
        try:
            with self._reaching():
                await client.initialize()
                scripts = {name: client.register_script(text) for name, text in self.SCRIPTS.items()}
                for script in scripts.values():
                    await client.script_load(script.script)
        except BaseException:
            await client.aclose()
            raise
        self._cluster, self._scripts = client, scripts
        self._client = cast("Redis", client)  # the commands RedisStore sends (GET, SCAN...) exist on both
        self.legacy = False  # mcpkit 0.1 could not write to a cluster

    async def close(self) -> None:
        for node in self._nodes.values():
            await node.aclose()
        self._nodes.clear()
        if self._cluster is not None:
            await self._cluster.aclose()
            self._cluster = self._client = None

    async def settle_legacy(self) -> None:
        self.legacy = False

    async def get_many(self, addresses: Sequence[Address], now: float) -> list[Entry | None]:
        if not addresses:
            return []
        with self._reaching():
            raws = await self._cluster_client.mget_nonatomic([self._value(*a) for a in addresses])
        return [None if raw is None else _live_entry(raw, now) for raw in cast("list[bytes | None]", raws)]

    async def _find_legacy(self, layout: bytes | None) -> bool:
        return False

    async def _call(
        self, script: str, now: float, *args: str | bytes, keys: Sequence[str] = (), writing: bool = True
    ) -> Any:
        """Run a script on the node of its keys; again while a reshard moves them; then ``WAIT`` if asked."""
        full = [repr(float(now)), str(EXPIRY_MARGIN_MS), *args]
        for attempt in range(MOVED_ATTEMPTS):
            try:
                with self._reaching(writing=writing):
                    if writing and self._parsed.wait and keys:
                        return await self._replicated(script, keys, full)
                    return await self._scripts[script](keys=keys, args=full, client=self._cluster_client)
            except StoreUnavailableError as exc:
                if attempt + 1 == MOVED_ATTEMPTS or not any(m in str(exc) for m in _MOVING):
                    raise
            await asyncio.sleep(MOVED_PAUSE_SECONDS)
        raise AssertionError("unreachable")

    async def _replicated(self, script: str, keys: Sequence[str], args: list[str | bytes]) -> Any:
        """The script and ``WAIT`` on one connection to the keys' primary: its answer once replicas have it."""
        cluster = self._cluster_client
        node = cluster.get_node_from_key(keys[0])
        if node is None:
            raise redis_errors.ClusterDownError(f"no node serves {keys[0]!r}")
        redis = self._nodes.get(node.name)
        if redis is None:
            parsed = self._parsed
            redis = Redis(
                host=node.host,
                port=int(node.port),
                username=parsed.username,
                password=parsed.password,
                ssl=parsed.tls,
                socket_connect_timeout=TIMEOUT_SECONDS,
                socket_timeout=TIMEOUT_SECONDS,
            )
            self._nodes[node.name] = redis
        sha = self._scripts[script].sha
        try:
            async with redis.pipeline(transaction=False) as pipe:
                pipe.evalsha(sha, len(keys), *keys, *args)
                pipe.wait(self._parsed.wait, self._parsed.wait_timeout_ms)
                answer, replicas = await pipe.execute()
        except redis_errors.NoScriptError:
            await cluster.script_load(self._scripts[script].script)
            raise redis_errors.TryAgainError("TRYAGAIN the script was loaded on a new primary") from None
        except (redis_errors.MovedError, redis_errors.AskError, redis_errors.ConnectionError) as exc:
            await cluster.initialize()  # the slot moved or its primary went: learn the layout again
            raise redis_errors.TryAgainError(f"TRYAGAIN {exc}") from exc
        if int(replicas) < self._parsed.wait:
            raise StoreUnavailableError(
                f"Redis Cluster at {self._where}: the write reached the primary but only {replicas} of the "
                f"{self._parsed.wait} replicas asked for (wait=) within {self._parsed.wait_timeout_ms} ms",
                maybe_applied=True,
            )
        return answer

    def _declared(
        self, owner: str, bucket: str | None, key: str | None = None, written: bytes | None = None
    ) -> list[str]:
        base = self._base(owner)
        if bucket is None:
            return [f"{base}:o"]
        names = [f"{base}:{kind}:{bucket}" for kind in "izdx"] + [f"{base}:o"]
        if key is not None:
            value = f"{base}:v:{bucket}:{key}"
            names.insert(0, value)
            if written is not None:
                marker = hashlib.sha1(value.encode()).hexdigest() + hashlib.sha1(written).hexdigest()
                names.append(f"{base}:s:{marker}")
        return names

    async def _records(self, names: list[bytes]) -> list[Record]:
        if not names:
            return []
        addresses = [self._parse(name, "v") for name in names]
        with self._reaching():
            async with self._cluster_client.pipeline(transaction=False) as pipe:
                for name, address in zip(names, addresses, strict=True):
                    if address is not None:
                        owner, bucket, key = address
                        pipe.get(name)
                        pipe.hexists(f"{self._base(owner)}:d:{bucket}", key)
                answers = await pipe.execute()
        records, replies = [], iter(answers)
        for address in addresses:
            if address is None:
                continue
            raw, has_postings = next(replies), next(replies)
            entry = None if raw is None else _unpack(raw)
            if entry is not None:
                records.append(Record(*address, entry, bool(has_postings)))
        return records

    def _check(self, owner: str, bucket: str) -> None:
        super()._check(owner, bucket)
        group, dot, rest = owner.partition(".")
        if not dot or not group or not rest or ":" in owner:
            raise ValueError(
                f"RedisClusterStore owner {owner!r} has no placement group ('group.hash'): a Redis Cluster "
                "store needs a placed keyring, Keyring(secrets, placed=True)"
            )

    def _base(self, owner: str) -> str:
        return f"{self._prefix}{{{owner.partition('.')[0]}}}{owner}"

    def _split_owner(self, text: str) -> tuple[str, str] | None:
        group, _, rest = text.partition("}")
        owner, colon, rest = rest.partition(":")
        return (owner, colon + rest) if owner.startswith(group + ".") else None

    @property
    def _cluster_client(self) -> RedisCluster:
        if self._cluster is None:
            raise RuntimeError(f"{self!r} is not open; call open() first")
        return self._cluster


def _live_entry(raw: bytes, now: float) -> Entry | None:
    entry = _unpack(raw)
    return entry if entry is not None and entry.live(now) else None
