"""Issue 39 (review), items 2 and 3: a crafted file's change history is refused, naming its line, unless every version
is one ``history()`` reads (and it never enters the search index); so is a bucket the API could not name."""

from __future__ import annotations

import base64
import json
import time

import pytest

from mcpkit_storage import Place, Vault, versions_key, versions_of
from mcpkit_storage.portability import ExportFileError, ImportReport
from mcpkit_storage.portability._format import item_of
from mcpkit_storage.sealing import origin_bytes, seal_meta
from portability.test_crafted_files import KEYRING, NOUR, crafted, import_into, keys_of, value_record

SEALED = base64.b64encode(seal_meta("user", 1.6e9, origin_bytes("desk", "mem", None, None, None, None))).decode()


def history_record(*rows: object, indexed: bool = False) -> bytes:
    record = json.loads(value_record(NOUR, "user", "\x00versions:tz", list(rows)))
    return json.dumps(record | {"indexed": indexed}).encode()


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        (["set", '"x"', 1.7e9, None], "is not a list of five parts"),
        ("set", "is not a list of five parts"),
        (["rename", '"x"', 1.7e9, None, ""], "has an event that is not one of set, update"),
        (["set", 42, 1.7e9, None, ""], "has a value that is not JSON text or null"),
        (["set", "not json", 1.7e9, None, ""], "has a value that is not JSON text or null"),
        (["set", '"x"', None, None, ""], "has a time (written at, deadline) that is not a finite number"),
        (["set", '"x"', 1.7e9, "soon", ""], "has a time (written at, deadline) that is not a finite number"),
        (["set", '"x"', 1.7e9, True, ""], "has a time (written at, deadline) that is not a finite number"),
        (["set", '"x"', float("inf"), None, ""], "has a time (written at, deadline) that is not a finite number"),
        (["set", '"x"', 1.7e9, None, "!!notbase64"], "has a provenance that does not decode"),
        (["set", '"x"', 1.7e9, None, SEALED[:24]], "has a provenance that does not decode"),
        (["set", '"x"', 1.7e9, None, 7], "has a provenance that is not base64 text"),
    ],
)
async def test_a_crafted_history_version_history_could_not_read_is_refused_naming_its_line(
    row: object, problem: str
) -> None:
    fine = ["set", '"UTC"', 1.7e9, None, SEALED]
    data = crafted(value_record(NOUR, "user", "tz", "CET"), history_record(fine, row))

    store, outcome = await import_into(data)

    assert isinstance(outcome, ExportFileError), outcome
    assert outcome.line == 3
    assert f"version 2 of its change history {problem}" in str(outcome)
    assert "1 values before it were imported" in str(outcome)
    assert await keys_of(store, NOUR, "user") == ["tz"]


async def test_a_crafted_history_that_history_reads_is_imported_and_read_back() -> None:
    rows = [["set", '"UTC"', 1.7e9, None, SEALED], ["delete", None, 1.7e9 + 5, None, ""]]
    data = crafted(value_record(NOUR, "user", "tz", "CET"), history_record(*rows, indexed=True))

    store, outcome = await import_into(data)
    place = Place(json.dumps(NOUR), "user")
    found = await Vault(store, KEYRING).read(place, versions_key("tz"), time.time())

    assert isinstance(outcome, ImportReport)
    assert outcome.imported == 2
    assert found is not None
    versions = versions_of(found.value, time.time())
    assert [(v.event, v.value) for v in versions] == [("set", "UTC"), ("delete", None)]
    assert versions[0].provenance is not None
    assert versions[0].provenance.tool == "mem"


def test_a_change_history_never_enters_the_search_index_whatever_its_record_says() -> None:
    record = json.loads(history_record(["set", '"UTC"', 1.7e9, None, ""], indexed=True).decode())

    assert item_of(record).indexed is False
    assert item_of(json.loads(value_record(NOUR, "user", "tz", "CET")) | {"indexed": True}).indexed is True


@pytest.mark.parametrize("bucket", ["user:x", "other", "notes.mine", "user\x07", "user.a:b", "global:x", ":user"])
async def test_a_crafted_bucket_the_api_could_not_name_is_refused_naming_its_line(bucket: str) -> None:
    data = crafted(value_record(NOUR, "user", "fine", "kept"), value_record(NOUR, bucket, "k", "crafted"))

    store, outcome = await import_into(data)

    assert isinstance(outcome, ExportFileError), outcome
    assert outcome.line == 3
    assert 'its "bucket" is not one the API names' in str(outcome)
    assert "1 values before it were imported" in str(outcome)
    assert await keys_of(store, NOUR, "user") == ["fine"]


@pytest.mark.parametrize(
    "bucket", ["user", "session", "global", "tool", "tool.mem", "tool.resource:notes", "history.user"]
)
async def test_every_bucket_the_api_names_is_imported(bucket: str) -> None:
    owner = ["g"] if bucket == "global" else NOUR
    data = crafted(value_record(owner, bucket, "k", "kept"))

    store, outcome = await import_into(data, allow_global=True)

    assert isinstance(outcome, ImportReport), outcome
    assert outcome.imported == 1
    assert await keys_of(store, owner, bucket) == ["k"]


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        # A lone surrogate in a version's value: pydantic_core's parser raises TypeError on it, json.loads reads it.
        (history_record(["set", '"\ud800"', 1.7e9, None, SEALED]), "surrogates not allowed"),
        # A ttl of more digits than a float holds.
        (value_record(NOUR, "user", "big", 1).replace(b'"ttl": null', b'"ttl": ' + b"9" * 401), "too large"),
    ],
)
async def test_a_record_no_parser_path_reads_is_refused_naming_its_line_after_the_values_before_it(
    bad: bytes, problem: str
) -> None:
    """Review: either escaped the import as a TypeError or an OverflowError, with no line, and took the chunk sealed
    before it along (512 of 600 values written). More values than a chunk, so one was being written meanwhile."""
    data = crafted(*(value_record(NOUR, "user", f"k{number:03}", number) for number in range(600)), bad)

    store, outcome = await import_into(data)

    assert isinstance(outcome, ExportFileError), outcome
    assert outcome.line == 602
    assert problem in str(outcome)
    assert "600 values before it were imported" in str(outcome)
    assert len(await keys_of(store, NOUR, "user")) == 600
