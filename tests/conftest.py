"""Shared fixtures for mcpkit's own test suite."""

import pytest

import mcpkit_storage.base._once

pytest_plugins = ["redis_fixtures", "redis_cluster_fixtures", "postgres_fixtures"]


@pytest.fixture(autouse=True)
def _warnings_of_their_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts as a new process would: no warning cause already logged (``mcpkit_storage.base._once``)."""
    monkeypatch.setattr(mcpkit_storage.base._once, "_seen", set())
