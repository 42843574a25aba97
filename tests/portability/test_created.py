"""Issue 39: each record carries when its key was first written (``created``); an import keeps it whatever the
conflicts policy writes (a free key, ``replace``, ``newer``), a record without one leaves the store's, and a
``created`` that is not a finite non-negative number is refused naming the line."""

from __future__ import annotations

import io
import json

import pytest

from mcpkit_storage import Keyring, Place, Vault
from mcpkit_storage.portability import ImportReport, import_memory
from mcpkit_storage.stores import Address
from mcpkit_storage.stores.memory._memory_store import MemoryStore
from portability.support import exported
from portability.test_crafted_files import crafted, import_into, value_record

KEYRING = Keyring(["portability-secret-0123456789abcdef"])
NOUR = ["u", "nour"]
FIRST, LAST, NOW = 1_600_000_000.0, 1_700_000_000.0, 1_750_000_000.0


def with_created(line: bytes, created: object) -> bytes:
    return json.dumps(json.loads(line) | {"created": created, "updated": LAST}).encode()


async def created_of(store: MemoryStore) -> dict[str, float | None]:
    """Each value's first-write time by the key in its payload, as the store keeps it."""
    vault = Vault(store, KEYRING)
    found = {}
    async for record in store.scan():
        payload, _ = vault.open_record(Address(*record[:3]), record.entry)
        found[payload.key] = record.entry.created
    return found


@pytest.mark.parametrize("on_conflict", ["replace", "newer"])
async def test_an_import_keeps_the_files_first_write_time_over_a_key_the_store_has(on_conflict: str) -> None:
    data = crafted(
        with_created(value_record(NOUR, "user", "taken", "from the file"), FIRST),
        with_created(value_record(NOUR, "user", "free", "from the file"), FIRST),
        with_created(value_record(NOUR, "user", "unknown", "from the file"), None),
        with_created(value_record(NOUR, "user", "held", "from the file"), None),
    )
    store = MemoryStore()
    await store.open()
    for key in ("taken", "held"):
        await Vault(store, KEYRING).write(Place(json.dumps(NOUR), "user"), key, '"older"', None, LAST - 10, None)
    report = await _import(store, data, on_conflict)
    assert report.imported == 4
    # none in the file: a new key takes the file's write time, a key the store holds keeps the store's own
    assert await created_of(store) == {"taken": FIRST, "free": FIRST, "unknown": LAST, "held": LAST - 10}


async def test_an_exported_record_says_when_its_key_was_first_written() -> None:
    store = MemoryStore()
    await store.open()
    vault, place = Vault(store, KEYRING), Place(json.dumps(NOUR), "user")
    await vault.write(place, "k", '"first"', None, FIRST, None)
    await vault.write(place, "k", '"second"', None, LAST, None)
    [line] = (await exported(store, KEYRING, NOW, plaintext=True)).splitlines()[1:-1]
    assert (json.loads(line)["created"], json.loads(line)["updated"]) == (FIRST, LAST)


@pytest.mark.parametrize("created", [-1, "yesterday", True, 1e400])
async def test_a_created_that_is_not_a_finite_non_negative_number_is_refused_naming_its_line(created: object) -> None:
    line = value_record(NOUR, "user", "k", "v")
    bad = json.dumps(json.loads(line) | {"created": created}).encode() if created != 1e400 else _infinite(line)
    _, refused = await import_into(crafted(value_record(NOUR, "user", "fine", "v"), bad))
    assert getattr(refused, "line", None) == 3
    assert '"created"' in str(refused)


def _infinite(line: bytes) -> bytes:
    """A record whose ``created`` overflows to infinity when read (JSON has no infinity of its own)."""
    return line[:-1] + b',"created":1e400}'


async def _import(store: MemoryStore, data: bytes, on_conflict: str) -> ImportReport:
    return await import_memory(store, KEYRING, io.BytesIO(data), plaintext=True, now=NOW, on_conflict=on_conflict)  # type: ignore[arg-type]
