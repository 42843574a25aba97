"""Stores: opaque bytes at hashed addresses, with deadlines, quotas, compare-and-set and search postings, on five
backends (memory, SQLite, Redis, Redis Cluster, PostgreSQL) behind one ``Store`` interface.

The backends' modules load on first use (redis-py, psycopg and their pools are imported only by a server that
uses them); ``make_store`` (``mcpkit_storage``) picks one from a ``StoreConfig``.
"""

from typing import TYPE_CHECKING, Any

from ._cluster_url import parse_cluster_url
from ._private_files import read_secret_file, secret_beside
from ._redacted import without_password
from ._store import (
    INDEX_BYTES_PER_WORD,
    Address,
    Entry,
    Expectation,
    Postings,
    Quota,
    QuotaExceededError,
    Store,
    StoreUnavailableError,
)

if TYPE_CHECKING:
    from ._memory_store import MemoryStore
    from ._postgres_store import PostgresStore
    from ._redis_cluster_store import RedisClusterStore
    from ._redis_store import RedisStore
    from ._sqlite_store import SQLiteStore

__all__ = [
    "INDEX_BYTES_PER_WORD",
    "Address",
    "Entry",
    "Expectation",
    "MemoryStore",
    "PostgresStore",
    "Postings",
    "Quota",
    "QuotaExceededError",
    "RedisClusterStore",
    "RedisStore",
    "SQLiteStore",
    "Store",
    "StoreUnavailableError",
    "parse_cluster_url",
    "read_secret_file",
    "secret_beside",
    "without_password",
]

#: Each backend, and the private module that holds it.
_BACKENDS = {
    "MemoryStore": "_memory_store",
    "SQLiteStore": "_sqlite_store",
    "RedisStore": "_redis_store",
    "RedisClusterStore": "_redis_cluster_store",
    "PostgresStore": "_postgres_store",
}


def __getattr__(name: str) -> Any:
    module = _BACKENDS.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpkit_storage.stores' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
