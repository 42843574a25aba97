"""A rotation of the secret and the servers it could leave behind (issue 35): `mcpkit remember rotate` says before
it runs what every running server needs, and refuses while a server seen on the store lacks the new secret; a
server that lacks the secret the store was rotated to says so in its log once per key id and refuses calls on the
store (REMEMBER_STORE_UNAVAILABLE) rather than answer that nothing is kept."""

from __future__ import annotations

import logging
import subprocess
from typing import Any

import pytest

from mcpkit import ManualClock
from mcpkit_storage._cli import rotate
from mcpkit_storage.base import QUOTA_NOTE
from mcpkit_storage.sealing._secret_watch import FORGET_SECONDS, LOOK_SECONDS, held_ids
from remember.support import SECRET, SECRET_B, keyring_for, mem, refused
from remember.test_rotation import MCPKIT, ROOT, mcpkit, opened_store, prefix_args, records, serve
from remember.tools import MISSING

SECRET_C = "remember-test-secret-C-1357924680"
LEFT_BEHIND = "was rotated to a secret this server does not hold"

SQLITE_AND_REDIS = pytest.mark.parametrize("store_kind", ["sqlite", "redis"])


def key_id(store_options: dict[str, Any], secret: str) -> str:
    return keyring_for(store_options, [secret]).primary_key_id


def said_about(caplog: pytest.LogCaptureFixture, key: str) -> list[str]:
    """The ERROR lines that say this server lacks the secret with key id ``key``."""
    lines = [record.getMessage() for record in caplog.records if record.levelno == logging.ERROR]
    return [line for line in lines if LEFT_BEHIND in line and f"(key id {key};" in line]


@SQLITE_AND_REDIS
async def test_a_server_left_behind_by_a_rotation_refuses_calls_and_says_so_once_per_key_id(
    store_options: dict[str, Any], store_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    clock = ManualClock()
    store = ["--store", store_url, *prefix_args(store_options)]
    async with serve(store_options, clock, SECRET) as behind, serve(store_options, clock, SECRET) as also_behind:
        for key in ("a", "b", "c"):
            await mem(behind("nour"), "set", key=key, value=f"kept {key}", scope="user")
        moved = mcpkit("rotate", *store, "--force", secret=f"{SECRET_B},{SECRET}")
        clock.advance(LOOK_SECONDS)  # the next call reads the store's notes again
        answers = [
            await refused(behind("nour"), "get", key="a", scope="user"),
            await refused(behind("nour"), "get", key="b", scope="user"),
            await refused(behind("nour"), "list", scope="user"),
            await refused(behind("nour"), "set", key="d", value="lost?", scope="user"),
            await refused(also_behind("nour"), "increment", key="n", scope="user"),  # another plugin instance
        ]
        moved_again = mcpkit("rotate", *store, "--force", secret=f"{SECRET_C},{SECRET_B}")
        clock.advance(LOOK_SECONDS)
        answers.append(await refused(behind("sam"), "get", key="a", scope="user"))
    async with serve(store_options, clock, [SECRET_C, SECRET_B]) as caught_up:  # type: ignore[arg-type]
        kept = [await mem(caught_up("nour"), "get", key=key, scope="user") for key in ("a", "b", "c", "d")]

    assert (moved.returncode, moved_again.returncode) == (0, 0), moved.stderr + moved_again.stderr
    assert {answer.code for answer in answers} == {"REMEMBER_STORE_UNAVAILABLE"}
    assert answers[0].message.startswith("The memory store is unavailable right now, so nothing was read or changed.")
    assert kept == ["kept a", "kept b", "kept c", MISSING]  # nothing was lost, and the refused write wrote nothing
    # once per key id however many values, calls and plugin instances met it: naming it, what happened, what to do
    [first] = said_about(caplog, key_id(store_options, SECRET_B))
    [second] = said_about(caplog, key_id(store_options, SECRET_C))
    assert f"this server holds key ids {key_id(store_options, SECRET)})" in first
    assert "`mcpkit remember rotate` moved values under it" in first
    assert "restart it with REMEMBER_SECRET listing the new secret first (new,old)" in second
    assert "docs/stores.md#rotating-the-secret" in second
    for secret_or_value in (SECRET, SECRET_B, SECRET_C, "kept a"):
        assert secret_or_value not in caplog.text


@SQLITE_AND_REDIS
async def test_rotate_says_first_what_every_server_needs_and_refuses_while_a_server_lacks_the_new_secret(
    store_options: dict[str, Any], store_url: str
) -> None:
    clock = ManualClock()
    old, new = key_id(store_options, SECRET), key_id(store_options, SECRET_B)
    store = ["--store", store_url, *prefix_args(store_options)]
    async with serve(store_options, clock, SECRET) as behind:
        await mem(behind("nour"), "set", key="k", value="v", scope="user")
        refused_run = mcpkit("rotate", *store, secret=f"{SECRET_B},{SECRET}")
        async with opened_store(store_options) as opened:
            sealed = {record.entry.data[1:5].hex() for record in await records(opened)}
    async with serve(store_options, clock, [SECRET, SECRET_B]) as step_one:  # type: ignore[arg-type]
        done = mcpkit("rotate", *store, secret=f"{SECRET_B},{SECRET}")
        read_after = await mem(step_one("nour"), "get", key="k", scope="user")

    assert refused_run.returncode == 2  # a configuration mistake, as for `mcpkit run`
    assert f"This moves every value under the secret with key id {new}" in refused_run.stdout
    assert "Every running server must hold that secret already (REMEMBER_SECRET=old,new, then new,old" in (
        refused_run.stdout
    )
    assert f"in the last 5 minutes: key ids {old} (" in refused_run.stdout
    assert refused_run.stderr.startswith("mcpkit remember: Nothing was moved: a server that used this store")
    assert f"holds key id(s) {old}, not {new}" in refused_run.stderr
    assert "--force" in refused_run.stderr
    assert sealed == {old}  # nothing moved
    assert done.returncode == 0, done.stderr
    assert f"key ids {old}, {new} (" in done.stdout  # the server of step 1; the stopped one took its note out
    assert f"key ids {old} (" not in done.stdout
    assert "rotated 1, already current 0" in done.stdout
    assert read_after == "v"


def test_rotate_and_reindex_help_say_what_every_running_server_needs() -> None:
    for command in ("rotate", "reindex"):
        done = subprocess.run(
            [MCPKIT, "remember", command, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
        )
        text = " ".join(done.stdout.split())
        assert "Every running server must hold the new secret already (REMEMBER_SECRET=old,new, then new,old" in text
        assert "refuses, with exit code 2, when a server seen in the last 5 minutes lacks the new one" in text
        assert "--force" in text


@pytest.mark.parametrize("store_kind", ["sqlite"])
async def test_a_server_notes_its_secrets_until_it_stops_and_forgets_the_notes_of_servers_gone_an_hour(
    store_options: dict[str, Any],
) -> None:
    clock = ManualClock()
    async with opened_store(store_options) as store:
        await store.note("held:gone:0a1b2c3d", repr(clock.now() - FORGET_SECONDS - 1))
        await store.note("held:recent:0a1b2c3d", repr(clock.now() - 600))
    async with serve(store_options, clock, SECRET), opened_store(store_options) as store:
        serving = await store.notes()
    async with opened_store(store_options) as store:
        stopped = await store.notes()

    ours = (key_id(store_options, SECRET),)
    serving = {name: note for name, note in serving.items() if not name.startswith(QUOTA_NOTE)}  # the quota stays
    assert sorted(held_ids(name) or () for name in serving) == sorted([("0a1b2c3d",), ours])
    assert float(serving[next(name for name in serving if held_ids(name) == ours)]) == clock.now()
    assert [name for name in stopped if not name.startswith(QUOTA_NOTE)] == ["held:recent:0a1b2c3d"]


@pytest.mark.parametrize("store_kind", ["sqlite"])
async def test_commands_given_secrets_without_the_one_the_store_was_rotated_to_say_so(
    store_options: dict[str, Any], store_url: str
) -> None:
    clock = ManualClock()
    async with serve(store_options, clock, SECRET) as callers:
        await mem(callers("nour"), "set", key="k", value="v", scope="user")
    async with opened_store(store_options) as store:
        await rotate(store, keyring_for(store_options, [SECRET_B, SECRET]), clock.now())
    new = key_id(store_options, SECRET_B)

    rotating = mcpkit("rotate", "--store", store_url, secret=f"{SECRET_C},{SECRET}")
    purging = mcpkit("purge", "--store", store_url, "--user", "someone", secret=SECRET)

    assert rotating.returncode == 2
    assert f"last rotated to the secret with key id {new}, which REMEMBER_SECRET does not list" in rotating.stderr
    assert "add that secret to REMEMBER_SECRET, or pass --force if it is lost" in rotating.stderr
    assert f"warning: the store's values were last rotated to the secret with key id {new}" in purging.stderr
    assert "add that secret to REMEMBER_SECRET, and purge again" in purging.stderr
