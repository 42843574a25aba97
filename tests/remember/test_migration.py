"""Stores written by mcpkit 0.1 (plain keys and scope names): read where they are, moved by writes and `rotate`.

``tests/fixtures/v0.1`` holds a SQLite file and a Redis dump that mcpkit 0.1 itself wrote (``make.py`` there,
run against that release), with the secret, the keys and the writes it made.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from mcpkit import ManualClock, Server, StaticKeys
from mcpkit.testing import CallAs, running
from mcpkit_remember import RememberPlugin
from mcpkit_remember._plugin import make_store
from mcpkit_storage._cli import rotate
from mcpkit_storage.sealing._keyring import Keyring
from remember.support import mem
from remember.tools import MISSING, make_app

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "v0.1"
LEGACY = json.loads((FIXTURE / "store.json").read_text())
#: What 0.1 stored in plain text, which must be gone from the store once everything moved.
PLAIN_NAMES = [b"signature", b"draft:T-1", b"timezone", b"banner", b":v:user:", b":i:session"]


@pytest.fixture(params=["sqlite", "redis"])
def legacy_options(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The 0.1 store, copied for this test: a SQLite file, or the dump loaded under a fresh Redis prefix."""
    if request.param == "sqlite":
        path = tmp_path / "remember.db"
        shutil.copy(FIXTURE / "remember.db", path)
        yield {"type": "sqlite", "path": path}
        return
    url: str = request.getfixturevalue("redis_url")
    prefix: str = request.getfixturevalue("redis_prefix")
    client = redis.Redis.from_url(url)
    try:
        for name, item in LEGACY["redis"].items():
            full = prefix + name
            if item["type"] == "string":
                client.set(full, bytes.fromhex(item["content"]))
            elif item["type"] == "zset":
                client.zadd(full, {member: score for member, score in item["content"]})
            else:
                client.sadd(full, *item["content"])
    finally:
        client.close()
    yield {"type": "redis", "url": url, "redis_prefix": prefix}


def server(options: dict[str, Any]) -> Server:
    plugin = RememberPlugin.init(**options, secret=LEGACY["secret"], search=True)
    return Server([make_app([plugin])], auth=StaticKeys(LEGACY["keys"]), allow_anonymous=True)


def at_write_time() -> ManualClock:
    """The clock when 0.1 wrote the fixture: its one-hour value is still live."""
    return ManualClock(LEGACY["written_at"] + 60)


async def read_everything(call_as: CallAs) -> dict[tuple[str | None, str, str], Any]:
    return {
        (who, key, scope): await mem(call_as(who), "get", key=key, scope=scope)
        for who, key, _, scope, _ in LEGACY["writes"]
    }


WRITTEN = {(who, key, scope): value for who, key, value, scope, _ in LEGACY["writes"]}


def plain_names_left(options: dict[str, Any]) -> list[bytes]:
    """Which of 0.1's plain-text names can still be found in the store's bytes."""
    if options["type"] == "sqlite":
        with sqlite3.connect(options["path"]) as db:
            dump = "\n".join(db.iterdump()).encode()
    else:
        client = redis.Redis.from_url(options["url"])
        try:
            dump = b"\n".join(client.scan_iter(match=options["redis_prefix"] + "*"))
        finally:
            client.close()
    return [name for name in PLAIN_NAMES if name in dump]


async def test_a_store_of_mcpkit_0_1_reads_as_it_was(legacy_options: dict[str, Any]) -> None:
    clock = at_write_time()
    async with running(server(legacy_options), clock=clock) as call_as:
        assert await read_everything(call_as) == WRITTEN
        assert await mem(call_as("nour"), "list", scope="user") == ["draft:T-1", "signature", "soon"]
        clock.advance(3600)
        assert await mem(call_as("nour"), "get", key="soon", scope="user") == MISSING


async def test_writes_and_forgets_move_values_out_of_the_old_layout(legacy_options: dict[str, Any]) -> None:
    clock = at_write_time()
    async with running(server(legacy_options), clock=clock) as call_as:
        nour = call_as("nour")
        assert await mem(nour, "increment", key="visits", scope="user") == 1  # a new key, beside old ones
        await mem(nour, "set", key="signature", value="Nour, Tier 2", scope="user")
        assert await mem(nour, "forget", key="draft:T-1", scope="user") is True
        await mem(call_as("sam"), "set", key="signature", value="Sam, Tier 2", scope="user")
        assert await mem(nour, "list", scope="user") == ["signature", "soon", "visits"]
    async with running(server(legacy_options), clock=clock) as call_as:  # after a restart too
        assert await mem(call_as("nour"), "get", key="signature", scope="user") == "Nour, Tier 2"
        assert await mem(call_as("nour"), "get", key="draft:T-1", scope="user") == MISSING
        assert await mem(call_as("sam"), "get", key="signature", scope="user") == "Sam, Tier 2"
        assert await mem(call_as(None), "get", key="banner", scope="global") == "Email is down"


async def test_rotate_moves_everything_and_reads_stop_looking_for_the_old_layout(
    legacy_options: dict[str, Any],
) -> None:
    clock = at_write_time()
    plugin = RememberPlugin.init(**legacy_options, secret=LEGACY["secret"])
    store = make_store(plugin.store_config, legacy_options.get("redis_prefix", "mcpkit:remember:"))
    await store.open()
    try:
        assert store.legacy
        report = await rotate(store, Keyring([LEGACY["secret"]]), clock.now())
        assert (report.rotated, report.current, report.unreadable, report.expired) == (6, 0, 0, 0)
        assert not store.legacy
    finally:
        await store.close()
    assert plain_names_left(legacy_options) == []
    async with running(server(legacy_options), clock=clock) as call_as:
        assert await read_everything(call_as) == WRITTEN
    await store.open()  # the next start knows: no more looking for the old layout
    try:
        assert not store.legacy
    finally:
        await store.close()


@pytest.mark.parametrize("legacy_options", ["sqlite"], indirect=True)
async def test_a_0_1_copy_put_back_beside_a_current_value_never_wins(legacy_options: dict[str, Any]) -> None:
    clock = at_write_time()
    path = legacy_options["path"]
    with sqlite3.connect(path) as db:  # the 0.1 entry, as a backup holds it
        old_row = db.execute("SELECT * FROM remember_entries WHERE bucket = 'user' AND key = 'signature'").fetchone()
    async with running(server(legacy_options), clock=clock) as call_as:
        await mem(call_as("nour"), "set", key="signature", value="Nour, Tier 2", scope="user")  # moves it
    with sqlite3.connect(path) as db:  # someone with the backup puts the 0.1 entry back, and the marker with it
        columns = "owner, bucket, key, data, expires_at"  # 0.1's: no first-write time
        db.execute(f"INSERT OR REPLACE INTO remember_entries ({columns}) VALUES (?, ?, ?, ?, ?)", old_row)
        db.execute("INSERT OR REPLACE INTO remember_meta VALUES ('legacy', '1')")
    async with running(server(legacy_options), clock=clock) as call_as:
        assert await mem(call_as("nour"), "get", key="signature", scope="user") == "Nour, Tier 2"


async def test_rotate_keeps_looking_for_the_old_layout_while_expired_0_1_entries_remain(
    legacy_options: dict[str, Any],
) -> None:
    clock = at_write_time()
    clock.advance(3600)  # the 0.1 store's one-hour value has expired, but is still there
    plugin = RememberPlugin.init(**legacy_options, secret=LEGACY["secret"])
    store = make_store(plugin.store_config, legacy_options.get("redis_prefix", "mcpkit:remember:"))
    await store.open()
    try:
        report = await rotate(store, Keyring([LEGACY["secret"]]), clock.now())
        assert (report.rotated, report.expired) == (5, 1)
        assert store.legacy  # its plain name is still in the store until the clean-up deletes it
    finally:
        await store.close()


async def found(client: Any, query: str, scope: str = "user") -> list[str]:
    return [key for key, _, _ in await mem(client, "search", query=query, scope=scope)]


async def test_values_of_0_1_are_found_by_search_before_and_after_rotate(legacy_options: dict[str, Any]) -> None:
    clock = at_write_time()
    async with running(server(legacy_options), clock=clock) as call_as:
        nour = call_as("nour")
        assert await found(nour, "parcel") == ["draft:T-1"]  # unindexed, analysed from the opened 0.1 value
        await mem(nour, "set", key="note", value="another parcel, damaged", scope="user")  # indexed, beside it
        assert sorted(await found(nour, "parcel")) == ["draft:T-1", "note"]
        assert await found(call_as("sam"), "parcel") == []
        assert await found(call_as("sam"), "support") == ["signature"]
        clock.advance(3600)
        assert await found(nour, "short lived") == []  # expired 0.1 values are not found either
    plugin = RememberPlugin.init(**legacy_options, secret=LEGACY["secret"])
    store = make_store(plugin.store_config, legacy_options.get("redis_prefix", "mcpkit:remember:"))
    await store.open()
    try:
        # 0.1 values have no postings, and rotate keeps each value's: reindex gives them theirs as it moves them
        assert (await rotate(store, Keyring([LEGACY["secret"]]), clock.now(), reindex=True)).rotated == 5
    finally:
        await store.close()
    async with running(server(legacy_options), clock=clock) as call_as:
        assert sorted(await found(call_as("nour"), "parcel")) == ["draft:T-1", "note"]  # now from the index
        assert await found(call_as(None), "email", "global") == ["banner"]
