"""``mcpkit remember export`` and ``import`` as an operator runs them: sealed unless --plaintext, one user or all,
into a store made for it (--create), nothing secret on the terminal, and the callers read their values after."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from mcpkit import ManualClock
from portability.support import KEYS, PASSPHRASE, mem, served, write_everything

MCPKIT = str(Path(sys.executable).with_name("mcpkit"))
SECRET = "commands-secret-A-0123456789abcdef"
ROTATED = "commands-secret-B-0123456789abcdef"


def remember(*args: str, secret: str, passphrase: str | None = PASSPHRASE) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REMEMBER_")} | {"REMEMBER_SECRET": secret}
    env["MEMORY_KEYS"] = ",".join(f"{label}={key}" for label, key in KEYS.items())
    if passphrase is not None:
        env["REMEMBER_EXPORT_PASSPHRASE"] = passphrase
    return subprocess.run(
        [MCPKIT, "remember", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
    )


async def test_a_sealed_export_of_one_user_imports_into_a_new_store_under_another_secret(tmp_path: Path) -> None:
    clock = ManualClock()
    source, target, file = tmp_path / "source.db", tmp_path / "target.db", tmp_path / "nour.jsonl"
    async with served(source, SECRET, clock) as call_as:
        await write_everything(call_as)

    exported = remember(
        "export",
        "--store",
        f"sqlite:///{source}",
        "--key-label",
        "nour",
        "--keys-from",
        "MEMORY_KEYS",
        "--out",
        str(file),
        secret=SECRET,
    )
    refused = remember("import", "--store", f"sqlite:///{target}", str(file), secret=ROTATED)
    imported = remember("import", "--store", f"sqlite:///{target}", str(file), "--create", secret=ROTATED)
    again = remember("import", "--store", f"sqlite:///{target}", str(file), secret=ROTATED)

    assert exported.returncode == 0, exported.stderr
    # 15 values, 2 trees and 5 messages, 2 context entries, and the values' 15 change histories: Nour's alone
    assert "exported 24 values and 15 change histories" in exported.stderr
    assert refused.returncode == 1  # no such store, and nothing made without --create
    assert "nothing was created" in refused.stderr
    assert imported.returncode == 0, imported.stderr
    assert "imported 24 values and 15 change histories" in imported.stdout
    assert "imported 0 values, 39 already there" in again.stdout
    assert oct(file.stat().st_mode & 0o777) == "0o600"
    text = file.read_text()
    assert "Cedar" not in text  # sealed
    assert "kettle" not in text
    for done in (exported, imported, again):
        for secret in (SECRET, ROTATED, PASSPHRASE):
            assert secret not in done.stdout + done.stderr
    async with served(target, ROTATED, clock) as call_as:
        assert await mem(call_as, "nour", "get", key="text", scope="user") == "Cedar 🌲 été"
        assert await mem(call_as, "nour", "search", query="warranty", scope="user")
        assert await mem(call_as, "sam", "get", key="kettle", scope="user") == "<missing>"
        history = await call_as("nour").call("load_history", {"conversation": "T-7"})
    assert [message["content"] for message in history["messages"]] == ["Kettle refund?", "Yes, within 30 days."]


async def test_plaintext_is_written_only_when_asked_and_a_bad_file_is_named_by_line(tmp_path: Path) -> None:
    clock = ManualClock()
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    async with served(source, SECRET, clock) as call_as:
        await write_everything(call_as)

    unsealed = remember("export", "--store", f"sqlite:///{source}", "--all", secret=SECRET, passphrase=None)
    plain = remember("export", "--store", f"sqlite:///{source}", "--all", "--plaintext", secret=SECRET, passphrase=None)
    lines = plain.stdout.splitlines()
    (tmp_path / "all.jsonl").write_text("\n".join(lines[:5]) + "\n")
    cut = remember(
        "import",
        "--store",
        f"sqlite:///{target}",
        str(tmp_path / "all.jsonl"),
        "--plaintext",
        "--create",
        secret=SECRET,
    )
    (tmp_path / "all.jsonl").write_text(plain.stdout)
    no_global = remember(
        "import", "--store", f"sqlite:///{target}", str(tmp_path / "all.jsonl"), "--plaintext", secret=SECRET
    )

    assert unsealed.returncode == 2
    assert "REMEMBER_EXPORT_PASSPHRASE" in unsealed.stderr
    assert "--plaintext" in unsealed.stderr
    assert unsealed.stdout == ""
    assert plain.returncode == 0, plain.stderr
    assert json.loads(lines[0])["sealing"] is None
    assert "Cedar" in plain.stdout
    assert cut.returncode == 2
    assert "line 6: the file ends after 4 records without its end record: it is cut short" in cut.stderr
    assert "Traceback" not in cut.stderr
    assert no_global.returncode == 2
    assert "global scope" in no_global.stderr
    assert "--global" in no_global.stderr
