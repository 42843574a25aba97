"""Issue 39 (review of the import): a value its quota refuses on import keeps its change history out with it. A
history that comes later in the file is not written; one written before the refusal (earlier in the file, or in the
same store call) is deleted again; the report counts them apart from what was imported. Into a real SQLite store,
whichever comes first, through the chunked path (one secret) and the one-by-one path (a keyring of two)."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest

from mcpkit_storage import Keyring, Place, Quota, Vault, versions_key
from mcpkit_storage.portability import import_memory
from mcpkit_storage.portability._import import _CHUNK
from portability.support import opened
from portability.test_crafted_files import NOUR, crafted, value_record

SECRET, OLDER = "portability-secret-0123456789abcdef", "portability-older-secret-0123456789"
PLACE = Place(json.dumps(NOUR), "user")
#: A searchable value of 200 distinct words: with its index (32 bytes a word) about 8 KB against the quota, while its
#: history, which no index holds, is under 2 KB.
WORDY = " ".join(f"word{n}" for n in range(200))
#: The quota every bucket is held to: the small value, both histories, not the wordy value.
QUOTA = Quota(values=None, bytes=5000)


def wordy_records() -> tuple[bytes, bytes]:
    """The searchable value of ``notes`` and its history, which ends with it (written at 1.7e9, as the value)."""
    value = json.loads(value_record(NOUR, "user", "notes", WORDY))
    rows = [["set", json.dumps("first draft"), 1.69e9, None, ""], ["update", json.dumps(WORDY), 1.7e9, None, ""]]
    return json.dumps(value | {"indexed": True}).encode(), value_record(NOUR, "user", versions_key("notes"), rows)


def small_records() -> list[bytes]:
    """A value that fits, and its history."""
    rows = [["set", json.dumps("UTC"), 1.7e9, None, ""]]
    return [value_record(NOUR, "user", "tz", "UTC"), value_record(NOUR, "user", versions_key("tz"), rows)]


@pytest.mark.parametrize("secrets", [1, 2], ids=["chunked", "one-by-one"])
@pytest.mark.parametrize("history_first", [True, False], ids=["history-first", "value-first"])
async def test_a_value_over_its_quota_leaves_its_history_out_and_the_report_says_so(
    tmp_path: Path, secrets: int, history_first: bool
) -> None:
    value, history = wordy_records()
    records = [*small_records(), *((history, value) if history_first else (value, history))]
    keyring, now = Keyring([SECRET, OLDER][:secrets]), time.time()
    async with opened(f"sqlite:///{tmp_path / 'q.db'}") as store:
        file = io.BytesIO(crafted(*records))
        report = await import_memory(store, keyring, file, plaintext=True, quota=QUOTA, now=now)
        vault = Vault(store, keyring)
        keys = ["notes", versions_key("notes"), "tz", versions_key("tz")]
        notes, notes_history, tz, tz_history = await vault.read_many(PLACE, keys, now)

    assert report.over_quota == [records.index(value) + 2]  # the header is line 1
    assert (report.imported, report.histories_left_out, report.kept, report.unchanged) == (2, 1, 0, 0)
    assert "1 change histories of those values were left out with them" in str(report)
    assert notes is None
    assert notes_history is None  # no story of a value the store does not hold
    assert tz is not None
    assert tz_history is not None  # the value that fit keeps its own


async def test_a_history_of_the_stores_own_value_stays_when_the_files_value_is_refused(tmp_path: Path) -> None:
    keyring, now = Keyring([SECRET]), time.time()
    value, _ = wordy_records()
    async with opened(f"sqlite:///{tmp_path / 'own.db'}") as store:
        vault = Vault(store, keyring)
        await vault.write(PLACE, "notes", json.dumps("mine"), None, now, None)
        rows = [["set", json.dumps("mine"), now, None, ""]]
        await vault.write(PLACE, versions_key("notes"), json.dumps(rows), None, now, None)
        file = io.BytesIO(crafted(value))
        report = await import_memory(store, keyring, file, plaintext=True, on_conflict="replace", quota=QUOTA, now=now)
        kept = await vault.read(PLACE, versions_key("notes"), now)

    assert (report.over_quota, report.histories_left_out) == ([2], 0)
    assert kept is not None
    assert kept.value == rows  # it tells how the store's value came to be: not the file's to take out


async def test_a_history_decided_on_before_its_values_refusal_was_known_is_taken_out_again(tmp_path: Path) -> None:
    """The value last of a chunk, its history first of the next: the next chunk is read and sealed while the value's
    store call is still under way, so its history is written before the refusal can keep it out."""
    value, history = wordy_records()
    fillers = [value_record(["u", f"user{n}"], "user", "k", n) for n in range(_CHUNK - 1)]  # one each: all fit
    keyring, now = Keyring([SECRET]), time.time()
    async with opened(f"sqlite:///{tmp_path / 'c.db'}") as store:
        file = io.BytesIO(crafted(*fillers, value, history))
        report = await import_memory(store, keyring, file, plaintext=True, quota=QUOTA, now=now)
        left = await Vault(store, keyring).read_many(PLACE, ["notes", versions_key("notes")], now)

    assert (report.over_quota, report.imported, report.histories_left_out) == ([_CHUNK + 1], _CHUNK - 1, 1)
    assert left == [None, None]


@pytest.mark.parametrize("fillers", [0, 3 * _CHUNK], ids=["one-chunk", "chunks-apart"])
async def test_a_key_refused_then_imported_again_later_in_the_file_keeps_the_history_of_the_value_that_fit(
    tmp_path: Path, fillers: int
) -> None:
    """The same key twice in the file (or two users mapped to one): the first value over its quota, the second
    fits; the history ending with the second is its own and goes in, whatever lies between."""
    value, _ = wordy_records()
    short = value_record(NOUR, "user", "notes", "short")
    rows = [["set", json.dumps("first draft"), 1.69e9, None, ""], ["update", json.dumps("short"), 1.7e9, None, ""]]
    history = value_record(NOUR, "user", versions_key("notes"), rows)
    others = [value_record(["u", f"filler-{n}"], "user", "k", n) for n in range(fillers)]
    keyring, now = Keyring([SECRET]), time.time()
    async with opened(f"sqlite:///{tmp_path / 'twice.db'}") as store:
        file = io.BytesIO(crafted(value, short, *others, history))
        report = await import_memory(store, keyring, file, plaintext=True, quota=QUOTA, now=now)
        notes, notes_history = await Vault(store, keyring).read_many(PLACE, ["notes", versions_key("notes")], now)

    assert report.over_quota == [2]
    assert notes is not None
    assert notes.value == "short"
    assert notes_history is not None  # the history of the value that fit
    assert report.histories_left_out == 0
