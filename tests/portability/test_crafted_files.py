"""Issue 39, item 6: a crafted file writes nothing the API could not — no key ``check_key`` refuses, no internal entry
but a key's change history — and an import of some users' values (``--user``) refuses a session's value."""

from __future__ import annotations

import io
import json
import time

import pytest

from mcpkit_storage import Keyring, Place, Vault
from mcpkit_storage.portability import ExportFileError, import_memory
from mcpkit_storage.portability._lines import LineWriter
from mcpkit_storage.stores.memory._memory_store import MemoryStore

KEYRING = Keyring(["portability-secret-0123456789abcdef"])
NOUR = ["u", "nour"]


def value_record(owner: list[str], bucket: str, key: str, value: object) -> bytes:
    record = {"type": "value", "owner": owner, "bucket": bucket, "key": key, "ttl": None, "updated": 1.7e9}
    return json.dumps(record | {"indexed": False, "provenance": None, "at": None, "value": value}).encode()


def crafted(*records: bytes) -> bytes:
    """A plaintext export file whose records are ``records``, complete (header, end record, digest) as export writes."""
    out = io.BytesIO()
    writer = LineWriter(out, None)
    writer.header({"users": None}, time.time())
    for line in records:
        writer.record(line)
    writer.end()
    return out.getvalue()


async def import_into(data: bytes, **options: object) -> tuple[MemoryStore, object]:
    store = MemoryStore()
    await store.open()
    try:
        report = await import_memory(store, KEYRING, io.BytesIO(data), plaintext=True, **options)  # type: ignore[arg-type]
    except ExportFileError as exc:
        return store, exc
    return store, report


async def keys_of(store: MemoryStore, identity: list[str], bucket: str) -> list[str]:
    place = Place(json.dumps(identity), bucket, identity[0] == "s")
    found = await Vault(store, KEYRING).payloads(place, time.time())
    return sorted(found)


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        ("bell\x07", "not one a tool could write"),
        ("", "not one a tool could write"),
        ("k" * 257, "not one a tool could write"),
        ("\x00shard:0", "an internal entry's"),
        ("\x00versions:\x00shard:0", "an internal entry's"),
        ("\x00versions:bell\x07", "not one a tool could write"),
    ],
)
async def test_a_crafted_key_the_api_could_not_write_is_refused_naming_its_line(key: str, problem: str) -> None:
    data = crafted(value_record(NOUR, "user", "fine", "kept"), value_record(NOUR, "user", key, "crafted"))

    store, outcome = await import_into(data)

    assert isinstance(outcome, ExportFileError)
    assert outcome.line == 3
    assert problem in str(outcome)
    assert key not in str(outcome) or not key  # an import's errors never show a key
    assert "1 values before it were imported" in str(outcome)
    assert await keys_of(store, NOUR, "user") == ["fine"]


async def test_a_keys_change_history_is_the_one_internal_entry_a_file_may_write() -> None:
    history = [["set", json.dumps("kept"), 1.7e9, None, None]]
    data = crafted(value_record(NOUR, "user", "fine", "kept"), value_record(NOUR, "user", "\x00versions:fine", history))

    _, outcome = await import_into(data)

    assert not isinstance(outcome, ExportFileError), outcome
    assert getattr(outcome, "imported", None) == 2


async def test_an_import_of_some_users_refuses_a_sessions_value_and_an_import_of_all_takes_it() -> None:
    session = ["s", "9f2c-session"]
    data = crafted(value_record(NOUR, "user", "fine", "kept"), value_record(session, "session", "draft", "half"))

    store, refused = await import_into(data, only_users=["nour"])
    whole, taken = await import_into(data)

    assert isinstance(refused, ExportFileError)
    assert refused.line == 3
    assert "a value of a session, which belongs to no user" in str(refused)
    assert "export --user" in str(refused)
    assert await keys_of(store, session, "session") == []
    assert getattr(taken, "imported", None) == 2
    assert await keys_of(whole, session, "session") == ["draft"]
