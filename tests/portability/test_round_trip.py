"""Issue 39, item 3: memory → SQLite → PostgreSQL → Redis → Redis Cluster → file → back, with nothing lost — every
JSON type, large values, time left to live, every scope, branched and compacted conversations, context blocks, each
value's provenance and event time — and search working after; importing the same file again changes nothing; an
export made before a secret rotation imports after it."""

from __future__ import annotations

import json
from pathlib import Path

import pydantic_core

from mcpkit import ManualClock
from mcpkit.testing import running
from mcpkit_remember import RememberPlugin
from mcpkit_storage import Keyring, Place, Vault, versions_key, versions_of
from mcpkit_storage.stores.memory._memory_store import MemoryStore
from mcpkit_storage.stores.redis._redis_cluster_store import RedisClusterStore
from mcpkit_storage.stores.redis._redis_store import RedisStore
from portability.support import (
    SAID,
    SAID_AT,
    VALUES,
    exported,
    exported_history,
    imported,
    mem,
    opened,
    read_everything,
    served,
    write_everything,
)
from remember.support import build_server, static_user_id, user_identity

SECRET = "portability-secret-A-0123456789abcdef"
ROTATED = "portability-secret-B-0123456789abcdef"


def values(data: bytes) -> list[bytes]:
    """The value records of an export, sealed lines opened: its header and end lines left out (they say when)."""
    return sorted(data.splitlines()[1:-1])


def _imported(line: bytes) -> bytes:
    """A record line as an import makes it: a value without provenance gets source ``import`` at its write time."""
    fields, value = line.split(b',"value":', 1)  # the value comes last, as it was kept
    record = json.loads(fields + b"}")
    if record["provenance"] is not None:
        return line
    origin = dict.fromkeys(("app", "tool", "client", "client_version", "session", "era"))
    record |= {"provenance": {"source": "import", **origin}, "at": record["updated"]}
    return pydantic_core.to_json(record)[:-1] + b',"value":' + value


async def test_every_store_passes_everything_on_and_the_callers_read_it_all_back(
    tmp_path: Path, postgres_url: str, redis_url: str, redis_prefix: str, redis_cluster: object, cluster_prefix: str
) -> None:
    clock = ManualClock()
    first, last = tmp_path / "first.db", tmp_path / "last.db"
    async with served(first, SECRET, clock) as call_as:
        await write_everything(call_as)
        before = await read_everything(call_as)
    now = clock.now()
    keyring = Keyring([SECRET])
    async with opened(f"sqlite:///{first}") as store:
        file = await exported(store, keyring, now, plaintext=True)
    files = [file]

    memory = MemoryStore()
    await memory.open()
    chain = [
        (memory, keyring),
        (None, Keyring([SECRET])),  # PostgreSQL
        (RedisStore(redis_url, prefix=redis_prefix), Keyring([SECRET])),
        (RedisClusterStore(redis_cluster.url, prefix=cluster_prefix), Keyring([SECRET], placed=True)),  # type: ignore[attr-defined]
    ]
    for store, ring in chain:
        if store is None:
            async with opened(postgres_url) as postgres:
                report = await imported(postgres, ring, files[-1], now, plaintext=True, allow_global=True)
                files.append(await exported(postgres, ring, now, plaintext=True))
        else:
            await store.open()
            report = await imported(store, ring, files[-1], now, plaintext=True, allow_global=True)
            files.append(await exported(store, ring, now, plaintext=True))
            await store.close()
        assert report.imported == len(values(file))
        assert not report.over_quota
    records = [json.loads(line) for line in values(file)]
    assert {(record["namespace"], record["scope"]) for record in records} == {
        ("", "user"),
        ("", "tool"),
        ("", "session"),
        ("", "global"),
        ("conversations.", "user"),  # the conversation's tree, branches and summary
        ("history.", "user"),  # its messages
        ("blocks.", "user"),  # a writable context block's text
        ("context.", "user"),  # a searchable context block's entries
    }
    by_key = {record["key"]: record for record in records}
    # When each key was first written travels too (issue 39): a number, never after its last write.
    assert all(0 < record["created"] <= record["updated"] for record in records)
    for key, _, source, at in SAID:  # the writer's own source and event time
        assert (by_key[key]["provenance"]["source"], by_key[key]["at"]) == (source, at)
        assert (by_key[key]["provenance"]["app"], by_key[key]["provenance"]["tool"]) == ("desk", "mem")
    assert (by_key["text"]["provenance"]["source"], by_key["text"]["at"]) == ("tool", by_key["text"]["updated"])
    # Each remember key's change history (on by default) travels as a record of its own, with no provenance of its own
    # (its versions carry theirs); the other records without one are of the plugins that keep none.
    histories = [record for record in records if record["key"].startswith(versions_key(""))]
    assert {record["key"] for record in histories} >= {versions_key(key) for key, _, _, _ in SAID}
    assert all(record["provenance"] is None and record["namespace"] == "" for record in histories)
    unrecorded = [record for record in records if record["provenance"] is None and record not in histories]
    assert all(record["at"] is None and record["namespace"] != "" for record in unrecorded)
    # The first import seals those with source "import" (and their write time as event time); nothing else changes.
    assert values(files[1]) == sorted(_imported(line) for line in values(file))
    for later in files[2:]:
        assert values(later) == values(files[1])  # the same records, provenance and time left, through every store

    rotated = Keyring([ROTATED])  # the servers' secret changed since the export
    async with opened(f"sqlite:///{last}") as store:
        report = await imported(store, rotated, files[-1], now, plaintext=True, allow_global=True)
        again = await imported(store, rotated, files[-1], now, plaintext=True, allow_global=True)
        sealed = sorted([record.entry.data async for record in store.scan()])
        once_more = await imported(store, rotated, files[-1], now, plaintext=True, allow_global=True)
        assert sorted([record.entry.data async for record in store.scan()]) == sealed
    assert (again.imported, again.unchanged) == (0, report.imported)
    assert once_more.imported == 0

    async with opened(f"sqlite:///{last}") as store:
        assert values(await exported(store, rotated, now, plaintext=True)) == values(files[-1])

    async with served(last, ROTATED, clock) as call_as:
        after = await read_everything(call_as)
    assert after == before  # provenance and event time too, read by the callers (``info``)
    assert before["stated info"] == ["user", 1_600_000_000.0, "desk", "mem"]
    assert before["fetched info"] == ["external", 1.65e9, "desk", "mem"]
    assert after["search"][0] == "large"  # search works: the postings were made anew
    assert after["soon"][2] - now == before["soon"][2] - now  # an hour left, not a new hour
    # What was compared holds everything written (a read that found nothing would compare equal too).
    assert [before[name][0] for name in ("null", "big", "object", "large")] == [
        None,
        2**62,
        VALUES["object"],
        VALUES["large"],
    ]
    assert before["global"] == "Closed on Friday"
    assert before["sam"] == "Sam's kettle"
    assert before["tool"][0] == {"tool": True}
    assert [message["content"] for message in before["history"]["messages"]] == [
        "Kettle refund?",
        "Yes, within 30 days.",
    ]
    assert before["conversations"]["conversations"][0]["branches"] == 2
    assert before["history search"]["results"]
    [said] = before["said in March"]["results"]  # found by the time it was said, which its text does not hold
    assert (said["message"]["content"], said["message"]["at"]) == ("The boiler broke down again.", SAID_AT)
    assert "Prefers email." in before["notes"]
    assert [hit["key"] for hit in before["knowledge"]["results"]] == ["kettle"]


async def test_a_keys_change_history_travels_as_it_was_with_its_sources(tmp_path: Path) -> None:
    clock = ManualClock()
    source, target = tmp_path / "kept.db", tmp_path / "moved.db"
    plugin = RememberPlugin.init(type="sqlite", path=source, secret=SECRET, history=3)
    async with running(build_server(plugin), clock=clock) as call_as:
        await mem(call_as, "nour", "set", key="tz", value="UTC", scope="user", source="user")
        clock.advance(10)
        await mem(call_as, "nour", "set", key="tz", value="CET", scope="user", source="external")
    now = clock.now()
    async with opened(f"sqlite:///{source}") as store:
        file = await exported(store, Keyring([SECRET]), now, plaintext=True)
    assert sorted(json.loads(line)["key"] for line in values(file)) == ["\x00versions:tz", "tz"]
    async with opened(f"sqlite:///{target}") as store:
        report = await imported(store, Keyring([ROTATED]), file, now, plaintext=True)
        place = Place(user_identity(static_user_id("nour")), "user")
        found = await Vault(store, Keyring([ROTATED])).read(place, versions_key("tz"), now)
    assert report.imported == 2
    assert found is not None
    history = [(version.event, version.value, version.provenance.source) for version in versions_of(found.value, now)]  # type: ignore[union-attr]
    assert history == [("set", "UTC", "user"), ("update", "CET", "external")]  # no import event added


async def test_an_imported_history_keeps_its_versions_time_left_on_the_importing_clock(tmp_path: Path) -> None:
    """A version with a minute left when exported has a minute left when imported an hour later: its deadline moves
    with the importing clock, as the entry's own does, so the history shows no ``expire`` that did not happen."""
    target = tmp_path / "moved.db"
    file, exported_at = await exported_history(tmp_path / "kept.db", SECRET, gap=10)
    later = exported_at + 3600
    place = Place(user_identity(static_user_id("nour")), "user")
    async with opened(f"sqlite:///{target}") as store:
        await imported(store, Keyring([SECRET]), file, later, plaintext=True)
        vault = Vault(store, Keyring([SECRET]))
        found = await vault.read(place, versions_key("otp"), later)
        assert found is not None
        assert [(v.event, v.value) for v in versions_of(found.value, later)] == [("set", "first"), ("update", "second")]
        deadlines = [v.expires_at for v in versions_of(found.value, later)]
        assert deadlines == [later + 50, later + 60]  # the time each had left at the export
        gone = later + 61
        assert [v.event for v in versions_of(found.value, gone)] == ["set", "update", "expire"]
