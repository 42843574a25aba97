"""The SQLite store's secret file and database are private to the user running the server, or refused (warned about)."""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from mcpkit import ConfigurationError, ManualClock, Server
from mcpkit.testing import running
from mcpkit_remember import RememberPlugin
from mcpkit_storage.stores.sqlite._sqlite_store import SQLiteStore
from remember.support import build_server, mem, static_user_id

ROOT = Path(__file__).resolve().parents[2]
MCPKIT = str(Path(sys.executable).with_name("mcpkit"))
NOBODY = 65534
#: What someone who could write the directory planted: a secret they know.
KNOWN = "a-secret-the-attacker-knows-0123456789"

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")


def sqlite_server(database: Path, secret: str | None = None) -> Server:
    return build_server(RememberPlugin.init(type="sqlite", path=database, secret=secret))


async def refusal_to_start(database: Path) -> str:
    with pytest.raises(ConfigurationError, match="Plugin RememberPlugin failed to start") as refusal:
        async with running(sqlite_server(database), clock=ManualClock()):
            pass
    return str(refusal.value)


async def made_by_a_server(database: Path) -> None:
    """The store file as a server that started before the secret file went wrong left it (empty)."""
    store = SQLiteStore(database)
    await store.open()
    await store.close()


def remember_cli(database: Path) -> subprocess.CompletedProcess[str]:
    """``mcpkit remember purge`` of Nour on the store, with the secret from the secret file (no REMEMBER_SECRET)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REMEMBER_")}
    command = [MCPKIT, "remember", "purge", "--store", f"sqlite:///{database}", "--user", static_user_id("nour")]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False)


def run_the_fix(message: str) -> None:
    """Run the command the refusal says to run, exactly as written there."""
    found = re.search(r"[Rr]un `([^`]+)`", message)
    assert found, message
    subprocess.run(found.group(1), shell=True, check=True)


def plant(path: Path, *, mode: int = 0o600, uid: int | None = None) -> Path:
    path.write_text(KNOWN + "\n")
    path.chmod(mode)
    if uid is not None:
        os.chown(path, uid, -1)
    return path


async def set_then_read_with(database: Path, secret: str) -> object:
    """Set a value with the secret file in use, then read it back with ``secret`` given outright."""
    async with running(sqlite_server(database), clock=ManualClock()) as callers:
        await mem(callers("nour"), "set", key="k", value="kept", scope="user")
    async with running(sqlite_server(database, secret), clock=ManualClock()) as callers:
        return await mem(callers("nour"), "get", key="k", scope="user")


async def test_a_secret_file_others_can_read_is_refused_with_the_chmod_that_fixes_it(tmp_path: Path) -> None:
    database = tmp_path / "remember.db"
    await made_by_a_server(database)
    secret_file = plant(tmp_path / "remember.db.secret", mode=0o644)
    message = await refusal_to_start(database)
    assert "has mode 0644" in message
    assert f"Run `chmod 600 {secret_file}`" in message
    cli = remember_cli(database)
    assert cli.returncode == 2  # a configuration mistake
    assert f"`chmod 600 {secret_file}`" in cli.stderr
    run_the_fix(message)
    assert await set_then_read_with(database, KNOWN) == "kept"  # fixed, the same file is used
    assert remember_cli(database).returncode == 0  # it opened the store with the file's secret: Nour's value went


@needs_root
async def test_a_secret_file_of_another_user_is_refused_with_the_chown_that_fixes_it(tmp_path: Path) -> None:
    database = tmp_path / "remember.db"
    await made_by_a_server(database)
    secret_file = plant(tmp_path / "remember.db.secret", uid=NOBODY)
    message = await refusal_to_start(database)
    assert f"belongs to nobody (uid {NOBODY}), not to root (uid 0)" in message
    assert f"run `chown root {secret_file} && chmod 600 {secret_file}`" in message
    cli = remember_cli(database)
    assert cli.returncode == 2  # a configuration mistake
    assert f"uid {NOBODY}" in cli.stderr
    run_the_fix(message)
    assert await set_then_read_with(database, KNOWN) == "kept"


async def test_a_symlinked_secret_file_is_refused_even_when_it_points_at_a_private_file(tmp_path: Path) -> None:
    database = tmp_path / "remember.db"
    await made_by_a_server(database)
    elsewhere = plant(tmp_path / "elsewhere.secret")  # ours, 0600: only the link is wrong
    (tmp_path / "remember.db.secret").symlink_to(elsewhere)
    message = await refusal_to_start(database)
    assert f"is a symbolic link (to {elsewhere})" in message
    assert remember_cli(database).returncode == 2  # a configuration mistake
    run_the_fix(message)
    assert stat.S_ISREG((tmp_path / "remember.db.secret").lstat().st_mode)
    assert await set_then_read_with(database, KNOWN) == "kept"


async def test_a_dangling_symlink_at_the_secret_file_is_refused_and_nothing_is_written_through_it(
    tmp_path: Path,
) -> None:
    target = tmp_path / "readable-by-the-attacker"
    (tmp_path / "remember.db.secret").symlink_to(target)
    assert "is a symbolic link" in await refusal_to_start(tmp_path / "remember.db")
    assert not target.exists()


@pytest.mark.parametrize("planted", ["file", "symlink"])
async def test_a_draft_planted_at_the_old_predictable_name_changes_nothing(tmp_path: Path, planted: str) -> None:
    database = tmp_path / "remember.db"
    attackers = plant(tmp_path / "attacker-readable", mode=0o666, uid=NOBODY if os.geteuid() == 0 else None)
    draft = tmp_path / f"remember.db.secret.{os.getpid()}.tmp"  # the name drafts used to have
    if planted == "file":
        os.link(attackers, draft)
    else:
        draft.symlink_to(attackers)
    async with running(sqlite_server(database), clock=ManualClock()) as callers:
        await mem(callers("nour"), "set", key="k", value="kept", scope="user")
    secret_file = (tmp_path / "remember.db.secret").lstat()
    assert stat.S_ISREG(secret_file.st_mode)
    assert (secret_file.st_uid, stat.S_IMODE(secret_file.st_mode)) == (os.geteuid(), 0o600)
    assert secret_file.st_ino != attackers.stat().st_ino
    assert attackers.read_text() == KNOWN + "\n"  # the secret was never written into the attacker's file
    assert (tmp_path / "remember.db.secret").read_text().strip() != KNOWN


def test_the_database_wal_and_shm_are_0600_under_a_permissive_umask(tmp_path: Path) -> None:
    script = """
import asyncio, json, os, stat, sys
from pathlib import Path
os.umask(0o022)
from mcpkit import ManualClock
from mcpkit.testing import running
from mcpkit_remember import RememberPlugin
from mcpkit_storage.stores.sqlite._sqlite_store import SQLiteStore
from remember.support import build_server, mem, static_user_id

async def main() -> None:
    database = Path(sys.argv[1])
    plugin = RememberPlugin.init(type="sqlite", path=database)
    async with running(build_server(plugin), clock=ManualClock()) as callers:
        await mem(callers("nour"), "set", key="k", value="v", scope="user")  # the -wal and -shm exist now
        names = [database.name + suffix for suffix in ("", "-wal", "-shm", ".secret")]
        print(json.dumps({name: stat.S_IMODE(os.stat(database.with_name(name)).st_mode) for name in names}))

asyncio.run(main())
"""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REMEMBER_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests"), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "remember.db")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    modes = json.loads(done.stdout.strip().splitlines()[-1])
    assert {name: oct(mode) for name, mode in modes.items()} == {
        "remember.db": "0o600",
        "remember.db-wal": "0o600",
        "remember.db-shm": "0o600",
        "remember.db.secret": "0o600",
    }


async def test_an_existing_database_others_can_read_is_used_with_a_warning_that_says_what_to_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    database = tmp_path / "remember.db"
    async with running(sqlite_server(database), clock=ManualClock()) as callers:
        await mem(callers("nour"), "set", key="k", value="kept", scope="user")
    database.chmod(0o644)  # as a store made before 0600 was the default
    caplog.set_level(logging.WARNING, logger="mcpkit.remember")
    async with running(sqlite_server(database), clock=ManualClock()) as callers:
        assert await mem(callers("nour"), "get", key="k", scope="user") == "kept"
    warnings = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert any("can be read by other users" in text and f"`chmod 600 {database}" in text for text in warnings)
