"""The Redis Cluster store: ``RedisStore``'s layout and scripts, spread over a cluster's primaries."""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar, TypeVar, cast

from redis import exceptions as redis_errors
from redis.asyncio import Redis
from redis.asyncio.cluster import ClusterNode
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from .. import Address, Entry, QuotaExceededError, Record, StoreUnavailableError, Write
from . import _redis_scripts as lua
from . import _redis_wire as wire
from ._cluster_batch import Batch, Replication, node_pipeline
from ._cluster_client import ClusterClient, reconnecting
from ._cluster_url import DEFAULT_WAIT_MS, ClusterURL, parse_cluster_url
from ._redis_pipeline import swap_answers
from ._redis_store import EXPIRY_MARGIN_MS, TIMEOUT_SECONDS, RedisStore

__all__ = ["CONNECTIONS_PER_NODE", "DEFAULT_WAIT_MS", "MOVING_SECONDS", "RedisClusterStore"]

#: How long an operation is tried again while its slot moves or its primary is being replaced, and the pauses
#: between tries (doubling from the first to the last).
MOVING_SECONDS, PAUSE_SECONDS, LONGEST_PAUSE_SECONDS = 10.0, 0.05, 0.5
#: Connections an instance opens to one node at most; a call that finds them all in use waits as above.
CONNECTIONS_PER_NODE = 100

_T = TypeVar("_T")

#: Refusals to wait out, the layout the client knows being still right: a slot moving (the command did not run;
#: a script is refused before its first command, by its fence key), every connection to a node in use.
_BUSY = (redis_errors.TryAgainError, redis_errors.AskError, redis_errors.MaxConnectionsError)
#: Failures after which the client learns the layout again before the next try: a slot moved (MOVED, redis-py's
#: "TTL exhausted" after its own redirections), a slot has no primary (CLUSTERDOWN, a slot missing from the
#: client's map), a node went or became a replica (a failover), no node answered while learning the layout.
_LAYOUT_CHANGED = (
    redis_errors.MovedError,
    redis_errors.ClusterError,
    redis_errors.SlotNotCoveredError,
    redis_errors.ReadOnlyError,
    redis_errors.ConnectionError,
    redis_errors.TimeoutError,
    OSError,
)
#: Connection failures that waiting does not cure.
_REFUSED_ACCESS = (
    redis_errors.AuthenticationError,
    redis_errors.AuthorizationError,
    redis_errors.ExternalAuthProviderError,
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
        self.placed = True  # owners come from a placed keyring: the Vault checks
        self._parsed = parse_cluster_url(url)
        self._where = self._parsed.redacted()
        self._cluster: ClusterClient | None = None
        self._nodes: dict[str, Redis] = {}

    def __repr__(self) -> str:
        return f"RedisClusterStore({self._where!r}, prefix={self._prefix!r})"

    async def open(self) -> None:
        """Connect to the cluster, learn its slots and load the scripts on every primary."""
        if self._cluster is not None:
            return
        parsed = self._parsed
        client = ClusterClient(
            startup_nodes=[ClusterNode(host, port) for host, port in parsed.nodes],
            username=parsed.username,
            password=parsed.password,
            ssl=parsed.tls,
            **_tls_arguments(parsed),
            socket_connect_timeout=TIMEOUT_SECONDS,
            socket_timeout=TIMEOUT_SECONDS,
            # The store tries again itself (redis-py's cluster client ignores a Retry's backoff, and would send
            # again a write that may have run); it only patches its slot map on MOVED.
            retry=Retry(NoBackoff(), 0),
            reinitialize_steps=0,
            max_connections=CONNECTIONS_PER_NODE,
            require_full_coverage=False,
        )
        try:
            with self._reaching():
                await client.initialize()
                scripts = {name: client.register_script(text) for name, text in self.SCRIPTS.items()}
                for script in scripts.values():
                    await client.script_load(script.script)
        except BaseException:
            await client.shut()
            raise
        self._cluster, self._scripts = client, scripts
        self._client = cast("Redis", client)  # the commands RedisStore sends (GET, SCAN...) exist on both
        self.legacy = False  # mcpkit 0.1 could not write to a cluster

    async def close(self) -> None:
        nodes, self._nodes = list(self._nodes.values()), {}
        cluster, self._cluster, self._client = self._cluster, None, None
        try:
            for node in nodes:
                await node.aclose()
        finally:
            if cluster is not None:
                await cluster.shut()

    async def settle_legacy(self) -> None:
        self.legacy = False

    async def get(self, owner: str, bucket: str, key: str, now: float) -> Entry | None:
        name = self._value(owner, bucket, key)
        raw = await self._retrying(lambda: self._cluster_client.get(name), writing=False)
        return None if raw is None else _live_entry(cast("bytes", raw), now)

    async def get_many(self, addresses: Sequence[Address], now: float) -> list[Entry | None]:
        if not addresses:
            return []
        names = [self._value(*a) for a in addresses]
        raws = await self._retrying(lambda: self._cluster_client.mget_nonatomic(names), writing=False)
        return [None if raw is None else _live_entry(raw, now) for raw in cast("list[bytes | None]", raws)]

    async def get_many_created(self, addresses: Sequence[Address], now: float) -> list[Entry | None]:
        reads = self._dated(addresses)
        return await self._retrying(lambda: wire.read_dated(self._cluster_client, reads, now), writing=False)

    async def notes(self) -> dict[str, str]:
        raw = await self._retrying(lambda: self._cluster_client.hgetall(self._notes), writing=False)
        return wire.texts(raw)

    async def note(self, name: str, value: str | None) -> None:
        cluster, notes = self._cluster_client, self._notes
        change = (lambda: cluster.hdel(notes, name)) if value is None else (lambda: cluster.hset(notes, name, value))
        await self._retrying(change, writing=True)

    async def _find_legacy(self, layout: bytes | None) -> bool:
        return False

    async def swap_many(
        self, writes: Sequence[Write], now: float, *, whole: bool = False
    ) -> list[bool | QuotaExceededError]:
        """One pipeline of ``SWAP`` scripts per primary, sent together (``Batch`` says what each reply made), tried
        again while slots move; with ``wait=N``, one ``WAIT`` per primary after its writes. ``whole``: one
        ``SWAP_ALL`` on the one slot they share (a value and its history share their owner's hash tag)."""
        if whole or not writes:
            return await super().swap_many(writes, now, whole=whole)
        margin = [repr(float(now)), str(EXPIRY_MARGIN_MS)]  # what ``_call`` puts first
        batch = Batch([([*margin, *args], keys) for args, keys in (self._swap_arguments(w, now) for w in writes)])
        try:
            await self._retrying(lambda: self._send(batch), writing=True)
        except StoreUnavailableError as exc:
            if exc.maybe_applied or not batch.made():
                raise
            message = f"{exc} ({batch.made()} of the {len(writes)} writes were made before)"
            raise StoreUnavailableError(message, maybe_applied=True) from exc.__cause__
        return swap_answers(batch.replies, writes)

    async def _send(self, batch: Batch) -> None:
        """The writes of ``batch`` not answered yet, one pipeline per primary that serves their slots now."""
        cluster, nodes = self._cluster_client, dict[str, tuple[ClusterNode, list[int]]]()
        with self._reaching():  # nothing is sent before the pipelines: a failure here changed nothing
            await cluster.initialize()  # the layout, if a failure asked for it to be learnt again
            for number in batch.pending():
                node = cluster.nodes_manager.get_node_from_slot(batch.slots[number])
                nodes.setdefault(node.name, (node, []))[1].append(number)
        wait = Replication(self._parsed.wait, self._parsed.wait_timeout_ms) if self._parsed.wait else None
        sha = self._scripts["SWAP"].sha
        groups = [
            (self._node_client(node.host, int(node.port), name), numbers) for name, (node, numbers) in nodes.items()
        ]
        replies = await asyncio.gather(
            *(node_pipeline(redis, sha, [batch.calls[n] for n in numbers], wait) for redis, numbers in groups),
            return_exceptions=True,
        )
        batch.begin()
        unloaded = []  # every node's replies are taken before anything else can fail
        for (redis, numbers), reply in zip(groups, replies, strict=True):
            if isinstance(reply, BaseException):
                batch.node_failed(numbers, reply)
            elif batch.node_answered(numbers, reply, wait):
                unloaded.append(redis)
        failure = batch.failure(self._where)
        if isinstance(failure, StoreUnavailableError):  # a write may have been made: said before anything can fail
            raise failure
        for redis in unloaded:
            with self._reaching():  # a replica promoted since the scripts were loaded
                await redis.script_load(self.SCRIPTS["SWAP"])
        if failure is not None:
            with self._reaching(writing=True):
                raise failure

    async def _call(
        self, script: str, now: float, *args: str | bytes, keys: Sequence[str] = (), writing: bool = True
    ) -> Any:
        """Run a script on the node of its keys, again while its slot moves; with ``wait=N``, then ``WAIT``."""
        full = [repr(float(now)), str(EXPIRY_MARGIN_MS), *args]
        if writing and self._parsed.wait and keys:
            return await self._retrying(lambda: self._replicated(script, keys, full), writing=True)
        run = self._scripts[script]
        return await self._retrying(lambda: run(keys=keys, args=full, client=self._cluster_client), writing=writing)

    async def _retrying(self, attempt: Callable[[], Awaitable[_T]], *, writing: bool) -> _T:
        """``attempt()`` again while the cluster is changing, for at most ``MOVING_SECONDS``.

        Only an attempt that certainly did not run is made again: one refused before it started (a moving slot,
        MOVED, CLUSTERDOWN, a replica's READONLY, no free connection), a write for which no connection could be
        made, or a read.
        A write that may have run is reported at once as possibly made, never sent a second time.
        """
        deadline, pause = time.monotonic() + MOVING_SECONDS, PAUSE_SECONDS
        while True:
            try:
                with self._reaching(writing=writing):
                    return await attempt()
            except StoreUnavailableError as exc:
                cause = exc.__cause__
                if exc.maybe_applied or not _passing(cause) or time.monotonic() + pause > deadline:
                    raise
                if _layout_changed(cause):
                    await self._cluster_client.aclose()  # the layout is learnt again at the next command
            await asyncio.sleep(pause)
            pause = min(pause * 2, LONGEST_PAUSE_SECONDS)

    async def _replicated(self, script: str, keys: Sequence[str], args: list[str | bytes]) -> Any:
        """The script, a write of the slot's own and ``WAIT`` on one connection to the keys' primary.

        ``WAIT`` counts the replicas that have this connection's last write, so the pipeline writes a short-lived
        key of the slot after the script: a script sent again that changes nothing (a resent swap) is then
        acknowledged only once a replica has everything before it too. Once the script has run, any failure of
        what follows says that the change may have been made.
        """
        cluster = self._cluster_client
        with self._reaching():  # nothing is sent before the script: a failure here changed nothing
            await cluster.initialize()  # the layout, if a failure asked for it to be learnt again
        node = cluster.get_node_from_key(keys[0])
        if node is None:
            raise redis_errors.SlotNotCoveredError(f"no node serves the slot of {keys[0]!r}")
        redis = self._node_client(node.host, int(node.port), node.name)
        stamp = keys[0][: keys[0].index("}") + 1] + ":w"  # prefix{group}:w, in the script's slot
        async with redis.pipeline(transaction=False) as pipe:
            pipe.evalsha(self._scripts[script].sha, len(keys), *keys, *args)
            pipe.set(stamp, b"1", px=1000)
            pipe.wait(self._parsed.wait, self._parsed.wait_timeout_ms)
            answer, stamped, replicas = await pipe.execute(raise_on_error=False)
        if isinstance(answer, redis_errors.NoScriptError):  # a replica promoted since the scripts were loaded
            with self._reaching():  # the script did not run
                await redis.script_load(self.SCRIPTS[script])
            raise redis_errors.TryAgainError("the script was loaded on this primary")
        if isinstance(answer, Exception):
            raise answer
        unconfirmed = next((reply for reply in (stamped, replicas) if isinstance(reply, Exception)), None)
        if unconfirmed is not None:
            why = f"its replication could not be confirmed ({unconfirmed})"
        elif int(replicas) < self._parsed.wait:
            why = (
                f"only {replicas} of the {self._parsed.wait} replicas asked for (wait=) had it within "
                f"{self._parsed.wait_timeout_ms} ms"
            )
        else:
            return answer
        message = f"Redis Cluster at {self._where}: the write reached the primary but {why}"
        raise StoreUnavailableError(message, maybe_applied=True)

    def _node_client(self, host: str, port: int, name: str) -> Redis:
        """A plain client of one primary, for ``swap_many``'s and ``wait=``'s pipelines."""
        redis = self._nodes.get(name)
        if redis is None:
            parsed = self._parsed
            redis = self._nodes[name] = Redis(
                host=host,
                port=port,
                username=parsed.username,
                password=parsed.password,
                ssl=parsed.tls,
                **_tls_arguments(parsed),
                socket_connect_timeout=TIMEOUT_SECONDS,
                socket_timeout=TIMEOUT_SECONDS + parsed.wait_timeout_ms / 1000,
                retry=Retry(NoBackoff(), 0),  # the store tries again, only what cannot have run
                max_connections=CONNECTIONS_PER_NODE,
            )
            redis.connection_pool.connection_class = reconnecting(ssl=parsed.tls)  # before any connection is made
        return redis

    @contextmanager
    def _reaching(self, *, writing: bool = False) -> Iterator[None]:
        try:
            with super()._reaching(writing=writing):
                yield
        except (redis_errors.ClusterError, redis_errors.RedisClusterException) as exc:
            message = f"Redis Cluster at {self._where} has no node for a slot now: {exc}"
            raise StoreUnavailableError(message) from exc

    def _declared(
        self, owner: str, bucket: str | None, key: str | None = None, written: bytes | None = None
    ) -> list[str]:
        base = self._base(owner)
        if bucket is None:
            return [f"{base}:o", f"{base}:f"]
        # ``base:f`` never exists: with it no script is ever a single-key one, so Redis refuses it outright
        # (TRYAGAIN) while its slot moves, instead of running it half on the node that keys are leaving.
        names = [f"{base}:{kind}:{bucket}" for kind in "izdxc"] + [f"{base}:o", f"{base}:f"]
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

        async def read() -> list[Any]:
            async with self._cluster_client.pipeline(transaction=False) as pipe:
                for name, address in zip(names, addresses, strict=True):
                    if address is not None:
                        owner, bucket, key = address
                        pipe.get(name)
                        pipe.hexists(f"{self._base(owner)}:d:{bucket}", key)
                        pipe.hget(f"{self._base(owner)}:c:{bucket}", key)
                return await pipe.execute()

        answers = await self._retrying(read, writing=False)
        records, replies = [], iter(answers)
        for address in addresses:
            if address is None:
                continue
            raw, has_postings, created = next(replies), next(replies), next(replies)
            entry = None if raw is None else wire.unpack(raw, created)
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
    def _cluster_client(self) -> ClusterClient:
        if self._cluster is None:
            raise RuntimeError(f"{self!r} is not open; call open() first")
        return self._cluster


def _layout_changed(cause: BaseException | None) -> bool:
    if isinstance(cause, redis_errors.MaxConnectionsError):
        return False  # the node is busy, not gone
    # redis-py's word for "no node answered while learning the layout"
    unreachable = type(cause) is redis_errors.RedisClusterException and "cannot be connected" in str(cause)
    return unreachable or isinstance(cause, _LAYOUT_CHANGED)


def _passing(cause: BaseException | None) -> bool:
    """Whether a failure that certainly changed nothing may pass by waiting (not a refused password, not a
    programming error such as keys of several slots in one script)."""
    if isinstance(cause, _REFUSED_ACCESS):
        return False
    return isinstance(cause, _BUSY) or _layout_changed(cause)


def _tls_arguments(parsed: ClusterURL) -> dict[str, Any]:
    """The URL's TLS options as redis-py's keyword arguments (its defaults for those not given)."""
    return dict(parsed.tls_options)


def _live_entry(raw: bytes, now: float) -> Entry | None:
    entry = wire.unpack(raw)
    return entry if entry is not None and entry.live(now) else None
