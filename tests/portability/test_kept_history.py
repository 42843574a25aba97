"""Issue 39 (review of the import): a key's change history goes in with its value. When the store keeps a value of
its own (``--on-conflict skip``, or ``newer`` with the store's written later), the file's history of that key stays out:
it tells how another value came to be, and would outlive the one that stays. Into a real SQLite store, whichever
comes first in the file, through the chunked path (one secret) and the one-by-one path (a keyring of two)."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest

from mcpkit_storage import Keyring, Place, Vault, versions_key, versions_of
from mcpkit_storage.portability import ImportReport, import_memory
from portability.support import opened
from portability.test_crafted_files import NOUR, crafted, value_record

SECRET, OLDER = "portability-secret-0123456789abcdef", "portability-older-secret-0123456789"
PLACE = Place(json.dumps(NOUR), "user")
#: The file's history of ``tz``: set to UTC, then to CET (the file's value, written at 1.7e9), no deadline.
ROWS = [["set", '"UTC"', 1.69e9, None, ""], ["update", '"CET"', 1.7e9, None, ""]]


def file_with(history_first: bool) -> bytes:
    value = value_record(NOUR, "user", "tz", "CET")
    history = value_record(NOUR, "user", "\x00versions:tz", ROWS)
    return crafted(*((history, value) if history_first else (value, history)))


def keyring(secrets: int) -> Keyring:
    return Keyring([SECRET, OLDER][:secrets])


async def import_over(
    path: Path, secrets: int, history_first: bool, on_conflict: str, there: tuple[str, float] | None
) -> tuple[ImportReport, object, object, float]:
    """Import the file into the SQLite store at ``path`` holding ``there`` (a value of ``tz`` and when it was written,
    with a minute left), with no history of it; the report, the value and the history read back, and the time."""
    now = time.time()
    async with opened(f"sqlite:///{path}") as store:
        vault = Vault(store, keyring(secrets))
        if there is not None:
            value, written_at = there
            await vault.write(PLACE, "tz", json.dumps(value), now + 60, written_at, None)
        report = await import_memory(
            store, keyring(secrets), io.BytesIO(file_with(history_first)), plaintext=True, on_conflict=on_conflict,
            now=now,
        )  # fmt: skip
        value_found = await vault.read(PLACE, "tz", now)
        history = await vault.read(PLACE, versions_key("tz"), now)
    return report, value_found, history, now


@pytest.mark.parametrize("secrets", [1, 2], ids=["chunked", "one-by-one"])
@pytest.mark.parametrize("history_first", [True, False], ids=["history-first", "value-first"])
async def test_skip_keeps_the_stores_value_and_leaves_the_files_history_of_it_out(
    tmp_path: Path, secrets: int, history_first: bool
) -> None:
    now = time.time()
    report, value, history, _ = await import_over(tmp_path / "s.db", secrets, history_first, "skip", ("PST", now))

    assert (report.imported, report.kept) == (0, 2)
    assert value is not None
    assert value.value == "PST"  # type: ignore[attr-defined]
    assert history is None  # no version of CET's story beside PST, none outliving PST's minute


@pytest.mark.parametrize("secrets", [1, 2], ids=["chunked", "one-by-one"])
@pytest.mark.parametrize("history_first", [True, False], ids=["history-first", "value-first"])
async def test_a_key_free_in_the_store_takes_the_files_value_and_its_history(
    tmp_path: Path, secrets: int, history_first: bool
) -> None:
    report, value, history, now = await import_over(tmp_path / "f.db", secrets, history_first, "skip", None)

    assert (report.imported, report.kept) == (2, 0)
    assert value is not None
    assert value.value == "CET"  # type: ignore[attr-defined]
    assert history is not None
    assert [v.value for v in versions_of(history.value, now)] == ["UTC", "CET"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("on_conflict", "written_at", "kept"),
    [("newer", 1.8e9, True), ("newer", 1.6e9, False), ("replace", 1.8e9, False)],
    ids=["newer-kept", "newer-replaced", "replace"],
)
async def test_newer_and_replace_take_the_history_exactly_when_they_take_the_value(
    tmp_path: Path, on_conflict: str, written_at: float, kept: bool
) -> None:
    report, value, history, _ = await import_over(tmp_path / "n.db", 1, True, on_conflict, ("PST", written_at))

    assert (report.imported, report.kept) == ((0, 2) if kept else (2, 0))
    assert value is not None
    assert value.value == ("PST" if kept else "CET")  # type: ignore[attr-defined]
    assert (history is None) is kept


async def test_a_second_import_of_the_file_leaves_the_history_it_imported_unchanged(tmp_path: Path) -> None:
    await import_over(tmp_path / "r.db", 1, True, "skip", None)
    report, value, history, _ = await import_over(tmp_path / "r.db", 1, False, "skip", None)

    assert (report.imported, report.unchanged, report.kept) == (0, 2, 0)
    assert value is not None
    assert history is not None
