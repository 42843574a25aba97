"""The memory audit (issue 38, item 5): ``Server(audit=AuditLog(path))`` writes one JSON line per memory operation
(what a call read, wrote, deleted, searched: plugin, scope, key hash, hit or miss, bytes, tool, client), so an operator
can say what memory entered a call and which calls changed a key; the file rotates and is kept for a bounded time,
and no line holds a value, a plain key, a caller's id or a token."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path
from typing import Any

import pytest

from mcpkit import AuditLog, ConfigurationError, ManualClock, Server, StaticKeys, ToolContext, app, tool
from mcpkit.testing import running
from mcpkit_remember import RememberPlugin
from mcpkit_storage import Keyring, key_hash

MARKER = "marker-3f6a11c0"
SECRET = "remember-secret-for-the-audit-test-0123456789"
TOKENS = {"nour": "nour-key-0123456789abcdef", "sam": "sam-key-0123456789abcdef"}


@tool(name="set_signature", description="Keeps the caller's signature.")
class SetSignature(ToolContext):
    async def execute(self, text: str) -> str:
        await self.remember.set(f"signature:{MARKER}", text, scope="user")
        return "kept"


@tool(name="draft_reply", description="Drafts a reply with the caller's signature.")
class DraftReply(ToolContext):
    async def execute(self, ticket: str) -> str:
        signature = await self.remember.get(f"signature:{MARKER}", scope="user", default="")
        return f"Re {ticket}. {signature}"


def desk(audit: AuditLog, tmp_path: Path, history: int = 0, **options: Any) -> Server:
    plugin = RememberPlugin.init(type="sqlite", path=tmp_path / "desk.db", secret=SECRET, history=history)

    @app(id="desk", tools=[SetSignature, DraftReply], plugins=[plugin])
    class Desk: ...

    return Server([Desk], auth=StaticKeys(TOKENS), audit=audit, **options)


async def test_the_audit_says_what_memory_entered_a_call_and_which_calls_changed_a_key(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path / "audit" / "memory.jsonl")
    async with running(desk(audit, tmp_path), protocol="2025-11-25") as call_as:
        await call_as("nour").call("set_signature", {"text": f"Nour {MARKER}"})
        await call_as("sam").call("draft_reply", {"ticket": "T-1"})
        await call_as("nour").call("draft_reply", {"ticket": "T-2"})
    audit.close()
    lines = list(audit.lines())
    text = (tmp_path / "audit" / "memory.jsonl").read_text()
    for secret in (MARKER, *TOKENS.values(), "nour", "sam", SECRET):
        assert secret not in text, secret

    hashed = key_hash(Keyring([SECRET]), "user", f"signature:{MARKER}")
    # which calls changed this key, when, by which tool and client
    [changed] = [line for line in lines if line["key"] == hashed and line["operation"] == "write"]
    assert changed["tool"] == "set_signature"
    assert changed["method"] == "tools/call"
    assert changed["store"] == "sqlite"
    assert changed["scope"] == "user"
    assert changed["bytes"] == len(json.dumps(f"Nour {MARKER}"))
    assert isinstance(changed["at"], float)
    assert re.fullmatch(r"[0-9a-f]{16}", changed["session"])  # the 2025-11-25 session it came in, hashed
    assert stat.S_IMODE((tmp_path / "audit" / "memory.jsonl").stat().st_mode) == 0o600  # the server's user alone
    # what memory entered each draft_reply call: sam's read missed, nour's found her signature
    reads = [line for line in lines if line["tool"] == "draft_reply"]
    assert [(line["operation"], line["hit"]) for line in reads] == [("read", False), ("read", True)]
    assert reads[1]["caller"] == changed["caller"] != reads[0]["caller"]
    assert reads[0]["request_id"] is not None


async def test_with_key_labels_the_audit_names_a_key_s_family(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path / "memory.jsonl")
    async with running(desk(audit, tmp_path, history=3, telemetry_key_labels=True)) as call_as:
        await call_as("nour").call("set_signature", {"text": "Nour"})
    lines = list(audit.lines())
    assert [(line["db_operation"], line["key_label"]) for line in lines] == [
        ("read", "versions"),  # the key's change history (history=3), an internal key: its kind
        ("swap_many", "signature"),  # the value and its history, written in one store call
        ("swap_many", "versions"),
    ]
    assert MARKER not in json.dumps(lines)


def test_the_audit_file_rotates_by_size_and_age_and_keeps_a_bounded_number(tmp_path: Path) -> None:
    clock = ManualClock(1_000.0)
    audit = AuditLog(tmp_path / "memory.jsonl", max_bytes=1024, max_age=60, keep=2, clock=clock.now)
    for number in range(12):  # about 100 bytes each: past 1024 bytes, the file rotates
        audit.write({"operation": "write", "key": f"{number:016x}", "pad": "x" * 60})
    assert (tmp_path / "memory.jsonl.1").exists()
    assert all(path.stat().st_size <= 1024 for path in tmp_path.iterdir())
    clock.advance(61)  # the current file's first line is older than max_age: the next line starts a new file
    audit.write({"operation": "read", "key": "late"})
    assert [line["key"] for line in _read(tmp_path / "memory.jsonl")] == ["late"]
    for number in range(30):
        audit.write({"operation": "write", "key": f"{number:016x}", "pad": "x" * 60})
    audit.close()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["memory.jsonl", "memory.jsonl.1", "memory.jsonl.2"]
    kept = list(audit.lines())
    assert kept[-1]["key"] == f"{29:016x}"
    assert "late" not in [line["key"] for line in kept]  # rotated past keep: gone


def test_an_audit_log_is_checked_when_the_server_is_built(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"AuditLog\(max_bytes=...\) is a whole number of bytes from 1024"):
        AuditLog(tmp_path / "a.jsonl", max_bytes=10)
    with pytest.raises(ConfigurationError, match=r"Server\(audit=...\) is an mcpkit.AuditLog"):
        desk(str(tmp_path / "a.jsonl"), tmp_path)  # type: ignore[arg-type]


def _read(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_the_audit_works_with_telemetry_off(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path / "memory.jsonl")
    async with running(desk(audit, tmp_path, history=3, telemetry="off")) as call_as:
        await call_as("nour").call("set_signature", {"text": "Nour"})
    read, line, history = list(audit.lines())  # the history read, then the value and its history in one write
    assert (line["operation"], line["tool"], line["method"]) == ("write", "set_signature", "tools/call")
    assert [read["operation"], history["operation"]] == ["read", "write"]  # the key's change history (history=3)
    assert {read["tool"], history["tool"]} == {"set_signature"}


class _FullDisk(AuditLog):
    """An audit whose every write fails, as a full disk or a locked table would."""

    def write_many(self, records: Any) -> None:
        raise OSError(28, "No space left on device")


async def test_an_audit_that_fails_is_logged_and_the_call_still_answers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    audit = _FullDisk(tmp_path / "audit" / "memory.jsonl")
    async with running(desk(audit, tmp_path), protocol="2025-11-25") as call_as:
        await call_as("nour").call("set_signature", {"text": "Nour"})  # written, though its record is not
        reply = await call_as("nour").call("draft_reply", {"ticket": "T-1"})

    assert reply == "Re T-1. Nour"
    failures = [record for record in caplog.records if record.name == "mcpkit.telemetry"]
    assert failures
    assert all("could not keep" in record.getMessage() for record in failures)
    assert all("Nour" not in record.getMessage() for record in failures)
