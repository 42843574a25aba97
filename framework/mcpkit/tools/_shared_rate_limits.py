"""Rate limits shared by every instance of a server: the token buckets of ``_rate_limits`` kept in Redis and spent
by one Lua script, falling back to each instance's own while Redis is away (docs/architecture.md, "Rate limits")."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Hashable, Sequence
from typing import Any, cast
from urllib.parse import urlsplit

from ..base import ConfigurationError
from ._rate_limits import RateLimit, RateLimiter

__all__ = ["SharedRateLimiter", "checked_rate_limit_store"]

_log = logging.getLogger("mcpkit.rate_limits")

#: After Redis failed, the in-process buckets are used for this long before Redis is tried again.
RETRY_SECONDS = 5.0
#: A call waits at most this long for Redis (connecting, or the script) before counting in process.
TIMEOUT_SECONDS = 0.5

_SCRIPT = """
local now = redis.call('TIME')
now = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local levels, wait, refusing = {}, 0, -1
for i = 1, #KEYS do
  local calls, period = tonumber(ARGV[2 * i - 1]), tonumber(ARGV[2 * i])
  local rate = calls / period
  local held = redis.call('HMGET', KEYS[i], 'tokens', 'at')
  local tokens = tonumber(held[1]) or calls
  local at = tonumber(held[2]) or now
  tokens = math.min(calls, tokens + math.max(0, now - at) * rate)
  levels[i] = tokens
  if tokens < 1 and (1 - tokens) / rate > wait then
    wait, refusing = (1 - tokens) / rate, i - 1
  end
end
if refusing < 0 then
  for i = 1, #KEYS do
    redis.call('HSET', KEYS[i], 'tokens', tostring(levels[i] - 1), 'at', tostring(now))
    redis.call('PEXPIRE', KEYS[i], ARGV[2 * i])
  end
end
return {refusing, tostring(wait)}
"""


def checked_rate_limit_store(url: object) -> str | None:
    """``rate_limit_store`` as given when it is a Redis URL (or None); a ConfigurationError otherwise."""
    if url is None:
        return None
    if not isinstance(url, str) or urlsplit(url).scheme not in ("redis", "rediss", "unix"):
        raise ConfigurationError(
            "Server(rate_limit_store=...) is a Redis URL, like 'redis://127.0.0.1:6379/0' (rediss:// for TLS), "
            f"not {url!r:.60}; leave it out to keep rate limits in this process."
        )
    return url


class SharedRateLimiter:
    """The buckets of every instance that names the same Redis and server name; in process while Redis is out."""

    def __init__(self, url: str, server_name: str) -> None:
        self._url = url
        self._prefix = f"mcpkit:ratelimit:{server_name}:"
        self._local = RateLimiter()
        self._client: Any = None
        self._script: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._retry_at = 0.0  # monotonic time before which Redis is not tried again

    async def take(self, wanted: Sequence[tuple[Hashable, RateLimit]], now: float) -> tuple[float, int]:
        """As ``RateLimiter.take``: (0, -1) when one call was spent from every bucket, else (wait, which)."""
        if now >= self._retry_at:
            try:
                async with asyncio.timeout(TIMEOUT_SECONDS):
                    return await self._take_shared(wanted)
            except (OSError, TimeoutError) as exc:
                self._failed(exc, now)
            except Exception as exc:  # redis.RedisError: not imported until a store is configured
                if not _is_redis_error(exc):
                    raise
                self._failed(exc, now)
        return self._local.take(wanted, now)

    async def aclose(self) -> None:
        client, self._client, self._script, self._loop = self._client, None, None, None
        if client is not None:
            await client.aclose()

    async def _take_shared(self, wanted: Sequence[tuple[Hashable, RateLimit]]) -> tuple[float, int]:
        script = self._bound_script()
        keys = [self._key(key) for key, _ in wanted]
        limits = [str(value) for _, limit in wanted for value in (limit.calls, round(limit.per_seconds * 1000))]
        refusing, wait = await script(keys=keys, args=limits)
        if int(refusing) < 0:
            return 0.0, -1
        return max(float(wait) / 1000, 0.001), int(refusing)

    def _bound_script(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:  # a client belongs to the loop it connected in
            import redis.asyncio

            self._client = redis.asyncio.Redis.from_url(
                self._url, socket_timeout=TIMEOUT_SECONDS, socket_connect_timeout=TIMEOUT_SECONDS
            )
            self._script = self._client.register_script(_SCRIPT)
            self._loop = loop
        return self._script

    def _key(self, key: Hashable) -> str:
        """``prefix{caller digest}:bucket``: one hash slot per caller, and no caller id in Redis."""
        (kind, caller), bucket = cast(tuple[tuple[str, str], str], key)  # the dispatcher's ((kind, id), tool)
        digest = hashlib.sha256(f"{kind}\0{caller}".encode()).hexdigest()[:32]
        return f"{self._prefix}{{{digest}}}:{bucket or '*'}"

    def _failed(self, error: BaseException, now: float) -> None:
        if now >= self._retry_at:
            why = f"cannot be reached ({type(error).__name__})"
            if _is_cluster_refusal(error):
                why = "is a Redis Cluster node, and rate_limit_store takes one Redis node (not a cluster)"
            _log.warning(
                "Rate limits: Redis at %s %s; counting calls in this process for %.0f s.",
                _redacted(self._url),
                why,
                RETRY_SECONDS,
            )
        self._retry_at = now + RETRY_SECONDS


def _is_redis_error(error: BaseException) -> bool:
    import redis

    return isinstance(error, redis.RedisError)


def _is_cluster_refusal(error: BaseException) -> bool:
    from redis import exceptions

    return isinstance(error, (exceptions.AskError, exceptions.ClusterDownError))  # MovedError is an AskError


def _redacted(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    return f"{parts.scheme}://{host}{f':{parts.port}' if parts.port else ''}{parts.path}"
