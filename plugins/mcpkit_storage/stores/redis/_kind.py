"""The Redis and Redis Cluster stores' registrations: their URLs, and how each is made once a server uses one."""

from __future__ import annotations

from mcpkit import ConfigurationError

from .. import Store, StoreKind, register_store, without_password
from ._cluster_url import parse_cluster_url

__all__ = ["REDIS", "REDIS_CLUSTER"]


def _make_redis(where: str, *, prefix: str, create: bool) -> Store:
    from ._redis_store import RedisStore  # redis-py loads only for a server that uses it

    return RedisStore(where, prefix=prefix)


def _make_cluster(where: str, *, prefix: str, create: bool) -> Store:
    from ._redis_cluster_store import RedisClusterStore

    return RedisClusterStore(where, prefix=prefix)


def _cluster_url(url: str) -> str:
    """``url`` if it names a Redis Cluster well, else a ConfigurationError saying what is wrong."""
    try:
        parse_cluster_url(url)
    except ValueError as exc:
        raise ConfigurationError(f"Store {without_password(url)!r}: {exc}.") from None
    return url


REDIS = register_store(
    StoreKind(
        name="redis",
        label="Redis",
        make=_make_redis,
        schemes=("redis://", "rediss://", "unix://"),
        examples=("redis://HOST:PORT/DB",),
        expires=True,
    )
)
REDIS_CLUSTER = register_store(
    StoreKind(
        name="redis-cluster",
        db_system="redis",
        label="Redis Cluster",
        make=_make_cluster,
        schemes=("redis+cluster://", "rediss+cluster://"),
        examples=("redis+cluster://HOST:PORT,HOST:PORT",),
        locate=_cluster_url,
        expires=True,
        placed=True,
    )
)
