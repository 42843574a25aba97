"""Secret rotation (REMEMBER_SECRET="new,old"), `mcpkit remember rotate` and `mcpkit remember purge`."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from mcpkit import ManualClock
from mcpkit.testing import CallAs, running
from mcpkit_remember import RememberPlugin
from mcpkit_remember._plugin import make_store
from mcpkit_storage._cli import purge_user, rotate
from mcpkit_storage.backing._config import StoreConfig
from mcpkit_storage.base._scope import Place
from mcpkit_storage.stores._store import Record, Store
from mcpkit_storage.stores.sqlite._sqlite_store import SCAN_PAGE
from mcpkit_storage.vault._vault import Vault
from remember.support import (
    KEYS,
    NEW,
    OLD,
    SECRET,
    SECRET_B,
    build_server,
    keyring_for,
    mem,
    static_user_id,
    user_identity,
)
from remember.tools import MISSING

MCPKIT = str(Path(sys.executable).with_name("mcpkit"))
ROOT = Path(__file__).resolve().parents[2]
SCOPES = ("user", "session", "tool", "global")

BOTH = pytest.mark.parametrize("store_kind", ["sqlite", "redis", "redis-cluster"])


@asynccontextmanager
async def opened_store(store_options: dict[str, Any]) -> AsyncIterator[Store]:
    """Another handle on the data under test (the same file, the same Redis prefix)."""
    kind = store_options["type"]
    config = StoreConfig(kind, path=str(store_options.get("path") or "") or None, url=store_options.get("url"))
    store = make_store(config, store_options.get("redis_prefix", "mcpkit:remember:"))
    await store.open()
    try:
        yield store
    finally:
        await store.close()


async def records(store: Store) -> list[Record]:
    return [record async for record in store.scan()]


def serve(store_options: dict[str, Any], clock: ManualClock, secret: str | None = None) -> Any:
    """Serve the test tools and the memory tools on the shared store; the secret is REMEMBER_SECRET unless given."""
    plugin = RememberPlugin.init(**store_options, secret=secret, tools={"enabled": True})
    return running(build_server(plugin), clock=clock)


async def write_everywhere(callers: CallAs) -> None:
    for scope in SCOPES:
        await mem(callers("nour"), "set", key="k", value=f"nour {scope}", scope=scope)
    await mem(callers("sam"), "set", key="k", value="sam user", scope="user")
    await mem(callers("nour"), "increment", key="n", by=5, scope="user")


async def assert_everything_reads(callers: CallAs) -> None:
    for scope in SCOPES:
        assert await mem(callers("nour"), "get", key="k", scope=scope) == f"nour {scope}"
    assert await mem(callers("sam"), "get", key="k", scope="user") == "sam user"
    assert await mem(callers("nour"), "get", key="n", scope="user") == 5


def mcpkit(*args: str, secret: str | None, environ: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REMEMBER_")} | (environ or {})
    if secret is not None:
        env["REMEMBER_SECRET"] = secret
    return subprocess.run(
        [MCPKIT, "remember", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False
    )


def prefix_args(store_options: dict[str, Any]) -> list[str]:
    return ["--redis-prefix", store_options["redis_prefix"]] if "redis_prefix" in store_options else []


# -- rotation by reading -----------------------------------------------------------------------------------------


@BOTH
async def test_new_old_secrets_read_old_values_and_move_what_they_write_under_the_new_one(
    store_options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = ManualClock()
    monkeypatch.setenv("REMEMBER_SECRET", SECRET)
    async with serve(store_options, clock) as callers:
        await write_everywhere(callers)

    monkeypatch.setenv("REMEMBER_SECRET", f"{SECRET_B},{SECRET}")
    async with serve(store_options, clock) as callers:
        await assert_everything_reads(callers)
        assert await mem(callers("nour"), "list", scope="user") == ["k", "n"]
        assert await mem(callers("nour"), "increment", key="n", scope="user") == 6
        assert await mem(callers("nour"), "increment", key="n", scope="user", by=-1) == 5

    new_only, old_only = keyring_for(store_options, [SECRET_B]), keyring_for(store_options, [SECRET])
    async with opened_store(store_options) as store:
        found = await records(store)
    assert len(found) == 12  # the counter moved, not copied: one copy of each value and of its history (the default)
    sealed = [record.entry.data[1:5].hex() for record in found]
    # The counter and its history, written during the rotation, moved under the new secret; the values only read did
    # not, nor their histories.
    assert sorted(sealed) == sorted([new_only.primary_key_id] * 2 + [old_only.primary_key_id] * 10)

    async with opened_store(store_options) as store:
        report = await rotate(store, keyring_for(store_options, [SECRET_B, SECRET]), clock.now())
    assert (report.rotated, report.current) == (5, 1)
    monkeypatch.setenv("REMEMBER_SECRET", SECRET_B)
    async with serve(store_options, clock) as callers:
        await assert_everything_reads(callers)


@BOTH
async def test_a_write_during_rotation_replaces_the_old_value(
    store_options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = ManualClock()
    async with serve(store_options, clock, secret=SECRET) as callers:
        await mem(callers("nour"), "set", key="k", value="old", scope="user")
    monkeypatch.setenv("REMEMBER_SECRET", f"{SECRET_B},{SECRET}")
    async with serve(store_options, clock) as callers:
        await mem(callers("nour"), "set", key="k", value="new", scope="user")
        assert await mem(callers("nour"), "get", key="k", scope="user") == "new"
        assert await mem(callers("nour"), "list", scope="user") == ["k"]
        assert await mem(callers("nour"), "forget", key="k", scope="user") is True
        assert await mem(callers("nour"), "knows", key="k", scope="user") is False


# -- mcpkit remember rotate --------------------------------------------------------------------------------------


@BOTH
async def test_rotate_moves_every_entry_under_the_first_secret_and_counts(store_options: dict[str, Any]) -> None:
    clock = ManualClock()
    async with serve(store_options, clock, secret=SECRET) as callers:
        await write_everywhere(callers)
        await mem(callers("nour", protocol=OLD), "set", key="k", value="session of 2025", scope="session")
        await mem(callers("nour"), "set", key="gone", value=1, scope="user", ttl=3600)
    clock.advance(7200)  # Redis' own expiry runs on real time: the expired entry is still there to skip
    async with opened_store(store_options) as store:
        await store.put("fff." + "f" * 32, "user", "garbage", b"\x01not sealed by anyone here", None, clock.now())

        report = await rotate(store, keyring_for(store_options, [SECRET_B, SECRET]), clock.now())
        assert (report.rotated, report.current, report.unreadable, report.expired) == (7, 0, 1, 1)
        assert "rotated 7" in str(report)

        again = await rotate(store, keyring_for(store_options, [SECRET_B, SECRET]), clock.now())
        assert (again.rotated, again.current) == (0, 7)

    async with serve(store_options, clock, secret=SECRET_B) as callers:
        await assert_everything_reads(callers)
        assert await mem(callers("nour"), "get", key="gone", scope="user") == MISSING


@BOTH
async def test_rotate_keeps_when_each_key_was_first_written(store_options: dict[str, Any]) -> None:
    clock = ManualClock()
    async with serve(store_options, clock, secret=SECRET) as callers:
        await write_everywhere(callers)
    clock.advance(600)
    async with opened_store(store_options) as store:
        before = sorted(record.entry.created or 0.0 for record in await records(store))
        report = await rotate(store, keyring_for(store_options, [SECRET_B, SECRET]), clock.now())
        # Each value has its change history (the default), moved with it and not counted as a value.
        assert report.rotated == len(before) // 2 > 0
        assert sorted(record.entry.created or 0.0 for record in await records(store)) == before  # not the rotation's
    assert all(0 < created < clock.now() for created in before)


@pytest.mark.parametrize(
    "store_kind", ["redis", "redis-cluster"]
)  # the command (purge runs it on SQLite); rotate() on every store
async def test_the_rotate_command_reports_counts_and_the_new_secret_alone_reads_everything(
    store_options: dict[str, Any], store_url: str
) -> None:
    clock = ManualClock()
    async with serve(store_options, clock, secret=SECRET) as callers:
        await write_everywhere(callers)

    done = mcpkit("rotate", "--store", store_url, *prefix_args(store_options), secret=f"{SECRET_B},{SECRET}")
    assert done.returncode == 0, done.stderr
    assert "rotated 6, already current 0, unreadable 0" in done.stdout
    assert SECRET not in done.stdout + done.stderr
    assert SECRET_B not in done.stdout + done.stderr

    async with serve(store_options, clock, secret=SECRET_B) as callers:
        await assert_everything_reads(callers)


@pytest.mark.parametrize("store_kind", ["redis"])  # SQLite would fall back to the secret file beside it
def test_the_rotate_command_without_a_secret_says_to_set_one(store_options: dict[str, Any], store_url: str) -> None:
    done = mcpkit("rotate", "--store", store_url, *prefix_args(store_options), secret=None)
    assert done.returncode == 2  # a configuration mistake, as for `mcpkit run`
    assert "REMEMBER_SECRET" in done.stderr
    assert "Traceback" not in done.stderr


# -- mcpkit remember purge ---------------------------------------------------------------------------------------


async def write_for_purge(callers: CallAs) -> None:
    nour, sam = callers("nour", protocol=NEW), callers("sam", protocol=NEW)
    await mem(nour, "set", key="signature", value="Nour", scope="user")
    await mem(nour, "set", key="timezone", value="Europe/Paris", scope="user")
    await mem(nour, "set", key="ticket", value="T-1", scope="session")
    await mem(nour, "set", key="seen", value=["T-1"], scope="tool")
    await mem(nour, "set", key="seen", value=["T-2"], scope="tool", tool="mem_twin")
    await mem(nour, "set", key="banner", value="Outage", scope="global")
    await nour.call("remember_this", {"key": "likes", "value": "short replies", "scope": "user"})  # model notes
    await nour.call("remember_this", {"key": "mood", "value": "busy", "scope": "session"})
    await mem(callers("nour", protocol=OLD), "set", key="ticket", value="T-old", scope="session")
    await mem(sam, "set", key="signature", value="Sam", scope="user")
    await mem(sam, "set", key="ticket", value="T-9", scope="session")


async def assert_purged(callers: CallAs) -> None:
    nour, sam = callers("nour", protocol=NEW), callers("sam", protocol=NEW)
    for scope in ("user", "session", "tool"):
        assert await mem(nour, "list", scope=scope) == []
    assert await mem(nour, "list", scope="tool", tool="mem_twin") == []
    for scope in ("user", "session"):
        assert (await nour.call("list_memories", {"scope": scope}))["keys"] == []
    assert await mem(nour, "get", key="banner", scope="global") == "Outage"
    assert await mem(sam, "get", key="signature", scope="user") == "Sam"
    assert await mem(sam, "get", key="ticket", scope="session") == "T-9"


@BOTH
async def test_purge_deletes_everything_kept_under_one_user_id_and_nothing_else(
    store_options: dict[str, Any],
) -> None:
    clock = ManualClock()
    async with serve(store_options, clock, secret=SECRET) as callers:
        await write_for_purge(callers)
    rotating = keyring_for(store_options, [SECRET_B, SECRET])
    async with running(build_server(RememberPlugin.init(**store_options, secret=[SECRET_B, SECRET])), clock=clock) as c:
        await mem(c("nour"), "set", key="language", value="fr", scope="user")  # sealed under the new secret
    nours = set(rotating.owners_for(user_identity(static_user_id("nour"))))

    async with opened_store(store_options) as store:
        assert {record.owner for record in await records(store)} >= nours  # under both secrets now
        report = await purge_user(store, rotating, static_user_id("nour"))
        assert report.deleted == 16  # 5 values, 2 model notes, 1 under the new secret, each with its history
        assert static_user_id("nour") in str(report)
        assert [record for record in await records(store) if record.owner in nours] == []  # no copy left behind
        assert (await purge_user(store, rotating, static_user_id("nour"))).deleted == 0
    async with serve(store_options, clock, secret=SECRET) as callers:
        await assert_purged(callers)


@pytest.mark.parametrize("store_kind", ["sqlite"])  # the command once; the store-level purge runs on both
async def test_the_purge_command_reports_the_count(store_options: dict[str, Any], store_url: str) -> None:
    clock = ManualClock()
    async with serve(store_options, clock, secret=SECRET) as callers:
        await write_for_purge(callers)

    user_id = static_user_id("nour")
    done = mcpkit("purge", "--store", store_url, "--user", user_id, *prefix_args(store_options), secret=SECRET)
    assert done.returncode == 0, done.stderr
    # 7 values, each with its change history (the default)
    assert f"deleted 14 entries (values and their histories) kept under user id '{user_id}'" in done.stdout

    async with serve(store_options, clock, secret=SECRET) as callers:
        await assert_purged(callers)


@pytest.mark.parametrize("store_kind", ["sqlite"])
async def test_purge_takes_a_static_keys_label_and_a_label_given_as_the_user_id_deletes_nothing_and_says_why(
    store_options: dict[str, Any], store_url: str
) -> None:
    clock = ManualClock()
    async with serve(store_options, clock, secret=SECRET) as callers:
        await write_for_purge(callers)

    by_label = mcpkit("purge", "--store", store_url, "--user", "nour", secret=SECRET)
    assert by_label.returncode == 3, by_label.stderr  # nothing matched: not a success, not a failure
    assert by_label.stdout == ""
    assert "nothing is kept under user id 'nour', so nothing was deleted" in by_label.stderr
    assert "run again with --key-label nour --keys-from VARIABLE" in by_label.stderr
    async with serve(store_options, clock, secret=SECRET) as callers:
        assert await mem(callers("nour", protocol=NEW), "get", key="signature", scope="user") == "Nour"

    keys = {"HELPDESK_KEYS": ",".join(f"{label}={key}" for label, key in KEYS.items())}
    label_args = ("purge", "--store", store_url, "--key-label", "nour", "--keys-from", "HELPDESK_KEYS")
    done = mcpkit(*label_args, secret=SECRET, environ=keys)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(
        f"deleted 14 entries (values and their histories) kept under user id '{static_user_id('nour')}' "
        "(the key labelled 'nour' in HELPDESK_KEYS)\n"
    )
    async with serve(store_options, clock, secret=SECRET) as callers:
        await assert_purged(callers)

    again = mcpkit(*label_args, secret=SECRET, environ=keys)
    assert again.returncode == 3, again.stderr
    assert "if it was purged already, there is nothing left to do" in again.stderr
    assert "Check that HELPDESK_KEYS holds the key labelled 'nour' that the servers use" in again.stderr


class Watched:
    """A store whose scan counts what it handed out, and which notes how far the scan was at the first write."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.scanned = 0
        self.scanned_at_first_write: int | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def scan(self) -> AsyncIterator[Record]:
        async for record in self._store.scan():
            self.scanned += 1
            yield record

    async def swap(self, *args: Any, **kwargs: Any) -> bool:
        if self.scanned_at_first_write is None:
            self.scanned_at_first_write = self.scanned
        return bool(await self._store.swap(*args, **kwargs))


@pytest.mark.parametrize("store_kind", ["sqlite"])
async def test_rotate_streams_the_store_instead_of_reading_it_all_first(store_options: dict[str, Any]) -> None:
    clock = ManualClock()
    plugin = RememberPlugin.init(**store_options, secret=SECRET)
    async with opened_store(store_options) as store:
        vault = Vault(store, keyring_for(store_options, [SECRET]))
        for number in range(1200):  # more than two pages of the SQLite scan
            place = Place(user_identity(f"user-{number}"), "user")
            await vault.write(place, "k", '"v"', None, clock.now(), plugin.quota)
        watched = Watched(store)
        report = await rotate(watched, keyring_for(store_options, [SECRET_B, SECRET]), clock.now())  # type: ignore[arg-type]
    assert report.rotated == 1200
    assert watched.scanned_at_first_write is not None
    assert watched.scanned_at_first_write <= SCAN_PAGE  # the first move came before the second page was read
