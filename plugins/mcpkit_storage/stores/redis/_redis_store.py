"""The Redis store: values shared by every server process that points at one Redis."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, ClassVar, cast

from redis import exceptions as redis_errors
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.commands.core import AsyncScript

from mcpkit_search import Stats

from .. import (
    Address,
    Entry,
    Expectation,
    Postings,
    Quota,
    QuotaExceededError,
    Ranking,
    Record,
    StoreUnavailableError,
    Write,
)
from . import _redis_scripts as lua
from . import _redis_wire as wire
from ._redis_pipeline import pipelined, swap_answers

__all__ = ["RedisStore"]

TIMEOUT_SECONDS = 2.0
HEALTH_CHECK_SECONDS = 15
SCAN_COUNT = 1000
#: Added to every expiry Redis applies by itself, so a value is never reclaimed before its deadline.
EXPIRY_MARGIN_MS = 1000
#: How long the first start may look for entries written by mcpkit 0.1 before assuming there are some.
LEGACY_SCAN_SECONDS = 2.0

#: Layout marker values: "1" entries of mcpkit 0.1 are (or may be) there, "2" none are.
_LAYOUT_LEGACY, _LAYOUT_CURRENT = b"1", b"2"
#: Buckets of mcpkit 0.1 were scope names (user, session, global, tool.*, memory.*); hashed ones are hex.
_LEGACY_BUCKET_START = "[gmstu]"


class RedisStore:
    """Keeps entries in the Redis at ``url``, every key under ``prefix``."""

    #: The Lua scripts, by name (``RedisClusterStore`` has its own).
    SCRIPTS: ClassVar[dict[str, str]] = lua.STANDALONE
    #: What the owner part of a key name looks like, for SCAN: the hash tag ``{owner}``.
    _OWNER_GLOB: ClassVar[str] = "{*}"

    def __init__(self, url: str, *, prefix: str = "mcpkit:remember:") -> None:
        if "{" in prefix or "}" in prefix:
            raise ValueError(f"RedisStore prefix {prefix!r} must not contain '{{' or '}}' (hash tags)")
        self._url = url
        self._where = wire.redacted(url)
        self._prefix = prefix
        self._notes = f"{prefix}notes"  # the hash of the store's notes: outside every owner's keys, never SCANned
        self._layout = f"{prefix}layout"
        self._client: Redis | None = None
        self._scripts: dict[str, AsyncScript] = {}
        self.legacy, self.placed, self.narrows = False, False, True

    def __repr__(self) -> str:
        return f"RedisStore({self._where!r}, prefix={self._prefix!r})"

    async def open(self) -> None:
        """Connect, ping, load the scripts and read the layout in one round trip; refuse a cluster."""
        if self._client is not None:
            return
        client = Redis.from_url(
            self._url,
            socket_connect_timeout=TIMEOUT_SECONDS,
            socket_timeout=TIMEOUT_SECONDS,
            health_check_interval=HEALTH_CHECK_SECONDS,
            # One immediate retry replaces a connection Redis dropped (e.g. after a restart).
            # Timeouts are not retried: the script may have run, and swap must not run twice.
            retry=Retry(NoBackoff(), 1, supported_errors=(redis_errors.ConnectionError,)),
        )
        scripts = {name: client.register_script(text) for name, text in self.SCRIPTS.items()}
        try:
            with self._reaching():
                async with client.pipeline(transaction=False) as pipe:
                    pipe.info("cluster")
                    pipe.get(self._layout)
                    for script in scripts.values():
                        pipe.script_load(script.script)
                    answers = await pipe.execute(raise_on_error=False)
                cluster, layout = answers[:2]
                if isinstance(cluster, dict) and cluster.get("cluster_enabled"):
                    raise StoreUnavailableError(
                        f"Redis at {self._where} is a Redis Cluster node; name the cluster's nodes in a "
                        "redis+cluster:// URL instead (REMEMBER_STORE=redis+cluster://HOST:PORT,HOST:PORT)."
                    )
                for answer in answers:
                    if isinstance(answer, Exception):
                        raise answer
            self._client, self._scripts = client, scripts
            self.legacy = layout != _LAYOUT_CURRENT and await self._find_legacy(layout)
        except BaseException:
            self._client = None
            await client.aclose()
            raise

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def settle_legacy(self) -> None:
        with self._reaching(writing=True):
            await self._redis.set(self._layout, _LAYOUT_CURRENT)
        self.legacy = False

    async def notes(self) -> dict[str, str]:
        with self._reaching():
            return wire.texts(await self._redis.hgetall(self._notes))

    async def note(self, name: str, value: str | None) -> None:
        with self._reaching(writing=True):
            await (self._redis.hdel(self._notes, name) if value is None else self._redis.hset(self._notes, name, value))

    async def get(self, owner: str, bucket: str, key: str, now: float) -> Entry | None:
        with self._reaching():
            raw = cast("bytes | None", await self._redis.get(self._value(owner, bucket, key)))
        return wire.live(raw, now)

    async def get_many(self, addresses: Sequence[Address], now: float) -> list[Entry | None]:
        if not addresses:
            return []
        with self._reaching():
            raws = cast("list[bytes | None]", await self._redis.mget([self._value(*a) for a in addresses]))
        return [wire.live(raw, now) for raw in raws]

    async def get_many_created(self, addresses: Sequence[Address], now: float) -> list[Entry | None]:
        with self._reaching():
            return await wire.read_dated(self._redis, self._dated(addresses), now)

    async def put(
        self,
        owner: str,
        bucket: str,
        key: str,
        data: bytes,
        expires_at: float | None,
        now: float,
        quota: Quota | None = None,
        index: Postings | None = None,
        *,
        created: float | None = None,
    ) -> None:
        self._check(owner, bucket)
        base, margin = self._base(owner), EXPIRY_MARGIN_MS
        args = wire.writing(base, bucket, key, data, expires_at, now, quota, index, margin, created)
        wire.outcome(await self._call("PUT", now, *args, keys=self._declared(owner, bucket, key)), quota)

    async def delete(self, owner: str, bucket: str, key: str, now: float) -> bool:
        return await self.delete_many([Address(owner, bucket, key)], now) == 1

    async def delete_many(self, addresses: Sequence[Address], now: float) -> int:
        args: list[str | bytes] = [str(len(addresses))]
        keys: list[str] = []
        for owner, bucket, key in addresses:
            self._check(owner, bucket)
            args += [self._base(owner), bucket, key]
            keys += self._declared(owner, bucket, key)
        return int(await self._call("DELETE_MANY", now, *args, keys=keys))

    async def entries(self, owner: str, bucket: str, now: float) -> list[tuple[str, Entry]]:
        self._check(owner, bucket)
        flat = await self._call(
            "ENTRIES", now, self._base(owner), bucket, keys=self._declared(owner, bucket), writing=False
        )
        found = []
        for index in range(0, len(flat), 2):
            entry = wire.live(flat[index + 1], now)
            if entry is not None:
                found.append((flat[index].decode(), entry))
        return sorted(found)

    async def delete_bucket(self, owner: str, bucket: str, now: float) -> int:
        self._check(owner, bucket)
        keys = self._declared(owner, bucket)
        return int(await self._call("DELETE_BUCKET", now, self._base(owner), bucket, keys=keys))

    async def delete_owner(self, owner: str) -> int:
        self._check(owner, "")
        return int(await self._call("DELETE_OWNER", 0.0, self._base(owner), keys=self._declared(owner, None)))

    async def swap(
        self,
        owner: str,
        bucket: str,
        key: str,
        expected: bytes | None,
        data: bytes,
        expires_at: float | None,
        now: float,
        *,
        also: Sequence[Expectation] = (),
        quota: Quota | None = None,
        index: Postings | None = None,
        created: float | None = None,
    ) -> bool:
        write = Write(owner, bucket, key, expected, data, expires_at, also, quota, index, created)
        args, keys = self._swap_arguments(write, now)
        return wire.outcome(await self._call("SWAP", now, *args, keys=keys), quota)

    async def swap_many(
        self, writes: Sequence[Write], now: float, *, whole: bool = False
    ) -> list[bool | QuotaExceededError]:
        """Each write by its own ``SWAP`` script (each atomic, as ``swap``), all in one pipeline: one round trip;
        ``whole``: all of them by one ``SWAP_ALL`` script (one round trip; on a cluster, all in one hash slot)."""
        if not writes:
            return []
        if whole:
            args: list[str | bytes] = [str(len(writes))]
            keys: list[str] = []
            for write in writes:
                more, declared = self._swap_arguments(write, now)
                args += more
                keys += declared
            code, which = await self._call("SWAP_ALL", now, *args, keys=list(dict.fromkeys(keys)))
            return wire.outcomes(int(code), int(which), [write.quota for write in writes])
        margin = [repr(float(now)), str(EXPIRY_MARGIN_MS)]  # what ``_call`` puts first
        calls = [([*margin, *args], keys) for args, keys in (self._swap_arguments(write, now) for write in writes)]
        with self._reaching(writing=True):
            codes = await pipelined(self._redis, self._scripts["SWAP"], calls)
        return swap_answers(codes, writes)

    def _swap_arguments(self, write: Write, now: float) -> tuple[list[str | bytes], list[str]]:
        """The ``SWAP`` script's arguments (after the time and margin) and declared keys for one write."""
        owner, bucket, key, expected, data, expires_at, also, quota, index, created = write
        self._check(owner, bucket)
        base, margin = self._base(owner), EXPIRY_MARGIN_MS
        writing = wire.writing(base, bucket, key, data, expires_at, now, quota, index, margin, created)
        args = [*writing, *wire.expecting(expected), str(len(also))]
        keys = self._declared(owner, bucket, key, written=cast("bytes", writing[3]))
        for (other_owner, other_bucket, other_key), bytes_there in also:
            self._check(other_owner, other_bucket)
            args += [self._base(other_owner), other_bucket, other_key, *wire.expecting(bytes_there)]
            keys += self._declared(other_owner, other_bucket, other_key)
        return args, keys

    async def search(
        self,
        owner: str,
        bucket: str,
        terms: Sequence[int],
        now: float,
        *,
        limit: int,
        stats: Stats | None = None,
        within: Sequence[Sequence[int]] = (),
    ) -> Ranking:
        """One round trip: the SEARCH script drops the bucket's expired entries, counts and scores in Redis, and
        keeps only the values holding a term of every group of ``within`` (``NarrowingStore``)."""
        self._check(owner, bucket)
        args = wire.searching(self._base(owner), bucket, terms, limit, stats, within)
        return wire.ranking(await self._call("SEARCH", now, *args, keys=self._declared(owner, bucket)), len(terms))

    async def scan(self) -> AsyncIterator[Record]:
        """Every value under the prefix, via SCAN (operator commands only: it walks the keyspace)."""
        batch: list[bytes] = []
        with self._reaching():
            async for name in self._redis.scan_iter(match=self._pattern("v"), count=SCAN_COUNT, _type="string"):
                batch.append(name)
                if len(batch) == SCAN_COUNT:
                    for record in await self._records(batch):
                        yield record
                    batch = []
        for record in await self._records(batch):
            yield record

    async def purge_expired(self, now: float) -> int:
        """Delete values past ``now`` bucket by bucket (Redis' own expiry usually got there first); it SCANs the
        keyspace for this prefix's indexes, so run it as maintenance, not per request."""
        gone = 0
        with self._reaching():
            async for name in self._redis.scan_iter(match=self._pattern("i"), count=SCAN_COUNT, _type="zset"):
                address = self._parse(name, "i")
                if address is not None:
                    owner, bucket, _ = address
                    keys = self._declared(owner, bucket)
                    gone += int(await self._call("PURGE", now, self._base(owner), bucket, keys=keys))
        return gone

    async def _find_legacy(self, layout: bytes | None) -> bool:
        """Whether mcpkit 0.1 entries may be here; a first start looks (briefly) and records the answer."""
        if layout == _LAYOUT_LEGACY:
            return True
        deadline = time.monotonic() + LEGACY_SCAN_SECONDS
        pattern = self._pattern("v") + _LEGACY_BUCKET_START + "*"
        cursor: int = 0
        with self._reaching():
            while True:
                cursor, names = await self._redis.scan(cursor, match=pattern, count=SCAN_COUNT, _type="string")
                if names:
                    await self._redis.set(self._layout, _LAYOUT_LEGACY)
                    return True
                if cursor == 0:
                    await self._redis.set(self._layout, _LAYOUT_CURRENT, nx=True)
                    return False
                if time.monotonic() > deadline:
                    return True  # too big a keyspace to be sure now: assume so, and look again at the next start

    async def _call(
        self, script: str, now: float, *args: str | bytes, keys: Sequence[str] = (), writing: bool = True
    ) -> Any:
        with self._reaching(writing=writing):
            return await self._scripts[script](
                keys=keys, args=[repr(float(now)), str(EXPIRY_MARGIN_MS), *args], client=self._redis
            )

    def _declared(
        self, owner: str, bucket: str | None, key: str | None = None, written: bytes | None = None
    ) -> list[str]:
        """The keys a script must declare for ``owner``'s ``bucket`` (and ``key``); one node needs none."""
        return []

    async def _records(self, names: list[bytes]) -> list[Record]:
        if not names:
            return []
        addresses = [self._parse(name, "v") for name in names]
        with self._reaching():
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.mget(names)
                for address in addresses:
                    if address is not None:
                        owner, bucket, key = address
                        pipe.hexists(f"{self._base(owner)}:d:{bucket}", key)
                        pipe.hget(f"{self._base(owner)}:c:{bucket}", key)
                raws, *indexed = await pipe.execute()
        records, flags = [], iter(indexed)
        for address, raw in zip(addresses, cast("list[bytes | None]", raws), strict=True):
            if address is None:
                continue
            has_postings, created = bool(next(flags)), next(flags)
            entry = None if raw is None else wire.unpack(raw, created)
            if entry is not None:
                records.append(Record(*address, entry, has_postings))
        return records

    def _check(self, owner: str, bucket: str) -> None:
        if not owner or "{" in owner or "}" in owner:
            raise ValueError(f"RedisStore owner {owner!r} must be non-empty and free of '{{' and '}}'")
        if ":" in bucket:
            raise ValueError(f"RedisStore bucket {bucket!r} must not contain ':'")

    def _base(self, owner: str) -> str:
        return f"{self._prefix}{{{owner}}}"

    def _dated(self, addresses: Sequence[Address]) -> list[tuple[str, str, str]]:
        """What ``wire.read_dated`` reads for each address: its value's name, its bucket's created hash, its key."""
        return [(self._value(*a), f"{self._base(a.owner)}:c:{a.bucket}", a.key) for a in addresses]

    def _value(self, owner: str, bucket: str, key: str) -> str:
        self._check(owner, bucket)
        return f"{self._base(owner)}:v:{bucket}:{key}"

    def _pattern(self, kind: str) -> str:
        """SCAN pattern for this prefix's values (``v``) or indexes (``i``)."""
        escaped = "".join(f"\\{c}" if c in "\\*?[]" else c for c in self._prefix)
        return f"{escaped}{self._OWNER_GLOB}:{kind}:*"

    def _parse(self, name: bytes, kind: str) -> tuple[str, str, str] | None:
        """(owner, bucket, key) from a key name; owners hold no '}' and buckets no ':'."""
        try:
            text = name.decode()
        except UnicodeDecodeError:
            return None
        if not text.startswith(self._prefix + "{"):
            return None
        split = self._split_owner(text[len(self._prefix) + 1 :])
        if split is None or not split[1].startswith(f":{kind}:"):
            return None
        owner, rest = split
        bucket, _, key = rest[len(kind) + 2 :].partition(":")
        return owner, bucket, key

    def _split_owner(self, text: str) -> tuple[str, str] | None:
        """The owner and what follows it, in a key name after the prefix and the '{'."""
        owner, _, rest = text.partition("}")
        return owner, rest

    @property
    def _redis(self) -> Redis:
        if self._client is None:
            raise RuntimeError(f"{self!r} is not open; call open() first")
        return self._client

    def _reaching(self, *, writing: bool = False) -> AbstractContextManager[None]:
        """Failures reaching Redis as StoreUnavailableError naming the (redacted) URL (``wire.reaching``)."""
        return wire.reaching(self._where, writing=writing)
