"""Starting beside another instance: a SQLite database that is locked while this one opens it (a rolling restart,
a WAL left by a killed instance) is tried again a few times before starting fails; any other failure is not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcpkit_storage.stores._store import StoreUnavailableError
from mcpkit_storage.stores.sqlite import _sqlite_connect as sqlite_connect
from mcpkit_storage.stores.sqlite._sqlite_store import SQLiteStore


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_connect, "OPEN_RETRY_SECONDS", 0.01)


def failing(monkeypatch: pytest.MonkeyPatch, failures: list[str]) -> list[int]:
    """``_connect_once`` raising each of ``failures`` in turn, then the real one; returns the attempt count."""
    attempts = [0]
    real = sqlite_connect._connect_once

    def connect_once(path: Path, create: bool) -> Any:
        attempts[0] += 1
        if failures:
            raise StoreUnavailableError(f"Cannot open the SQLite remember store at 'x': {failures.pop(0)}")
        return real(path, create)

    monkeypatch.setattr(sqlite_connect, "_connect_once", connect_once)
    return attempts


async def test_a_locked_database_is_tried_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    attempts = failing(monkeypatch, ["database is locked", "database is locked"])
    store = SQLiteStore(tmp_path / "remember.db")
    await store.open()
    await store.close()
    assert attempts == [3]


async def test_it_gives_up_after_the_last_attempt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    attempts = failing(monkeypatch, ["database is locked"] * sqlite_connect.OPEN_ATTEMPTS)
    with pytest.raises(StoreUnavailableError, match="database is locked"):
        await SQLiteStore(tmp_path / "remember.db").open()
    assert attempts == [sqlite_connect.OPEN_ATTEMPTS]


async def test_another_failure_is_not_tried_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    attempts = failing(monkeypatch, ["file is not a database"])
    with pytest.raises(StoreUnavailableError, match="file is not a database"):
        await SQLiteStore(tmp_path / "remember.db").open()
    assert attempts == [1]
