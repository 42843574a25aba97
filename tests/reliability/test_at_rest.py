"""At rest: what SQLite and Redis hold after real callers reveals no value, key, scope or tool name, user id or
session id.

Callers with static keys, a JWT and no credentials store values in every scope over the real HTTP app,
in both protocol eras. Then the store is read the way someone with the disk or the Redis would read it:
the SQLite file and its -wal byte for byte, every Redis key and value under the test's prefix. Each
secret is searched raw, as hex and as base64. Ciphertexts are then moved between callers and bytes
flipped (both read as missing, and the log says so), the secret is rotated with REMEMBER_SECRET=new,old
and `mcpkit remember rotate`, and a wrong secret is tried: it reads nothing, says so in the log and destroys
nothing.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import math
import os
import sqlite3
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, Protocol

import pytest
import redis

from mcpkit import JWTAuth, ManualClock, Server, StaticKeys, ToolContext, app, tool
from mcpkit.testing import CallAs, error_code, running
from mcpkit_remember import RememberPlugin
from mcpkit_storage.backing import _backing as remember_backing
from mcpkit_storage.sealing._keyring import Keyring
from reliability.callers import LEGACY, MODERN, static_user_id
from reliability.figures import Figures

KEYS = {"nour": "nour-at-rest-key-0123456789abcdef", "sam": "sam-at-rest-key-fedcba9876543210"}
JWT_SECRET = "at-rest-jwt-secret-0123456789abcdef-0123456789"
JWT_SUB = "aurelie.fontaine@example.org"
SECRET_A = "at-rest-secret-A-0123456789abcdef"
SECRET_B = "at-rest-secret-B-fedcba9876543210"
MISSING = "<missing>"
Scope = Literal["user", "session", "tool", "global"]


@tool(name="slot", description="Keep a value for the caller in a scope, or recall it.")
class Slot(ToolContext):
    """One tool for both, so that tool scope (per tool name) reads what it kept."""

    async def execute(
        self, op: Literal["keep", "recall"], key: str, scope: Scope, value: Any = None, ttl: float | None = None
    ) -> dict[str, Any]:
        if op == "keep":
            await self.remember.set(key, value, scope=scope, ttl=ttl)
            return {"session_id": self.caller.session_id}
        return {"value": await self.remember.get(key, scope=scope, default=MISSING)}


async def keep(client: Any, key: str, value: Any, scope: Scope, ttl: float | None = None) -> dict[str, Any]:
    arguments = {"op": "keep", "key": key, "value": value, "scope": scope, "ttl": ttl}
    kept: dict[str, Any] = await client.call("slot", arguments)
    return kept


async def recall(client: Any, key: str, scope: Scope) -> Any:
    return (await client.call("slot", {"op": "recall", "key": key, "scope": scope}))["value"]


# -- the store as the disk (or the Redis) holds it ---------------------------------------------------------------------

Address = tuple[str, str, str]  # owner, bucket, key


def address(who: str, scope: str, key: str) -> Address:
    """Where a signed-in caller's value sits under SECRET_A (owner, bucket and key are keyed hashes)."""
    identity = json.dumps(["u", static_user_id(KEYS[who])])
    return tuple(Keyring([SECRET_A]).locate(identity, scope, key)[0])  # type: ignore[return-value]


class Disk(Protocol):
    """A store seen from outside the server: raw bytes, and sealed values by address."""

    def plugin(self) -> RememberPlugin: ...

    def command_line(self) -> list[str]:
        """The arguments by which ``mcpkit remember`` finds this store."""
        ...

    def dump(self) -> list[tuple[str, bytes]]:
        """(where, bytes) for everything the store keeps."""
        ...

    def sealed(self) -> dict[Address, bytes]:
        """Every sealed value (without the store's own framing) by its address."""
        ...

    def replace(self, address: Address, sealed: bytes) -> None:
        """Put other sealed bytes at ``address``, as someone with write access to the store could."""
        ...

    def keep_forever(self, address: Address) -> None:
        """Remove the deadline the store keeps beside the sealed bytes (and any expiry of its own)."""
        ...


class SQLiteDisk:
    def __init__(self, directory: Path) -> None:
        self.path = directory / "remember.db"

    def plugin(self) -> RememberPlugin:
        return RememberPlugin.init(type="sqlite", path=self.path)

    def command_line(self) -> list[str]:
        return ["--store", f"sqlite:///{self.path}"]

    def dump(self) -> list[tuple[str, bytes]]:
        files = sorted(self.path.parent.glob("remember.db*"))
        found = [(path.name, path.read_bytes()) for path in files]
        with sqlite3.connect(self.path) as reader:
            found.append(("a SQL dump", "\n".join(reader.iterdump()).encode()))
        return found

    def sealed(self) -> dict[Address, bytes]:
        with sqlite3.connect(self.path) as reader:
            rows = reader.execute("SELECT owner, bucket, key, data FROM remember_entries").fetchall()
        return {(owner, bucket, key): bytes(data) for owner, bucket, key, data in rows}

    def replace(self, address: Address, sealed: bytes) -> None:
        with sqlite3.connect(self.path) as writer:
            changed = writer.execute(
                "UPDATE remember_entries SET data = ? WHERE owner = ? AND bucket = ? AND key = ?", (sealed, *address)
            ).rowcount
        assert changed == 1, address

    def keep_forever(self, address: Address) -> None:
        with sqlite3.connect(self.path) as writer:
            changed = writer.execute(
                "UPDATE remember_entries SET expires_at = NULL WHERE owner = ? AND bucket = ? AND key = ?", address
            ).rowcount
        assert changed == 1, address


class RedisDisk:
    #: Each value starts with its deadline (8 bytes), then the sealed bytes.
    FRAMING = 8

    def __init__(self, url: str, prefix: str) -> None:
        self.url = url
        self.prefix = prefix
        self.client: Any = redis.Redis.from_url(url)  # a sync client: its replies are bytes, not awaitables

    def plugin(self) -> RememberPlugin:
        return RememberPlugin.init(type="redis", url=self.url, redis_prefix=self.prefix)

    def command_line(self) -> list[str]:
        return ["--store", self.url, "--redis-prefix", self.prefix]

    def dump(self) -> list[tuple[str, bytes]]:
        found = []
        for name in self.client.scan_iter(match=f"{self.prefix}*", count=1000):
            kind = self.client.type(name)
            parts: list[bytes]
            if kind == b"string":
                parts = [self.client.get(name) or b""]
            elif kind == b"zset":
                parts = list(self.client.zrange(name, 0, -1))
            elif kind == b"set":
                parts = list(self.client.smembers(name))
            elif kind == b"hash":
                parts = [item for pair in self.client.hgetall(name).items() for item in pair]
            elif kind == b"list":
                parts = list(self.client.lrange(name, 0, -1))
            else:
                raise AssertionError(f"a Redis {kind!r} at {name!r}: teach this dump to read it")
            found.append((name.decode(), name + b"=" + b"|".join(parts)))
        return found

    def _values(self) -> Iterator[tuple[bytes, Address]]:
        for name in self.client.scan_iter(match=f"{self.prefix}{{*}}:v:*", count=1000):
            owner, _, rest = name.decode()[len(self.prefix) + 1 :].partition("}:v:")
            bucket, _, key = rest.partition(":")
            yield name, (owner, bucket, key)

    def sealed(self) -> dict[Address, bytes]:
        return {address: (self.client.get(name) or b"")[self.FRAMING :] for name, address in self._values()}

    def replace(self, address: Address, sealed: bytes) -> None:
        owner, bucket, key = address
        name = f"{self.prefix}{{{owner}}}:v:{bucket}:{key}"
        framing = self.client.getrange(name, 0, self.FRAMING - 1)
        assert len(framing) == self.FRAMING, name
        self.client.set(name, framing + sealed, keepttl=True)

    def keep_forever(self, address: Address) -> None:
        owner, bucket, key = address
        base = f"{self.prefix}{{{owner}}}"
        name = f"{base}:v:{bucket}:{key}"
        sealed = (self.client.get(name) or b"")[self.FRAMING :]
        assert sealed, name
        self.client.set(name, struct.pack(">d", math.inf) + sealed)  # no deadline in the header, no expiry
        self.client.zadd(f"{base}:i:{bucket}", {key: math.inf})
        for kept in (f"{base}:i:{bucket}", f"{base}:z:{bucket}", f"{base}:b"):
            self.client.persist(kept)


@pytest.fixture(params=["sqlite", "redis"])
def disk(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Disk]:
    if request.param == "sqlite":
        yield SQLiteDisk(tmp_path)
        return
    redis_disk = RedisDisk(request.getfixturevalue("redis_url"), request.getfixturevalue("redis_prefix"))
    try:
        yield redis_disk
    finally:
        redis_disk.client.close()


@pytest.fixture
def patient_secret_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let the start-up secret check finish, for tests that expect its warning.

    The product gives it SECRET_CHECK_SECONDS (1 s) and skips it silently after that: on a loaded
    machine, SCANning the shared Redis (every test's keys) can take longer, and the warning never comes.
    """
    monkeypatch.setattr(remember_backing, "SECRET_CHECK_SECONDS", 60.0)


def server_on(disk: Disk) -> Server:
    """A server on ``disk``'s store; the remember secret comes from REMEMBER_SECRET, as in production."""

    @app(id="at-rest", tools=[Slot], plugins=[disk.plugin()])
    class AtRestApp: ...

    return Server(
        [AtRestApp], auth=[StaticKeys(KEYS), JWTAuth(secret=JWT_SECRET, audience="mcpkit-tests")], allow_anonymous=True
    )


# -- callers and what they keep ----------------------------------------------------------------------------------------

#: What each caller keeps, in which era and scopes. Anonymous callers only have a 2025-11-25 session.
PLAN: list[tuple[str, str, tuple[Scope, ...]]] = [
    ("nour", MODERN, ("user", "session", "tool", "global")),
    ("nour", LEGACY, ("session", "tool")),
    ("sam", MODERN, ("user", "session")),
    ("sam", LEGACY, ("session",)),
    ("jwt", MODERN, ("user", "session", "tool")),
    ("jwt", LEGACY, ("session", "tool")),
    ("anonymous", LEGACY, ("session", "tool")),
]


SLOTS = sum(len(scopes) for _, _, scopes in PLAN)
MODERN_SLOTS = sum(len(scopes) for _, era, scopes in PLAN if era == MODERN)


def caller(callers: CallAs, who: str, era: str) -> Any:
    if who == "jwt":
        return callers.jwt(JWT_SUB, protocol=era)
    return callers(None if who == "anonymous" else who, protocol=era)


def plaintext(who: str, era: str, scope: str) -> str:
    return f"{who} kept this in {scope} scope over {era}: vermilion-{who}-{scope}-{era}"


def value_of(who: str, era: str, scope: str) -> dict[str, Any]:
    return {"note": plaintext(who, era, scope), "account": f"IBAN-FR76-{who}-{scope}", "pin": 86753091}


async def fill(callers: CallAs) -> list[str]:
    """Every caller keeps its values (over HTTP); returns every secret that must not be readable at rest."""
    secrets = [*KEYS.values(), *map(static_user_id, KEYS.values()), JWT_SUB, "86753091"]
    for who, era, scopes in PLAN:
        client = caller(callers, who, era)
        for scope in scopes:
            kept = await keep(client, key_of(scope), value_of(who, era, scope), scope)
            secrets += [plaintext(who, era, scope), f"IBAN-FR76-{who}-{scope}", key_of(scope)]
            if era == LEGACY:
                assert kept["session_id"], (who, era)
                secrets.append(kept["session_id"])
    return sorted({*secrets, "cerulean", "session", "global", "tool.slot"})


def key_of(scope: str) -> str:
    """The key each caller keeps its value of ``scope`` under (as telling as keys often are)."""
    return f"ticket:T-{scope}-cerulean"


async def read_back(callers: CallAs, eras: tuple[str, ...] = (MODERN, LEGACY)) -> dict[str, Any]:
    """What each caller reads from each of its slots (2025-11-25 ones only while its session lives)."""
    seen = {}
    for who, era, scopes in PLAN:
        if era not in eras:
            continue
        client = caller(callers, who, era)
        for scope in scopes:
            seen[f"{who}/{era}/{scope}"] = await recall(client, key_of(scope), scope)
    return seen


def expected(eras: tuple[str, ...] = (MODERN, LEGACY)) -> dict[str, Any]:
    return {
        f"{who}/{era}/{scope}": value_of(who, era, scope)
        for who, era, scopes in PLAN
        if era in eras
        for scope in scopes
    }


def forms(secret: str) -> dict[str, bytes]:
    """The secret's bytes as they could sit in a store: raw, UTF-16, hex, and base64 at each 3-byte alignment."""
    raw = secret.encode()
    found = {
        "raw": raw,
        "utf-16": secret.encode("utf-16-le"),
        "hex": raw.hex().encode(),
        "HEX": raw.hex().upper().encode(),
    }
    for offset in range(3):
        aligned = raw[offset:][: (len(raw) - offset) // 3 * 3]
        found[f"base64+{offset}"] = base64.b64encode(aligned)
        found[f"base64url+{offset}"] = base64.urlsafe_b64encode(aligned)
    return found


def readable(secrets: list[str], dump: list[tuple[str, bytes]]) -> list[str]:
    """Which secrets, in which form, can be read where."""
    return [
        f"{secret!r} as {form} in {where}"
        for secret in secrets
        for form, needle in forms(secret).items()
        for where, haystack in dump
        if needle in haystack
    ]


# -- tests -------------------------------------------------------------------------------------------------------------


async def test_the_store_holds_no_value_user_id_or_session_id_in_any_form(
    disk: Disk, monkeypatch: pytest.MonkeyPatch, figures: Figures
) -> None:
    monkeypatch.setenv("REMEMBER_SECRET", SECRET_A)
    async with running(server_on(disk)) as callers:
        secrets = await fill(callers)
        assert await read_back(callers) == expected()  # the values are really there
        while_running = disk.dump()  # SQLite: recent writes sit in the -wal file
    after_stop = disk.dump()

    everything = b"".join(data for _, data in while_running + after_stop)
    assert len(everything) > 4096  # these are the right bytes
    # Each value and its change history (on by default), whose copies of the values are searched for leaks too.
    assert len(disk.sealed()) == 2 * SLOTS
    if isinstance(disk, SQLiteDisk):
        assert any(where.endswith("-wal") for where, _ in while_running)
    leaks = readable(secrets, while_running) + readable(secrets, after_stop)

    figures.record(
        inputs=len(secrets),
        calls=SLOTS * 2,
        leaks=len(leaks),
        detail=f"{type(disk).__name__[:-4]}: {len(secrets)} values, keys, scope and tool names, user ids, session ids "
        "and bearer keys of 4 callers (static keys, JWT, anonymous; both eras) searched raw, as UTF-16, hex and "
        "base64 in every byte at rest",
    )
    assert not leaks, leaks


async def test_a_ciphertext_swapped_between_two_callers_reads_as_missing_and_is_logged(
    disk: Disk, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, figures: Figures
) -> None:
    monkeypatch.setenv("REMEMBER_SECRET", SECRET_A)
    async with running(server_on(disk)) as callers:
        await keep(callers("nour"), "signature", "Nour, Customer Care", "user")
        await keep(callers("sam"), "signature", "Sam, Billing", "user")
    first, second = address("nour", "user", "signature"), address("sam", "user", "signature")
    sealed = disk.sealed()
    disk.replace(first, sealed[second])
    disk.replace(second, sealed[first])

    caplog.set_level(logging.WARNING, logger="mcpkit.remember")
    async with running(server_on(disk)) as callers:
        reads = [await recall(callers(who), "signature", "user") for who in ("nour", "sam", "nour")]
        await keep(callers("nour"), "signature", "Nour again", "user")
        again = await recall(callers("nour"), "signature", "user")

    warnings = [r.getMessage() for r in caplog.records if r.name == "mcpkit.remember" and r.levelno == logging.WARNING]
    leaked = [w for w in warnings for s in ("Nour, Customer", "Sam, Billing", *KEYS.values()) if s in w]
    figures.record(
        inputs=2,
        leaks=sum(read != MISSING for read in reads) + len(leaked),
        detail=f"{type(disk).__name__[:-4]}: two callers' sealed values swapped on disk: both read as missing, "
        "each owner's failure logged once with the REMEMBER_SECRET hint; the slot is usable again",
    )
    assert reads == [MISSING, MISSING, MISSING]
    assert len(warnings) == 2, warnings  # once per owner and scope, not per read
    assert all("user scope" in w and "cannot be read" in w and "REMEMBER_SECRET" in w for w in warnings), warnings
    assert not leaked
    assert again == "Nour again"


#: Where a byte is flipped in ``version | key id (4) | nonce (12) | ciphertext | tag (16)``.
TAMPERED_AT = {"version": 0, "key id": 2, "nonce": 9, "ciphertext": 24, "tag": -1}


async def test_a_tampered_byte_anywhere_in_a_sealed_value_is_detected(
    disk: Disk, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, figures: Figures
) -> None:
    monkeypatch.setenv("REMEMBER_SECRET", SECRET_A)
    caplog.set_level(logging.WARNING, logger="mcpkit.remember")
    reads = {}
    async with running(server_on(disk)) as callers:
        nour = callers("nour")
        await keep(nour, "iban", "FR76 3000 6000 0112 3456 7890 189", "user")
        where = address("nour", "user", "iban")
        original = disk.sealed()[where]
        for part, position in TAMPERED_AT.items():
            tampered = bytearray(original)
            tampered[position] ^= 0x01
            disk.replace(where, bytes(tampered))
            reads[part] = await recall(nour, "iban", "user")
        disk.replace(where, original)
        restored = await recall(nour, "iban", "user")

    warnings = [r.getMessage() for r in caplog.records if r.name == "mcpkit.remember" and r.levelno == logging.WARNING]
    figures.record(
        inputs=len(TAMPERED_AT),
        leaks=sum(read != MISSING for read in reads.values()),
        detail=f"{type(disk).__name__[:-4]}: one bit flipped in the version, key id, nonce, ciphertext and tag "
        "of a sealed value on disk: every one read as missing (and logged), the original bytes read again",
    )
    assert reads == dict.fromkeys(TAMPERED_AT, MISSING)
    assert warnings, "a tampered value must be logged"
    assert "FR76" not in " ".join(warnings)
    assert restored == "FR76 3000 6000 0112 3456 7890 189"  # nothing was deleted: the detection is the decryption


async def test_a_deadline_removed_beside_the_ciphertext_does_not_keep_a_value_alive(
    disk: Disk, monkeypatch: pytest.MonkeyPatch, figures: Figures
) -> None:
    monkeypatch.setenv("REMEMBER_SECRET", SECRET_A)
    clock = ManualClock()
    async with running(server_on(disk), clock=clock) as callers:
        nour = callers("nour")
        await keep(nour, "one-time-code", "482913", "user", ttl=300)
        disk.keep_forever(address("nour", "user", "one-time-code"))  # as someone who can write the store
        before = await recall(nour, "one-time-code", "user")
        clock.advance(301)
        after = await recall(nour, "one-time-code", "user")
        listed = await nour.call("slot", {"op": "recall", "key": "one-time-code", "scope": "user"})
    figures.record(
        inputs=1,
        leaks=int(after != MISSING),
        detail=f"{type(disk).__name__[:-4]}: a 5-minute value whose deadline beside the ciphertext was removed "
        "(SQLite expires_at NULL; Redis header, index score and key expiry made endless) still expired on "
        "time: the deadline sealed with the value wins",
    )
    assert before == "482913"
    assert after == MISSING
    assert listed == {"value": MISSING}


async def test_an_older_value_put_back_at_its_own_address_is_refused_by_the_server_that_replaced_it(
    disk: Disk, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, figures: Figures
) -> None:
    monkeypatch.setenv("REMEMBER_SECRET", SECRET_A)
    caplog.set_level(logging.WARNING, logger="mcpkit.remember")
    where = address("nour", "user", "role")
    async with running(server_on(disk)) as callers:
        nour = callers("nour")
        await keep(nour, "role", "admin", "user")
        older = disk.sealed()[where]
        await keep(nour, "role", "viewer", "user")  # demoted
        disk.replace(where, older)  # someone with write access replays the older ciphertext
        replayed = await nour.call_tool("slot", {"op": "recall", "key": "role", "scope": "user"})
    warnings = [r.getMessage() for r in caplog.records if r.name == "mcpkit.remember"]
    async with running(server_on(disk)) as callers:  # a process that never saw "viewer" cannot tell
        elsewhere = await recall(callers("nour"), "role", "user")
    code = error_code(replayed)
    figures.record(
        inputs=1,
        leaks=int(code is None),
        detail=f"{type(disk).__name__[:-4]}: a caller's older sealed value replayed at its own address after the "
        f"server replaced it: refused ({code}) and logged, neither answered nor taken for missing; a server "
        f"started afterwards (which never saw the newer value) read {elsewhere!r}, as docs/stores.md says it "
        "cannot tell",
    )
    assert code == "REMEMBER_STORE_UNAVAILABLE"
    assert any("put back in the store" in w for w in warnings), warnings
    assert not any("admin" in w or "viewer" in w for w in warnings)
    assert elsewhere == "admin"


@pytest.mark.usefixtures("patient_secret_check")
async def test_a_rotated_secret_still_reads_old_data_and_then_the_old_secret_can_go(
    disk: Disk, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, figures: Figures
) -> None:
    modern: tuple[str, ...] = (MODERN,)  # 2025-11-25 session values end with their sessions (the server stops)
    monkeypatch.setenv("REMEMBER_SECRET", SECRET_A)
    async with running(server_on(disk)) as callers:
        secrets = await fill(callers)
    [old_id] = {sealed[1:5] for sealed in disk.sealed().values()}

    caplog.set_level(logging.WARNING, logger="mcpkit.remember")
    monkeypatch.setenv("REMEMBER_SECRET", f"{SECRET_B},{SECRET_A}")
    async with running(server_on(disk)) as callers:
        during = await read_back(callers, modern)  # read under the old secret, where they are
    during_warnings = [r.getMessage() for r in caplog.records if r.name == "mcpkit.remember"]
    rotated = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "mcpkit", "remember", "rotate", *disk.command_line()],
        env={**os.environ, "REMEMBER_SECRET": f"{SECRET_B},{SECRET_A}"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert rotated.returncode == 0, rotated.stderr
    caplog.clear()
    monkeypatch.setenv("REMEMBER_SECRET", SECRET_B)
    async with running(server_on(disk)) as callers:
        after = await read_back(callers, modern)
    after_warnings = [r.getMessage() for r in caplog.records if r.name == "mcpkit.remember"]
    key_ids = [sealed[1:5] for sealed in disk.sealed().values()]

    leaks = readable(secrets, disk.dump())
    figures.record(
        inputs=len(during),
        leaks=len(leaks),
        detail=f"{type(disk).__name__[:-4]}: {len(during)} values of 3 callers sealed under one secret, read under "
        "REMEMBER_SECRET=new,old, moved by `mcpkit remember rotate`, then read under new alone: all read back "
        "both times",
    )
    assert during == expected(modern)
    assert after == expected(modern)
    assert during_warnings == []
    assert f"rotated {SLOTS}, already current 0, unreadable 0, expired 0" in rotated.stdout
    assert len(key_ids) == 2 * SLOTS  # moved, not copied: the old entries went (each value's and its history's)
    assert old_id not in key_ids
    assert after_warnings == []
    assert not leaks, leaks


@pytest.mark.usefixtures("patient_secret_check")
async def test_a_wrong_secret_reads_nothing_says_so_in_the_log_and_destroys_nothing(
    disk: Disk, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, figures: Figures
) -> None:
    modern: tuple[str, ...] = (MODERN,)
    monkeypatch.setenv("REMEMBER_SECRET", SECRET_A)
    async with running(server_on(disk)) as callers:
        await fill(callers)

    caplog.set_level(logging.WARNING, logger="mcpkit.remember")
    monkeypatch.setenv("REMEMBER_SECRET", SECRET_B)
    async with running(server_on(disk)) as callers:
        wrong = await read_back(callers, modern)
    warnings = [r.getMessage() for r in caplog.records if r.name == "mcpkit.remember" and r.levelno == logging.WARNING]

    monkeypatch.setenv("REMEMBER_SECRET", SECRET_A)
    async with running(server_on(disk)) as callers:
        right = await read_back(callers, modern)

    figures.record(
        inputs=len(wrong),
        leaks=sum(value != MISSING for value in wrong.values()),
        detail=f"{type(disk).__name__[:-4]}: started with another REMEMBER_SECRET: all {len(wrong)} values read as "
        "missing, one warning at start saying which secret is missing and what to set; the right secret reads all",
    )
    assert wrong == dict.fromkeys(expected(modern), MISSING)
    assert right == expected(modern)
    [warning] = warnings
    assert "sealed with a secret this server was not given" in warning
    assert "REMEMBER_SECRET=new,old" in warning  # what to do
    assert "mcpkit remember rotate" in warning
    for secret in (SECRET_A, SECRET_B, JWT_SUB, "vermilion", static_user_id(KEYS["nour"])):
        assert secret not in warning
