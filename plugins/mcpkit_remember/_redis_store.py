"""The Redis store: values shared by every server process that points at one Redis.

Each call is one round trip: plain GET/GETRANGE for reads, one Lua script
(EVALSHA) for every write, so ``swap`` is atomic across processes. The key
layout is described in ``_redis_scripts``. Deadlines are embedded in the
value and checked against the framework's ``now``; Redis' own expiry
(PEXPIREAT at the deadline) only reclaims the memory.
"""

from __future__ import annotations

import math
import struct
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, cast
from urllib.parse import urlsplit

from redis import exceptions as redis_errors
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.commands.core import AsyncScript

from mcpkit_remember import _redis_scripts as lua
from mcpkit_remember._store import Entry, Record, StoreUnavailableError

__all__ = ["RedisStore"]

TIMEOUT_SECONDS = 2.0
HEALTH_CHECK_SECONDS = 15
SCAN_COUNT = 1000

_HEADER = struct.Struct(">d")
_UNREACHABLE = (redis_errors.ConnectionError, redis_errors.TimeoutError, OSError)


class RedisStore:
    """Keeps entries in the Redis at ``url``, every key under ``prefix``."""

    def __init__(self, url: str, *, prefix: str = "mcpkit:remember:") -> None:
        if "{" in prefix or "}" in prefix:
            raise ValueError(f"RedisStore prefix {prefix!r} must not contain '{{' or '}}' (hash tags)")
        self._url = url
        self._where = _redacted(url)
        self._prefix = prefix
        self._client: Redis | None = None
        self._scripts: dict[str, AsyncScript] = {}

    def __repr__(self) -> str:
        return f"RedisStore({self._where!r}, prefix={self._prefix!r})"

    async def open(self) -> None:
        """Connect, ping and load the scripts in one round trip; unreachable Redis raises."""
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
        scripts = {name: client.register_script(getattr(lua, name)) for name in lua.__all__}
        try:
            with self._reaching():
                async with client.pipeline(transaction=False) as pipe:
                    pipe.ping()
                    for script in scripts.values():
                        pipe.script_load(script.script)
                    await pipe.execute()
        except BaseException:
            await client.aclose()
            raise
        self._client, self._scripts = client, scripts

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def get(self, owner: str, bucket: str, key: str, now: float) -> Entry | None:
        with self._reaching():
            raw = cast("bytes | None", await self._redis.get(self._value(owner, bucket, key)))
        entry = None if raw is None else _unpack(raw)
        return entry if entry is not None and entry.live(now) else None

    async def put(self, owner: str, bucket: str, key: str, data: bytes, expires_at: float | None, now: float) -> None:
        await self._write("PUT", owner, bucket, key, data, expires_at, now)

    async def delete(self, owner: str, bucket: str, key: str, now: float) -> bool:
        keys = [self._value(owner, bucket, key), self._index(owner, bucket), self._buckets(owner)]
        return bool(await self._call("DELETE", keys, owner, bucket, now, key))

    async def exists(self, owner: str, bucket: str, key: str, now: float) -> bool:
        with self._reaching():
            name = self._value(owner, bucket, key)
            header = cast(bytes, await self._redis.getrange(name, 0, _HEADER.size - 1))
        return len(header) == _HEADER.size and _HEADER.unpack(header)[0] > now

    async def keys(self, owner: str, bucket: str, now: float) -> list[str]:
        keys = [self._index(owner, bucket), self._buckets(owner)]
        members = await self._call("KEYS", keys, owner, bucket, now)
        return sorted(member.decode() for member in members)

    async def delete_bucket(self, owner: str, bucket: str, now: float) -> int:
        keys = [self._index(owner, bucket), self._buckets(owner)]
        return int(await self._call("DELETE_BUCKET", keys, owner, bucket, now))

    async def delete_owner(self, owner: str) -> int:
        self._check(owner, "")
        return int(await self._call("DELETE_OWNER", [self._buckets(owner)], owner, "", 0.0))

    async def swap(
        self,
        owner: str,
        bucket: str,
        key: str,
        expected: bytes | None,
        data: bytes,
        expires_at: float | None,
        now: float,
    ) -> bool:
        if expected is None:
            return await self._write("SWAP", owner, bucket, key, data, expires_at, now, "0", b"")
        return await self._write("SWAP", owner, bucket, key, data, expires_at, now, "1", expected)

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
        """Delete values past ``now`` bucket by bucket; Redis' own expiry usually got there first.

        It SCANs the keyspace for this prefix's indexes, so run it as maintenance, not per request.
        """
        gone = 0
        with self._reaching():
            async for name in self._redis.scan_iter(match=self._pattern("i"), count=SCAN_COUNT, _type="zset"):
                address = self._parse(name, "i")
                if address is not None:
                    owner, bucket, _ = address
                    keys = [name, self._buckets(owner)]
                    gone += int(await self._call("PURGE", keys, owner, bucket, now))
        return gone

    async def _write(
        self,
        script: str,
        owner: str,
        bucket: str,
        key: str,
        data: bytes,
        expires_at: float | None,
        now: float,
        *extra: str | bytes,
    ) -> bool:
        keys = [self._value(owner, bucket, key), self._index(owner, bucket), self._buckets(owner)]
        value = _HEADER.pack(math.inf if expires_at is None else expires_at) + data
        pxat = "" if expires_at is None else str(math.ceil(expires_at * 1000))
        score = "inf" if expires_at is None else repr(float(expires_at))
        args = [key, value, pxat, score, *extra]
        return bool(await self._call(script, keys, owner, bucket, now, *args))

    async def _call(
        self,
        script: str,
        keys: Sequence[str | bytes],
        owner: str,
        bucket: str,
        now: float,
        *args: str | bytes,
    ) -> Any:
        args = (self._base(owner), bucket, repr(float(now)), *args)
        with self._reaching(writing=script != "KEYS"):
            return await self._scripts[script](keys=keys, args=args, client=self._redis)

    async def _records(self, names: list[bytes]) -> list[Record]:
        if not names:
            return []
        with self._reaching():
            raws = cast("list[bytes | None]", await self._redis.mget(names))
        records = []
        for name, raw in zip(names, raws, strict=True):
            address = self._parse(name, "v")
            entry = None if raw is None else _unpack(raw)
            if address is not None and entry is not None:
                records.append(Record(*address, entry))
        return records

    def _check(self, owner: str, bucket: str) -> None:
        if not owner or "{" in owner or "}" in owner:
            raise ValueError(f"RedisStore owner {owner!r} must be non-empty and free of '{{' and '}}'")
        if ":" in bucket:
            raise ValueError(f"RedisStore bucket {bucket!r} must not contain ':'")

    def _base(self, owner: str) -> str:
        return f"{self._prefix}{{{owner}}}"

    def _value(self, owner: str, bucket: str, key: str) -> str:
        self._check(owner, bucket)
        return f"{self._base(owner)}:v:{bucket}:{key}"

    def _index(self, owner: str, bucket: str) -> str:
        self._check(owner, bucket)
        return f"{self._base(owner)}:i:{bucket}"

    def _buckets(self, owner: str) -> str:
        return f"{self._base(owner)}:b"

    def _pattern(self, kind: str) -> str:
        """SCAN pattern for this prefix's values (``v``) or indexes (``i``)."""
        escaped = "".join(f"\\{c}" if c in "\\*?[]" else c for c in self._prefix)
        return f"{escaped}{{*}}:{kind}:*"

    def _parse(self, name: bytes, kind: str) -> tuple[str, str, str] | None:
        """(owner, bucket, key) from a key name; owners hold no '}' and buckets no ':'."""
        try:
            text = name.decode()
        except UnicodeDecodeError:
            return None
        if not text.startswith(self._prefix + "{"):
            return None
        owner, _, rest = text[len(self._prefix) + 1 :].partition("}")
        if not rest.startswith(f":{kind}:"):
            return None
        bucket, _, key = rest[len(kind) + 2 :].partition(":")
        return owner, bucket, key

    @property
    def _redis(self) -> Redis:
        if self._client is None:
            raise RuntimeError(f"{self!r} is not open; call open() first")
        return self._client

    @contextmanager
    def _reaching(self, *, writing: bool = False) -> Iterator[None]:
        """Turn connection failures into StoreUnavailableError naming the (redacted) URL.

        A write that failed after it was sent may have run (a frozen Redis runs it from its socket
        buffer once it thaws; a dropped connection may drop only the reply), so the error then says
        the change may have been made. Only a write for which no connection could be made did not.
        """
        try:
            yield
        except _UNREACHABLE as exc:
            maybe_applied = writing and not _never_sent(exc)
            message = f"Redis at {self._where} is unreachable: {exc}"
            raise StoreUnavailableError(message, maybe_applied=maybe_applied) from exc


def _never_sent(exc: BaseException) -> bool:
    """Whether a failed command cannot have reached Redis: no connection could be made for it.

    Any other failure (a timeout, a connection dropped after the command was written) may
    come after Redis ran it.
    """
    return "connecting to" in str(exc)


def _unpack(raw: bytes) -> Entry | None:
    """The entry packed in value bytes, or None for bytes this store did not write."""
    if len(raw) < _HEADER.size:
        return None
    (deadline,) = _HEADER.unpack_from(raw)
    return Entry(raw[_HEADER.size :], None if deadline == math.inf else deadline)


def _redacted(url: str) -> str:
    """The URL without password or query, safe for error messages and logs."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:  # not a number: say nothing rather than echo what may be a secret
        port = ""
    user = f"{parts.username}@" if parts.username else ""
    return f"{parts.scheme}://{user}{host}{port}{parts.path}"
