"""Encryption at rest: what the stores hold reveals no value, key, tool name, user id or session id;
moved ciphertexts don't open."""

from __future__ import annotations

import logging
import re
import sqlite3
from pathlib import Path

import pytest
import redis

import mcpkit_storage.backing._backing as backing
from mcpkit import ManualClock, Server
from mcpkit.testing import CallAs, running
from mcpkit_helpdesk import create_server as help_desk
from mcpkit_remember import RememberPlugin
from mcpkit_storage.vault._vault import Vault
from remember.support import (
    KEYS,
    NEW,
    OLD,
    SECRET,
    SECRET_B,
    address_of,
    build_server,
    jwt_token,
    mem,
    refused,
    static_user_id,
    store_of,
    user_identity,
)
from remember.tools import MISSING

JWT_SUB = "nour.haddad@example.org"


async def fill(callers: CallAs) -> list[bytes]:
    """Store distinctive values in every scope, both eras, as three callers; return what must not leak."""
    nour_new, nour_old = callers("nour", protocol=NEW), callers("nour", protocol=OLD)
    jwt_new = callers.token(jwt_token(JWT_SUB), protocol=NEW)
    anonymous_old = callers(None, protocol=OLD)
    needles: list[str] = [static_user_id("nour"), JWT_SUB]
    for number, (client, scopes) in enumerate(
        [
            (nour_new, ("user", "session", "tool", "global")),
            (nour_old, ("session", "tool")),
            (jwt_new, ("user", "session", "tool")),
            (anonymous_old, ("session", "tool")),
        ]
    ):
        for scope in scopes:
            plaintext = f"plaintext-{number}-{scope}-ultramarine"
            await mem(client, "set", key=f"draft:T-{scope}-cerulean", value={"secret": plaintext}, scope=scope)
            await mem(client, "increment", key=f"counter-{scope}-vermilion", by=987654321, scope=scope)
            needles += [plaintext, f"draft:T-{scope}-cerulean", f"counter-{scope}-vermilion"]
    needles += ["987654321", "cerulean", "vermilion", "tool.mem", "session", "global"]
    for client in (nour_old, anonymous_old):
        session_id = (await client.call("whoami"))["session_id"]
        assert session_id
        needles.append(session_id)
    return [needle.encode() for needle in needles]


def db_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("remember.db*"))


def assert_hidden(needles: list[bytes], haystack: bytes, where: str) -> None:
    for needle in needles:
        assert needle not in haystack, f"{needle!r} is readable in {where}"


async def test_the_sqlite_file_holds_no_value_user_id_or_session_id(tmp_path: Path) -> None:
    database = tmp_path / "remember.db"
    server = build_server(RememberPlugin.init(type="sqlite", path=database, secret=SECRET))
    async with running(server, clock=ManualClock()) as callers:
        needles = await fill(callers)
        files = db_files(tmp_path)
        assert database.with_name("remember.db-wal") in files  # WAL: recent writes sit in the -wal file
        for path in files:
            assert_hidden(needles, path.read_bytes(), path.name)
        with sqlite3.connect(database) as reader:
            assert_hidden(needles, "\n".join(reader.iterdump()).encode(), "a SQL dump")
            rows = reader.execute("SELECT owner, bucket, key, data FROM remember_entries").fetchall()
        assert len(rows) > 10
        for owner, bucket, key, data in rows:
            assert_hidden(needles, b"|".join([owner.encode(), bucket.encode(), key.encode(), bytes(data)]), "a row")
    for path in db_files(tmp_path):  # after the checkpoint at close
        assert_hidden(needles, path.read_bytes(), path.name)


async def test_the_redis_keys_hold_no_value_user_id_or_session_id(redis_url: str, redis_prefix: str) -> None:
    server = build_server(RememberPlugin.init(type="redis", url=redis_url, redis_prefix=redis_prefix, secret=SECRET))
    async with running(server, clock=ManualClock()) as callers:
        needles = await fill(callers)
    client = redis.Redis.from_url(redis_url)
    try:
        layout = f"{redis_prefix}layout".encode()  # the store's layout marker: no owner, no data
        names = [name for name in client.scan_iter(match=f"{redis_prefix}*", count=1000) if name != layout]
        assert len(names) > 10
        tagged = re.compile(re.escape(redis_prefix).encode() + rb"\{[0-9a-f]{32}\}:")
        notes = f"{redis_prefix}notes".encode()  # the store's notes (the quota import holds): no owner, no data
        assert all(tagged.match(name) for name in names if name != notes)  # a hash tag per owner: Cluster-ready
        dumped = []
        for name in names:
            kind = client.type(name)
            if kind == b"string":
                content = [client.get(name)]
            elif kind == b"zset":
                content = [member for member, _ in client.zrange(name, 0, -1, withscores=True)]
            elif kind == b"set":
                content = list(client.smembers(name))
            elif kind == b"hash":
                content = [part for pair in client.hgetall(name).items() for part in pair]
            else:
                raise AssertionError(f"unexpected Redis type {kind!r} at {name!r}")
            dumped.append(name + b"=" + b"|".join(c for c in content if c is not None))
    finally:
        client.close()
    assert len(dumped) == len(names)
    assert_hidden(needles, b"\n".join(dumped), "Redis")


# -- a ciphertext moved to another slot does not open ----------------------------------------------------------------


@pytest.mark.parametrize("mcp_protocol", [NEW])
async def test_a_ciphertext_swapped_between_two_callers_reads_as_missing_and_is_logged_once(
    call_as: CallAs, mcpkit_server: Server, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    nour, sam = call_as("nour"), call_as("sam")
    await mem(nour, "set", key="signature", value="Nour, Help Desk", scope="user")
    await mem(sam, "set", key="signature", value="Sam, Help Desk", scope="user")

    store = store_of(mcpkit_server)
    nours = address_of(mcpkit_server, user_identity(static_user_id("nour")), "user", "signature")
    sams = address_of(mcpkit_server, user_identity(static_user_id("sam")), "user", "signature")
    now = clock.now()
    nour_entry = await store.get(*nours, now)
    sam_entry = await store.get(*sams, now)
    assert nour_entry is not None
    assert sam_entry is not None
    await store.put(*nours, sam_entry.data, None, now)
    await store.put(*sams, nour_entry.data, None, now)

    caplog.set_level(logging.WARNING, logger="mcpkit.remember")
    for _ in range(3):
        assert await mem(nour, "get", key="signature", scope="user") == MISSING
        assert await mem(nour, "knows", key="signature", scope="user") is False
        assert await mem(sam, "get", key="signature", scope="user") == MISSING

    warnings = [r for r in caplog.records if r.name == "mcpkit.remember" and r.levelno == logging.WARNING]
    assert len(warnings) == 2, [r.getMessage() for r in warnings]  # once per owner and scope, not per read
    for record in warnings:
        message = record.getMessage()
        assert "user scope" in message
        assert "REMEMBER_SECRET" in message  # the hint: did the secret change?
        for secret in ("Nour, Help Desk", "Sam, Help Desk", static_user_id("nour"), static_user_id("sam")):
            assert secret not in message

    await mem(nour, "set", key="signature", value="Nour again", scope="user")  # the slot is usable again
    assert await mem(nour, "get", key="signature", scope="user") == "Nour again"


@pytest.mark.parametrize("mcp_protocol", [NEW])
async def test_a_ciphertext_copied_to_another_key_or_scope_of_the_same_caller_does_not_open(
    call_as: CallAs, mcpkit_server: Server, clock: ManualClock
) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="role", value="admin", scope="user")
    store = store_of(mcpkit_server)
    nour_id = user_identity(static_user_id("nour"))
    entry = await store.get(*address_of(mcpkit_server, nour_id, "user", "role"), clock.now())
    assert entry is not None
    for identity, bucket, key in [
        (nour_id, "user", "other"),
        (nour_id, "session", "role"),
        (nour_id, "tool.mem", "role"),
        ('["g"]', "global", "role"),
    ]:
        await store.put(*address_of(mcpkit_server, identity, bucket, key), entry.data, None, clock.now())

    assert await mem(nour, "get", key="other", scope="user") == MISSING
    assert await mem(nour, "get", key="role", scope="session") == MISSING
    assert await mem(nour, "get", key="role", scope="tool") == MISSING
    assert await mem(call_as(None), "get", key="role", scope="global") == MISSING
    assert await mem(nour, "get", key="role", scope="user") == "admin"


@pytest.mark.parametrize("mcp_protocol", [NEW])
@pytest.mark.parametrize("store_kind", ["memory"])
async def test_a_corrupted_ciphertext_reads_as_missing_and_update_starts_afresh(
    call_as: CallAs, mcpkit_server: Server, clock: ManualClock
) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="n", value=41, scope="user")
    store = store_of(mcpkit_server)
    address = address_of(mcpkit_server, user_identity(static_user_id("nour")), "user", "n")
    entry = await store.get(*address, clock.now())
    assert entry is not None
    flipped = entry.data[:-1] + bytes([entry.data[-1] ^ 1])
    await store.put(*address, flipped, None, clock.now())
    assert await mem(nour, "get", key="n", scope="user") == MISSING
    await store.put(*address, b"\x01short", None, clock.now())
    assert await mem(nour, "get", key="n", scope="user") == MISSING
    assert await mem(nour, "knows", key="n", scope="user") is False


# -- where the secret comes from -------------------------------------------------------------------------------------


async def test_the_memory_store_makes_up_a_secret_when_none_is_set() -> None:
    async with running(build_server(RememberPlugin.init(type="memory")), clock=ManualClock()) as callers:
        await mem(callers("nour"), "set", key="k", value="v", scope="user")
        assert await mem(callers("nour"), "get", key="k", scope="user") == "v"


@pytest.mark.parametrize("env_secret", [None, "", "   "])
async def test_the_sqlite_store_creates_a_private_secret_file_beside_its_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, env_secret: str | None
) -> None:
    if env_secret is not None:
        monkeypatch.setenv("REMEMBER_SECRET", env_secret)  # empty counts as unset
    database = tmp_path / "remember.db"
    secret_file = tmp_path / "remember.db.secret"
    caplog.set_level(logging.WARNING, logger="mcpkit.remember")
    clock = ManualClock()
    async with running(build_server(RememberPlugin.init(type="sqlite", path=database)), clock=clock) as callers:
        await mem(callers("nour"), "set", key="k", value="kept", scope="user")
    assert secret_file.is_file()
    assert secret_file.stat().st_mode & 0o777 == 0o600
    assert len(secret_file.read_text().strip()) >= 32
    assert any(str(secret_file) in record.getMessage() for record in caplog.records)
    first_secret = secret_file.read_text()

    async with running(build_server(RememberPlugin.init(type="sqlite", path=database)), clock=clock) as callers:
        assert await mem(callers("nour"), "get", key="k", scope="user") == "kept"  # read with the same file
    assert secret_file.read_text() == first_secret


async def test_a_configured_secret_means_no_secret_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REMEMBER_SECRET", SECRET)
    database = tmp_path / "remember.db"
    clock = ManualClock()
    async with running(build_server(RememberPlugin.init(type="sqlite", path=database)), clock=clock) as callers:
        await mem(callers("nour"), "set", key="k", value="kept", scope="user")
    assert not (tmp_path / "remember.db.secret").exists()
    monkeypatch.delenv("REMEMBER_SECRET")
    async with running(
        build_server(RememberPlugin.init(type="sqlite", path=database, secret=SECRET)), clock=clock
    ) as c:
        assert await mem(c("nour"), "get", key="k", scope="user") == "kept"  # env and init(secret=) agree


@pytest.mark.parametrize("env_secret", [None, "", "  "])
def test_the_redis_store_refuses_to_start_without_a_secret(
    redis_url: str, redis_prefix: str, monkeypatch: pytest.MonkeyPatch, env_secret: str | None
) -> None:
    if env_secret is not None:
        monkeypatch.setenv("REMEMBER_SECRET", env_secret)
    plugin = RememberPlugin.init(type="redis", url=redis_url, redis_prefix=redis_prefix)
    with pytest.raises(Exception, match="REMEMBER_SECRET") as refusal:
        build_server(plugin)
    assert type(refusal.value).__name__ == "ConfigurationError"


@pytest.mark.parametrize("secret", ["short", "fifteen-chars-x", "0123456789abcde"])
def test_secrets_shorter_than_16_characters_are_refused(secret: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(Exception, match="at least 16") as by_argument:
        build_server(RememberPlugin.init(type="memory", secret=secret))
    assert type(by_argument.value).__name__ == "ConfigurationError"
    monkeypatch.setenv("REMEMBER_SECRET", secret)
    with pytest.raises(Exception, match="at least 16"):
        build_server(RememberPlugin.init(type="memory"))
    monkeypatch.setenv("REMEMBER_SECRET", f"{SECRET},{secret}")  # an old secret in a rotation too
    with pytest.raises(Exception, match="#2"):
        build_server(RememberPlugin.init(type="memory"))


def test_a_secret_of_16_characters_is_accepted() -> None:
    build_server(RememberPlugin.init(type="memory", secret="0123456789abcdef"))


# -- where the store comes from --------------------------------------------------------------------------------------


async def test_remember_store_env_picks_an_absolute_sqlite_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = tmp_path / "from-env.db"
    monkeypatch.setenv("REMEMBER_STORE", f"sqlite:///{database}")  # sqlite:////abs/path
    monkeypatch.setenv("REMEMBER_SECRET", SECRET)
    clock = ManualClock()
    async with running(build_server(RememberPlugin.init()), clock=clock, store=None) as callers:
        await mem(callers("nour"), "set", key="k", value="in the file", scope="user")
    assert database.is_file()
    async with running(build_server(RememberPlugin.init(type="sqlite", path=database)), clock=clock) as callers:
        assert await mem(callers("nour"), "get", key="k", scope="user") == "in the file"


async def test_remember_store_env_picks_a_relative_sqlite_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REMEMBER_STORE", "sqlite:///relative.db")
    async with running(build_server(RememberPlugin.init()), clock=ManualClock(), store=None) as callers:
        await mem(callers("nour"), "set", key="k", value=1, scope="user")
    assert (tmp_path / "relative.db").is_file()
    assert (tmp_path / "relative.db.secret").is_file()  # no REMEMBER_SECRET: the secret file


async def test_remember_store_env_picks_redis_with_the_env_secret(
    redis_url: str, redis_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REMEMBER_STORE", redis_url)
    monkeypatch.setenv("REMEMBER_SECRET", SECRET)
    clock = ManualClock()
    async with running(
        build_server(RememberPlugin.init(redis_prefix=redis_prefix)), clock=clock, store=None
    ) as callers:
        await mem(callers("nour"), "set", key="k", value="in redis", scope="user")
    monkeypatch.delenv("REMEMBER_STORE")
    monkeypatch.delenv("REMEMBER_SECRET")
    plugin = RememberPlugin.init(type="redis", url=redis_url, redis_prefix=redis_prefix, secret=SECRET)
    async with running(build_server(plugin), clock=clock) as callers:
        assert await mem(callers("nour"), "get", key="k", scope="user") == "in redis"


async def test_remember_store_env_memory_and_unset_mean_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    for value in ("memory", None):
        if value is not None:
            monkeypatch.setenv("REMEMBER_STORE", value)
        plugin = RememberPlugin.init()
        assert plugin.store_config.type == "memory"
        async with running(build_server(plugin), clock=ManualClock(), store=None) as callers:
            await mem(callers("nour"), "set", key="k", value=1, scope="user")
            assert await mem(callers("nour"), "get", key="k", scope="user") == 1


async def test_a_wrong_secret_is_logged_once_per_process_however_many_plugins_starts_and_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    store = f"sqlite:///{tmp_path / 'helpdesk.db'}"  # the help desk: four plugins on one store
    monkeypatch.setenv("REMEMBER_SECRET", SECRET)
    async with running(help_desk(store, KEYS)) as callers:
        await callers("nour").call("set_signature", {"signature": "Nour"})
        await callers("nour").call("remember_this", {"key": "tone", "value": "warm", "scope": "user"})

    def wrong_secret_warnings() -> list[str]:
        return [r.getMessage() for r in caplog.records if "sealed with a secret this server was not given" in r.msg]

    caplog.set_level(logging.WARNING, logger="mcpkit.remember")
    monkeypatch.setenv("REMEMBER_SECRET", SECRET_B)
    for _ in range(2):  # a second start in the same process meets the same cause
        async with running(help_desk(store, KEYS)) as callers:
            for _ in range(3):
                recalled = await callers("nour").call("recall", {"key": "tone", "scope": "user"})
                assert recalled["found"] is False
                await callers("nour").call("draft_reply", {"ticketId": "T-1", "text": "Hello"})
    [warning] = wrong_secret_warnings()
    assert "REMEMBER_SECRET=new,old" in warning  # what to do

    monkeypatch.setenv("REMEMBER_SECRET", "remember-test-secret-C-5555555555")  # another cause: another secret
    async with running(help_desk(store, KEYS)):
        pass
    assert len(wrong_secret_warnings()) == 2
    unreadable = [r for r in caplog.records if "cannot be read and is treated as missing" in r.msg]
    assert unreadable == []  # a wrong secret finds no value at all: only the start's look says why


@pytest.mark.parametrize("value", ["mysql://db", "sqlite:///", "sqlite:///:memory:", "memcache"])
def test_an_unknown_remember_store_is_refused_naming_the_forms(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REMEMBER_STORE", value)
    with pytest.raises(Exception, match="sqlite:///") as refusal:
        build_server(RememberPlugin.init())
    assert type(refusal.value).__name__ == "ConfigurationError"


async def test_a_failing_look_at_the_stored_values_never_stops_the_start(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def no_scan_allowed(vault: Vault, where: str, sample: int = 32) -> None:
        raise redis.exceptions.NoPermissionError("this user has no permissions to run the 'scan' command")

    monkeypatch.setattr(backing, "check_secret", no_scan_allowed)
    server = build_server(RememberPlugin.init(type="memory", secret=SECRET))
    with caplog.at_level(logging.INFO, logger="mcpkit.remember"):
        async with running(server) as call_as:
            assert await mem(call_as("nour"), "set", key="k", value=1, scope="user") is True
            assert await mem(call_as("nour"), "get", key="k", scope="user") == 1
    assert "skipped checking which secret sealed the stored values" in caplog.text
    assert "no permissions to run the 'scan' command" in caplog.text


@pytest.mark.parametrize("mcp_protocol", [NEW])
async def test_a_counter_replayed_at_its_address_is_refused_not_restarted_from_zero(
    call_as: CallAs, mcpkit_server: Server, clock: ManualClock
) -> None:
    nour = call_as("nour")
    for _ in range(5):
        await mem(nour, "increment", key="visits", scope="user")
    store = store_of(mcpkit_server)
    address = address_of(mcpkit_server, user_identity(static_user_id("nour")), "user", "visits")
    at_five = await store.get(*address, clock.now())
    assert at_five is not None
    await mem(nour, "increment", key="visits", scope="user")  # 6
    await store.put(*address, at_five.data, None, clock.now())  # someone puts 5 back
    for op in ("increment", "get"):
        error = await refused(nour, op, key="visits", scope="user")
        assert error.code == "REMEMBER_STORE_UNAVAILABLE"
    await store.put(*address, b"", None, clock.now())  # whatever the store holds now is not 5 again ...
    assert await mem(nour, "get", key="visits", scope="user") == MISSING  # ... and unreadable bytes read as missing
