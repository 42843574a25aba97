"""The Redis and Redis Cluster stores: one layout and one set of Lua scripts, on one server or spread over a cluster."""

from ._kind import REDIS, REDIS_CLUSTER

__all__ = ["REDIS", "REDIS_CLUSTER"]
