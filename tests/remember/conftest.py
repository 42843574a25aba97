"""Fixtures: a server with a RememberPlugin on every store (memory, SQLite in tmp_path, a real Redis, a real Redis
Cluster)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcpkit import Server
from mcpkit_remember import RememberPlugin
from remember.support import SECRET, STORES, build_server


@pytest.fixture(params=STORES)
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store_options(store_kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> dict[str, Any]:
    """``RememberPlugin.init`` arguments for the store under test; several servers may share them."""
    return _where(store_kind, tmp_path, request)


def _where(store_kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> dict[str, Any]:
    if store_kind == "memory":
        return {"type": "memory"}
    if store_kind == "sqlite":
        return {"type": "sqlite", "path": tmp_path / "remember.db"}
    if store_kind == "postgres":  # (not in STORES: the tests that name it)
        return {"type": "postgres", "url": request.getfixturevalue("postgres_url")}
    if store_kind == "redis-cluster":
        return {
            "type": "redis-cluster",
            "url": request.getfixturevalue("redis_cluster").url,
            "redis_prefix": request.getfixturevalue("cluster_prefix"),
        }
    return {
        "type": "redis",
        "url": request.getfixturevalue("redis_url"),
        "redis_prefix": request.getfixturevalue("redis_prefix"),
    }


@pytest.fixture
def store_url(store_options: dict[str, Any]) -> str:
    """The store as `mcpkit remember --store` takes it."""
    if store_options["type"] == "sqlite":
        return f"sqlite:///{store_options['path']}"  # an absolute path: sqlite:////tmp/...
    return str(store_options["url"])


@pytest.fixture
def mcpkit_server(store_options: dict[str, Any]) -> Server:
    return build_server(RememberPlugin.init(**store_options, secret=SECRET))


@pytest.fixture(autouse=True)
def _no_remember_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests set REMEMBER_STORE / REMEMBER_SECRET themselves when they mean to."""
    monkeypatch.delenv("REMEMBER_STORE", raising=False)
    monkeypatch.delenv("REMEMBER_SECRET", raising=False)
