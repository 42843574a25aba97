"""Fixtures: the tasks tests on every store the remember plugin offers (and without one: the server's memory)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tasks.support import GATES, SEEN

#: "server-memory": no plugin (the server keeps tasks in its own memory); the rest: RememberPlugin's store.
STORES = ("server-memory", "memory", "sqlite", "redis", "redis-cluster", "postgres")
#: Stores that outlive an instance and are shared by several.
SHARED = ("sqlite", "redis", "redis-cluster", "postgres")


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    GATES.clear()
    SEEN.clear()
    yield
    for event in GATES.values():
        event.set()


@pytest.fixture(autouse=True)
def _no_remember_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REMEMBER_STORE", raising=False)
    monkeypatch.delenv("REMEMBER_SECRET", raising=False)


def options_for(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> dict[str, Any] | None:
    """``RememberPlugin.init`` arguments for ``kind`` (None: no plugin at all)."""
    if kind == "server-memory":
        return None
    if kind == "memory":
        return {"type": "memory"}
    if kind == "sqlite":
        return {"type": "sqlite", "path": tmp_path / "tasks.db"}
    if kind == "postgres":
        return {"type": "postgres", "url": request.getfixturevalue("postgres_url")}
    if kind == "redis-cluster":
        cluster = request.getfixturevalue("redis_cluster")
        return {"type": "redis-cluster", "url": cluster.url, "redis_prefix": request.getfixturevalue("cluster_prefix")}
    return {
        "type": "redis",
        "url": request.getfixturevalue("redis_url"),
        "redis_prefix": request.getfixturevalue("redis_prefix"),
    }
