"""Issue 39, item 6: a file cut short, corrupted, tampered with, sealed with another key or of a future version is
refused naming the line; a value lands whole or not at all; another user's values need a mapping; the global scope
needs asking; a quota that is full is reported, never half a value."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import jsonschema
import pytest

from mcpkit_storage import Keyring, Place, Quota, Vault, record
from mcpkit_storage.portability import ExportFileError, SealingKey, import_memory, schema
from mcpkit_storage.stores._store import Store
from mcpkit_storage.stores.memory._memory_store import MemoryStore
from portability.support import PASSPHRASE, exported, imported

KEYRING = Keyring(["portability-secret-0123456789abcdef"])
NOUR, SAM = json.dumps(["u", "nour"]), json.dumps(["u", "sam"])


@pytest.fixture
async def store() -> AsyncIterator[Store]:
    """A memory store holding three of Nour's values, one of Sam's and a global one."""
    kept = MemoryStore()
    await kept.open()
    vault, now = Vault(kept, KEYRING, search_all=True), time.time()
    for key in ("a", "b", "c"):
        await vault.write(Place(NOUR, "user"), key, json.dumps({"text": f"value {key} " * 40}), None, now, None)
    await vault.write(Place(SAM, "user"), "a", '"Sam\'s"', now + 60, now, None)
    await vault.write(Place(json.dumps(["g"]), "global"), "motd", '"hello"', None, now, None)
    yield kept
    await kept.close()


async def fresh() -> Store:
    new = MemoryStore()
    await new.open()
    return new


async def refused(data: bytes, **options: object) -> ExportFileError:
    with pytest.raises(ExportFileError) as caught:
        await imported(await fresh(), KEYRING, data, time.time(), allow_global=True, **options)
    return caught.value


async def values_in(store: Store) -> dict[tuple[str, str], object]:
    vault, now = Vault(store, KEYRING), time.time()
    found = {}
    for identity in (NOUR, SAM):
        for key, payload in (await vault.payloads(Place(identity, "user"), now)).items():
            found[(identity, key)] = payload.value()
    return found


async def test_every_line_of_an_export_is_valid_against_the_shipped_schema(store: Store) -> None:
    for data in (await exported(store, KEYRING, time.time(), plaintext=True), await exported(store, KEYRING, 0.0)):
        lines = [json.loads(line) for line in data.splitlines()]
        for line in lines:
            jsonschema.validate(line, schema())
        assert lines[0]["type"] == "header"
    assert len(lines) == 7  # the header, five values, the end


async def test_a_file_cut_short_is_refused_naming_the_line_and_the_values_before_it_are_whole(store: Store) -> None:
    data = await exported(store, KEYRING, time.time())
    lines = data.splitlines(keepends=True)
    without_end = await refused(b"".join(lines[:-1]), key=SealingKey.passphrase(PASSPHRASE))
    mid_line = await refused(b"".join(lines[:3]) + lines[3][:40], key=SealingKey.passphrase(PASSPHRASE))
    assert without_end.line == 7
    assert "cut short" in str(without_end)
    assert "5 values before it were imported" in str(without_end)
    assert mid_line.line == 4
    assert "ends in the middle of this line" in str(mid_line)


async def test_a_tampered_sealed_line_a_wrong_key_and_a_changed_header_are_told_apart(store: Store) -> None:
    data = await exported(store, KEYRING, time.time())
    lines = data.splitlines(keepends=True)
    sealed = base64.b64decode(json.loads(lines[2])["sealed"])
    flipped = base64.b64encode(sealed[:10] + bytes([sealed[10] ^ 1]) + sealed[11:]).decode()
    tampered = b"".join([*lines[:2], json.dumps({"sealed": flipped}).encode() + b"\n", *lines[3:]])
    swapped = b"".join([lines[0], lines[2], lines[1], *lines[3:]])
    header = json.loads(lines[0])
    header["exported_at"] += 1
    reheaded = b"".join([json.dumps(header).encode() + b"\n", *lines[1:]])
    key = SealingKey.passphrase(PASSPHRASE)

    assert (await refused(tampered, key=key)).line == 3
    assert (await refused(swapped, key=key)).line == 2  # lines are numbered into their seal: none can move
    assert "does not open" in str(await refused(reheaded, key=key))
    wrong = await refused(data, key=SealingKey.passphrase("not the passphrase"))
    assert wrong.line == 1
    assert "passphrase or key file is not the one" in str(wrong)
    assert "sealed" in str(await refused(data, plaintext=True))


async def test_a_sealed_line_rewritten_as_other_json_opens_the_same(store: Store) -> None:
    """A sealed line as export writes it is read without a JSON parse; one another tool rewrote (its slashes
    escaped, as JSON may write them) is parsed, and opens the same."""
    data = await exported(store, KEYRING, time.time())
    lines = data.splitlines(keepends=True)
    sealed = [json.loads(line)["sealed"] for line in lines[1:]]
    rewritten = [b'{"sealed":"' + text.replace("/", "\\/").encode() + b'"}\n' for text in sealed]
    assert any(b"\\/" in line for line in rewritten)  # at least one line that only a JSON parse reads right
    as_written, rewritten_into = await fresh(), await fresh()

    await imported(as_written, KEYRING, data, time.time(), allow_global=True)
    await imported(rewritten_into, KEYRING, b"".join([lines[0], *rewritten]), time.time(), allow_global=True)

    assert await values_in(rewritten_into) == await values_in(as_written) == await values_in(store)
    assert len(await values_in(store)) == 4


async def test_a_corrupted_plaintext_file_and_a_future_version_are_refused(store: Store) -> None:
    data = await exported(store, KEYRING, time.time(), plaintext=True)
    lines = data.splitlines(keepends=True)
    corrupted = b"".join([*lines[:2], lines[2].replace(b"value b", b"valve b", 1), *lines[3:]])
    broken = b"".join([*lines[:3], b'{"type": "value", "owner": \n', *lines[4:]])
    header = json.loads(lines[0]) | {"version": 2, "mcpkit": "9.0.0"}
    future = b"".join([json.dumps(header).encode() + b"\n", *lines[1:]])

    assert "not those exported" in str(await refused(corrupted, plaintext=True))
    assert (await refused(broken, plaintext=True)).line == 4
    newer = await refused(future, plaintext=True)
    assert newer.line == 1
    assert "format version 2" in str(newer)
    assert "newer mcpkit" in str(newer)
    with pytest.raises(ExportFileError, match="plaintext, not sealed"):
        await import_memory(await fresh(), KEYRING, io.BytesIO(data), key=SealingKey.passphrase(PASSPHRASE))


async def test_the_global_scope_and_another_users_values_need_asking(store: Store) -> None:
    data = await exported(store, KEYRING, time.time())
    target = await fresh()
    with pytest.raises(ExportFileError, match="global scope") as no_global:
        await imported(target, KEYRING, data, time.time())
    with pytest.raises(ExportFileError, match="--map-user sam=NEW_USER_ID"):
        await imported(await fresh(), KEYRING, data, time.time(), allow_global=True, only_users=["nour"])
    report = await imported(
        await fresh(), KEYRING, data, time.time(), allow_global=True, only_users=["nour", "lee"], users={"sam": "lee"}
    )
    assert no_global.value.line == 6  # the global value comes last, after Nour's and Sam's
    assert report.imported == 5


async def test_a_full_quota_leaves_out_whole_values_and_says_which_lines(store: Store) -> None:
    data = await exported(store, KEYRING, time.time())
    target = await fresh()
    report = await imported(target, KEYRING, data, time.time(), allow_global=True, quota=Quota(values=2, bytes=None))
    kept = await values_in(target)

    assert report.over_quota == [4]  # Nour's third value
    assert "1 did not fit their bucket's quota" in str(report)
    assert "lines 4" in str(report)
    assert len(kept) == 3  # Nour's first two and Sam's, each whole
    assert all(value == {"text": f"value {key} " * 40} for (who, key), value in kept.items() if who == NOUR)


async def test_on_conflict_keeps_replaces_or_takes_the_newer(store: Store) -> None:
    data = await exported(store, KEYRING, time.time())
    outcomes = {}
    for policy in ("skip", "replace", "newer"):
        target, now = await fresh(), time.time()
        vault = Vault(target, KEYRING)
        await vault.write(Place(NOUR, "user"), "a", '"older, in the store"', None, now - 3600, None)
        await vault.write(Place(NOUR, "user"), "b", '"newer, in the store"', None, now + 3600, None)
        await imported(target, KEYRING, data, now, allow_global=True, on_conflict=policy)
        found = await values_in(target)
        outcomes[policy] = (found[(NOUR, "a")], found[(NOUR, "b")])

    from_file = {"text": "value a " * 40}, {"text": "value b " * 40}
    assert outcomes["skip"] == ("older, in the store", "newer, in the store")
    assert outcomes["replace"] == from_file
    assert outcomes["newer"] == (from_file[0], "newer, in the store")


def test_the_schema_shown_on_the_portability_page_is_the_one_shipped() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "portability.md").read_text()
    shown = page.split("```json\n", 1)[1].split("```", 1)[0]
    assert json.loads(shown) == schema()


async def test_a_key_file_is_used_byte_for_byte_even_when_it_ends_in_whitespace(store: Store, tmp_path: Path) -> None:
    """Random key bytes may end in a newline or a space: none is stripped, so such a key still has its 32 bytes and
    opens only what it sealed."""
    key_path, other_path = tmp_path / "export.key", tmp_path / "other.key"
    key_path.write_bytes(b"k" * 30 + b" \n")
    other_path.write_bytes(b"k" * 30 + b"  ")
    data = await exported(store, KEYRING, time.time(), key=SealingKey.key_file(key_path))
    report = await imported(
        await fresh(), KEYRING, data, time.time(), key=SealingKey.key_file(key_path), allow_global=True
    )
    assert report.imported == 5
    with pytest.raises(ExportFileError):
        await imported(
            await fresh(), KEYRING, data, time.time(), key=SealingKey.key_file(other_path), allow_global=True
        )


def _plaintext_file(lines: list[bytes]) -> bytes:
    """A plaintext export of ``lines`` (header, values, end) with its end record's digest made anew."""
    end = json.loads(lines[-1]) | {"digest": hashlib.sha256(b"".join(lines[1:-1])).hexdigest()}
    return b"".join([*lines[:-1], json.dumps(end).encode() + b"\n"])


async def test_a_record_without_provenance_is_sealed_as_an_import_and_a_bad_provenance_is_refused(store: Store) -> None:
    lines = (await exported(store, KEYRING, time.time(), plaintext=True)).splitlines(keepends=True)
    first = json.loads(lines[1])
    assert (first["provenance"], first["at"]) == (None, None)  # written at the storage layer, with no provenance
    target = await fresh()
    await imported(target, KEYRING, b"".join(lines), time.time(), plaintext=True, allow_global=True)
    place = Place(json.dumps(first["owner"]), first["bucket"])
    provenance = (await Vault(target, KEYRING).inspect(place, first["key"], time.time())).payload.provenance  # type: ignore[union-attr]
    assert provenance is not None
    assert (provenance.source, provenance.at, provenance.tool) == ("import", first["updated"], None)

    rumour = json.dumps(first | {"provenance": {"source": "rumour"}}).encode() + b"\n"
    refusal = await refused(_plaintext_file([lines[0], rumour, *lines[2:]]), plaintext=True)
    assert refusal.line == 2
    assert 'its provenance\'s "source" is not one of user, tool, model, import, external' in str(refusal)
    no_time = json.dumps(first | {"at": "yesterday"}).encode() + b"\n"
    assert 'its "at" is not a time in seconds since the epoch, from 1970 to the year 9999' in str(
        await refused(_plaintext_file([lines[0], no_time, *lines[2:]]), plaintext=True)
    )


async def test_an_export_leaves_out_the_history_copies_a_ttl_ended() -> None:
    """A key's change history keeps a copy of each version sealed until the key's next write; an export made after
    a version's ttl ended must not carry that copy, as it carries no value past its deadline."""
    kept = await fresh()
    vault, place, now = Vault(kept, KEYRING), Place(NOUR, "user"), time.time()
    await record(vault, place, "pin", "set", '"PIN-MARKER-1234"', now + 10, now, b"", 3, None)
    await record(vault, place, "pin", None, '"no ttl"', None, now + 1, b"", 3, None)
    later = now + 100
    exported_text = (await exported(kept, KEYRING, later, plaintext=True)).decode()
    assert "PIN-MARKER-1234" not in exported_text
    assert "no ttl" in exported_text
    soon = (await exported(kept, KEYRING, now + 2, plaintext=True)).decode()
    assert "PIN-MARKER-1234" in soon  # before its deadline the copy is the caller's, and moves with the rest


@pytest.mark.parametrize("n", [[1], 2**30, "32768"])
async def test_a_header_asking_for_other_scrypt_parameters_is_refused_before_any_work(store: Store, n: object) -> None:
    """The header's scrypt parameters are the file's, so a file could ask an import for gigabytes of memory or hours
    of work, or for a type that is no number: only this version's own are accepted, refused naming line 1."""
    lines = (await exported(store, KEYRING, time.time())).splitlines(keepends=True)
    header = json.loads(lines[0])
    sealing = next(part for part in header.values() if isinstance(part, dict) and "n" in part)
    sealing["n"] = n
    refusal = await refused(b"".join([json.dumps(header).encode() + b"\n", *lines[1:]]))
    assert refusal.line == 1
    assert "scrypt parameters" in str(refusal)
