"""The memory audit as a table (issue 38, item 5): ``Server(audit=AuditStore(url, max_age=...))`` keeps the same
records as ``AuditLog``'s lines in SQLite (a file or memory), sweeps those past ``max_age``, and answers the two
questions, "what memory entered this call" and "which calls changed this key", in Python and through
``mcpkit audit``, as the file does; no row holds a value, a plain key, a caller's name, a token or the secret."""

from __future__ import annotations

import json
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcpkit import AuditLog, AuditStore, ConfigurationError, ManualClock
from mcpkit.testing import running
from mcpkit_storage import Keyring, key_hash
from telemetry.recording import PROVIDER
from telemetry.test_audit import MARKER, SECRET, TOKENS, desk

ERAS = ("2025-11-25", "2026-07-28")


async def _three_calls(audit: Any, tmp_path: Path, protocol: str) -> None:
    server = desk(audit, _folder(tmp_path), history=2, telemetry_key_labels=True, tracer_provider=PROVIDER)
    async with running(server, protocol=protocol) as call_as:
        await call_as("nour").call("set_signature", {"text": f"Nour {MARKER}"})
        await call_as("sam").call("draft_reply", {"ticket": "T-1"})
        await call_as("nour").call("draft_reply", {"ticket": "T-2"})


@pytest.mark.parametrize("protocol", ERAS)
async def test_the_store_answers_what_entered_a_call_and_which_calls_changed_a_key(
    protocol: str, tmp_path: Path, spans: InMemorySpanExporter
) -> None:
    audit = AuditStore(f"sqlite:///{tmp_path / 'audit' / 'memory.db'}", max_age=3600)
    await _three_calls(audit, tmp_path, protocol)
    hashed = key_hash(Keyring([SECRET]), "user", f"signature:{MARKER}")
    # which calls changed this key: one write, by set_signature, from nour's hashed id
    [changed] = audit.changed(key=hashed)
    assert (changed["tool"], changed["method"], changed["operation"]) == ("set_signature", "tools/call", "write")
    assert changed["db_operation"] == "swap_many"  # the value and its change history (history=3) in one store call
    assert audit.changed(label="signature") == [changed]
    # what memory entered each draft_reply: by its trace id, then by its request id narrowed to its caller
    drafts = [line for line in audit.lines() if line["tool"] == "draft_reply"]
    assert [line["hit"] for line in drafts] == [False, True]
    [nour_draft] = [s for s in spans.get_finished_spans() if s.name == "tools/call draft_reply"][1:]
    assert nour_draft.context is not None
    entered = audit.entered(trace_id=format(nour_draft.context.trace_id, "032x"))
    assert entered == [drafts[1]]
    assert entered[0]["caller"] == changed["caller"]
    by_request = audit.entered(request_id=drafts[1]["request_id"], caller=drafts[1]["caller"])
    assert drafts[1] in by_request
    assert drafts[0] not in by_request
    # the same records as the file's lines, and the same answers
    log = AuditLog(tmp_path / "memory.jsonl")
    await _three_calls(log, tmp_path / "again", protocol)
    assert [line["operation"] for line in log.lines()] == [line["operation"] for line in audit.lines()]
    assert [line["tool"] for line in log.changed(label="signature")] == ["set_signature"]
    # nothing said: the whole database file, and every row
    audit.close()
    database = tmp_path / "audit" / "memory.db"
    assert stat.S_IMODE(database.stat().st_mode) == 0o600
    rows = sqlite3.connect(database).execute("SELECT * FROM mcpkit_audit").fetchall()
    stored = repr(rows).encode() + b"".join(path.read_bytes() for path in database.parent.iterdir())
    for secret in (MARKER, *TOKENS.values(), "nour", "sam", SECRET):
        assert secret.encode() not in stored, secret


async def test_mcpkit_audit_asks_the_store_and_the_file_the_same_questions(tmp_path: Path) -> None:
    store, log = AuditStore(tmp_path / "audit.db"), AuditLog(tmp_path / "audit.jsonl")
    await _three_calls(store, tmp_path / "s", "2025-11-25")
    await _three_calls(log, tmp_path / "l", "2025-11-25")
    store.close()
    log.close()
    hashed = key_hash(Keyring([SECRET]), "user", f"signature:{MARKER}")
    answers = {}
    for source in (f"sqlite:///{tmp_path / 'audit.db'}", str(tmp_path / "audit.jsonl")):
        changed = _mcpkit("audit", "changed", source, "--key", hashed)
        [record] = [json.loads(line) for line in changed.stdout.splitlines()]
        assert record["tool"] == "set_signature"
        call = ("--request-id", record["request_id"], "--caller", record["caller"])
        entered = _mcpkit("audit", "entered", source, *call)
        answers[source] = [json.loads(line)["db_operation"] for line in entered.stdout.splitlines()]
    # the history read, then the value and its change history written in one store call
    assert list(answers.values()) == [["read", "swap_many", "swap_many"]] * 2
    nothing = _mcpkit("audit", "changed", str(tmp_path / "audit.jsonl"), "--label", "nothing")
    assert (nothing.stdout, nothing.stderr.startswith("no record answers")) == ("", True)
    missing = _mcpkit("audit", "changed", str(tmp_path / "gone.db"), "--key", hashed, code=2)
    assert "There is no audit at" in missing.stderr
    unasked = _mcpkit("audit", "entered", str(tmp_path / "audit.db"), "--caller", "x", code=2)
    assert "by --request-id or --trace-id" in unasked.stderr


def test_records_older_than_max_age_are_never_answered_and_are_swept(tmp_path: Path) -> None:
    clock = ManualClock(1_000.0)
    audit = AuditStore(tmp_path / "audit.db", max_age=100, clock=clock.now)
    audit.write({"operation": "write", "key": "00aa", "request_id": "1"})
    clock.advance(50)
    audit.write({"operation": "delete", "key": "00aa", "request_id": "2"})
    assert [line["operation"] for line in audit.changed(key="00aa")] == ["write", "delete"]
    clock.advance(60)  # the first is 110 s old: past max_age, no longer answered even before a sweep
    assert [line["request_id"] for line in audit.lines()] == ["2"]
    assert audit.entered(request_id="1") == []
    assert audit.sweep() == 1
    audit.write({"operation": "read", "key": "00bb"})  # a write sweeps too, at most every min(60, max_age / 10) s
    clock.advance(200)
    audit.write({"operation": "read", "key": "00cc"})
    audit.close()
    kept = sqlite3.connect(tmp_path / "audit.db").execute("SELECT key FROM mcpkit_audit").fetchall()
    assert kept == [("00cc",)]


def test_an_audit_store_is_checked_when_it_is_made(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"a redis:// store is not supported: give it 'memory', sqlite:///"):
        AuditStore("redis://127.0.0.1:6379/0")
    with pytest.raises(ConfigurationError, match=r"AuditStore\(max_age=...\) is a number of seconds above 0"):
        AuditStore(max_age=0)
    audit = AuditStore()  # memory: this process only, kept across close()
    audit.write({"operation": "write", "key": "00aa"})
    audit.close()
    assert [line["key"] for line in audit.lines()] == ["00aa"]
    with pytest.raises(ValueError, match=r"exactly one of key= \(its hash\) or label="):
        audit.changed(key="00aa", label="signature")
    with pytest.raises(ValueError, match=r"by its request_id= or its trace_id="):
        audit.entered(caller="x")


def test_which_calls_changed_a_key_leaves_out_what_changed_nothing(tmp_path: Path) -> None:
    applied = {"operation": "write", "key": "00aa", "bytes": 10}
    refused = [
        {"operation": "write", "key": "00aa", "hit": False},  # a compare-and-set another writer won
        {"operation": "delete", "key": "00aa", "hit": False},  # a delete of nothing
        {"operation": "write", "key": "00aa", "error": "QuotaExceededError"},
        {"operation": "read", "key": "00aa", "hit": True},
    ]
    for audit in (AuditStore(tmp_path / "audit.db"), AuditLog(tmp_path / "audit.jsonl")):
        audit.write_many([applied, *refused, {"operation": "delete", "key": "00aa", "hit": True}])
        assert [(line["operation"], line.get("hit")) for line in audit.changed(key="00aa")] == [
            ("write", None),
            ("delete", True),
        ]
        audit.close()


def test_mcpkit_audit_only_reads_what_it_is_given(tmp_path: Path) -> None:
    other = tmp_path / "app.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE kv (k TEXT)")
    before = other.read_bytes()
    refused = _mcpkit("audit", "changed", str(other), "--key", "00aa", code=2)
    assert "no memory audit (no table mcpkit_audit)" in refused.stderr, refused.stderr
    assert other.read_bytes() == before
    assert not other.with_name("app.db-wal").exists()
    junk = tmp_path / "notes.txt"
    junk.write_text("hello\n")
    unread = _mcpkit("audit", "changed", str(junk), "--key", "00aa", code=2)
    assert "line 1, is not an audit record" in unread.stderr
    assert "Traceback" not in unread.stderr


def test_mcpkit_audit_holds_rows_to_the_servers_max_age_and_reads_every_rotated_file(tmp_path: Path) -> None:
    clock = ManualClock(1_000.0)
    store = AuditStore(tmp_path / "audit.db", max_age=100, clock=clock.now)
    store.write({"operation": "write", "key": "00aa", "request_id": "1"})
    store.close()  # the server stops: nothing sweeps the row, and it ages past max_age on the real clock
    assert _mcpkit("audit", "changed", str(tmp_path / "audit.db"), "--key", "00aa").stdout == ""
    log = AuditLog(tmp_path / "memory.jsonl", max_bytes=1024, keep=20)
    for number in range(40):  # three lines a file: 13 rotated files, more than a reader's default keep of 7
        log.write({"operation": "write", "key": "00bb", "request_id": str(number), "pad": "x" * 200})
    log.close()
    assert len(list(tmp_path.glob("memory.jsonl.*"))) == 13
    answered = _mcpkit("audit", "changed", str(tmp_path / "memory.jsonl"), "--key", "00bb").stdout.splitlines()
    assert [json.loads(line)["request_id"] for line in answered] == [str(number) for number in range(40)]


def test_a_sweep_deletes_a_backlog_a_batch_a_write(tmp_path: Path) -> None:
    clock = ManualClock(1_000.0)
    audit = AuditStore(tmp_path / "audit.db", max_age=10, clock=clock.now)
    audit.write_many([{"operation": "read", "key": f"{number:04x}"} for number in range(2500)])
    clock.advance(11)
    audit.write({"operation": "read", "key": "new"})  # the first sweep takes one batch of the 2,500 expired rows
    count = sqlite3.connect(tmp_path / "audit.db").execute("SELECT count(*) FROM mcpkit_audit").fetchone()
    assert count == (1501,)
    assert audit.sweep() == 1500  # sweep() goes on until none is left
    assert [line["key"] for line in audit.lines()] == ["new"]
    audit.close()


def _folder(path: Path) -> Path:
    path.mkdir(exist_ok=True)
    return path


def _mcpkit(*words: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "mcpkit", *words], capture_output=True, text=True, check=False)
    assert done.returncode == code, done.stderr
    return done
