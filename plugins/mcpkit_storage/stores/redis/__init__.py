"""The Redis and Redis Cluster stores: one layout and one set of Lua scripts, on one server or spread over a cluster."""

from ._cluster_url import parse_cluster_url
from ._redis_cluster_store import RedisClusterStore
from ._redis_store import RedisStore

__all__ = [
    "RedisClusterStore",
    "RedisStore",
    "parse_cluster_url",
]
