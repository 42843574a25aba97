"""Issue 39 (review), item 1: importing the same file again changes nothing in a key's change history either — its
versions' deadlines were moved by the first import's clock, not the second's — and no version outlives its value."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from mcpkit_storage import Keyring, Place, Vault, versions_key, versions_of
from portability.support import exported_history, imported, opened
from remember.support import static_user_id, user_identity

SECRET = "portability-secret-A-0123456789abcdef"


def stored_rows(path: Path) -> list[tuple[object, ...]]:
    """Every entry of the SQLite store at ``path``, byte for byte (sealed values, deadlines, write times)."""
    with sqlite3.connect(path) as db:
        return sorted(db.execute("SELECT * FROM remember_entries").fetchall())


@pytest.mark.parametrize("on_conflict", ["skip", "replace"])
async def test_a_second_import_at_another_time_leaves_a_keys_history_as_the_first_wrote_it(
    tmp_path: Path, on_conflict: str
) -> None:
    target = tmp_path / "moved.db"
    file, exported_at = await exported_history(tmp_path / "kept.db", SECRET, gap=5)
    place = Place(user_identity(static_user_id("nour")), "user")
    async with opened(f"sqlite:///{target}") as store:
        first = await imported(store, Keyring([SECRET]), file, exported_at + 10, plaintext=True)
    before = stored_rows(target)
    async with opened(f"sqlite:///{target}") as store:
        second = await imported(
            store, Keyring([SECRET]), file, exported_at + 30, plaintext=True, on_conflict=on_conflict
        )
        vault = Vault(store, Keyring([SECRET]))
        value = await vault.read(place, "otp", exported_at + 30)
        history = await vault.read(place, versions_key("otp"), exported_at + 30)

    assert (first.imported, first.unchanged) == (2, 0)
    assert (second.imported, second.unchanged, second.kept) == (0, 2, 0)  # the history too, not "kept"
    assert stored_rows(target) == before  # not one byte rewritten
    assert value is not None
    assert history is not None
    assert value.expires_at == pytest.approx(exported_at + 70)  # the first import's clock: 60 s left at export
    assert history.expires_at is not None
    assert history.expires_at <= value.expires_at
    versions = versions_of(history.value, exported_at + 30)
    assert [version.value for version in versions] == ["first", "second"]
    assert all(v.expires_at is not None and v.expires_at <= value.expires_at for v in versions)
