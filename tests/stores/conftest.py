"""The stores under test: every contract test runs against memory, SQLite, a real Redis, a real Redis Cluster
(three primaries, three replicas), a real PostgreSQL, and the tests' toy store, made through the store registry.

The owners are in a placed keyring's form (``group.hash``, one group), which every store takes and a Redis
Cluster store needs: one owner group shares one hash slot.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

import mcpkit_storage
from mcpkit_storage.stores._store import Store
from mcpkit_storage.stores.memory._memory_store import MemoryStore
from mcpkit_storage.stores.redis._redis_store import RedisStore
from mcpkit_storage.stores.sqlite._sqlite_index import MERGE_EVERY
from mcpkit_storage.stores.sqlite._sqlite_store import SQLiteStore
from stores.toy import toy_registered  # noqa: F401  the fixture

OWNER = "0f3.0f3c9a1b2d4e5f60718293a4b5c6d7e8"
OTHER = "0f3.99999999999999999999999999999999"

MakeStore = Callable[[], Store]


@pytest.fixture(params=["memory", "sqlite", "sqlite-merged", "redis", "redis-cluster", "postgres", "toy"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> MakeStore:
    """A factory of store objects that all see the same data (one file, one Redis prefix).

    ``sqlite`` keeps a test's few postings fresh (``MERGE_EVERY`` is far off); ``sqlite-merged`` merges its
    search index at every change, so the same tests also run on merged and stale postings.
    """
    if request.param == "memory":
        shared = MemoryStore()
        return lambda: shared
    if request.param == "toy":  # known only by registration: made the way a server makes its store
        request.getfixturevalue("toy_registered")
        config = mcpkit_storage.parse_store_url(f"toy://{tmp_path.name}")
        return lambda: mcpkit_storage.make_store(config, "")
    if request.param.startswith("sqlite"):
        path, merge_every = tmp_path / "remember.db", 1 if request.param == "sqlite-merged" else MERGE_EVERY
        return lambda: SQLiteStore(path, merge_every=merge_every)
    if request.param == "postgres":
        from mcpkit_storage.stores.postgres._postgres_store import PostgresStore

        database: str = request.getfixturevalue("postgres_url")
        return lambda: PostgresStore(database)
    if request.param == "redis-cluster":
        from mcpkit_storage.stores.redis._redis_cluster_store import RedisClusterStore

        cluster = request.getfixturevalue("redis_cluster")
        cluster_prefix: str = request.getfixturevalue("cluster_prefix")
        return lambda: RedisClusterStore(cluster.url, prefix=cluster_prefix)
    url: str = request.getfixturevalue("redis_url")
    prefix: str = request.getfixturevalue("redis_prefix")
    return lambda: RedisStore(url, prefix=prefix)


@pytest.fixture
async def store(make_store: MakeStore) -> AsyncIterator[Store]:
    opened = make_store()
    await opened.open()
    yield opened
    await opened.close()


@pytest.fixture
def now() -> float:
    """Real time, so the deadlines handed to Redis land in the future; tests move it by hand."""
    return time.time()
