"""``mcpkit audit entered|changed SOURCE``: the memory audit's two questions, asked of a JSON Lines file
(``AuditLog``) or a table (``AuditStore``), each record one JSON line on stdout."""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..telemetry import AuditLog, AuditSink, AuditStore
from ._target import CommandError

__all__ = ["add_audit", "audit_of"]

_EXAMPLES = """\
SOURCE is the audit as the server was given it: an AuditLog's file (memory.jsonl; its rotated files
memory.jsonl.1, ... are read too, oldest first) or an AuditStore's SQLite database (sqlite:///audit.db, or its
path). A key's hash is key_hash(Keyring([secret]), bucket, key) from mcpkit_storage, computed where the secret is.
The records never hold a value; each is printed as it is kept, one JSON object a line.

exit codes: 0 answered (no record found: nothing on stdout, one line on stderr), 2 SOURCE is not an audit
(or cannot be read); SOURCE is only read, never changed

examples:
  mcpkit audit entered audit/memory.jsonl --request-id 7 --caller 361023ab...   what that client's call 7 read, wrote
  mcpkit audit entered sqlite:///audit.db --trace-id 4bf9...   the same, by the call's trace id
  mcpkit audit changed sqlite:///audit.db --key 3f2a9c0e11d84b67   which calls wrote or deleted the key, when, how
  mcpkit audit changed audit/memory.jsonl --label signature    the same for every key labelled signature
"""


def add_audit(commands: Any) -> None:
    audit = commands.add_parser(
        "audit",
        help="ask the memory audit what entered a call, or which calls changed a key",
        description="Ask a server's memory audit (Server(audit=AuditLog(...)) or AuditStore(...)) one of its two "
        "questions; the matching records go to stdout as JSON Lines, oldest first.",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    questions = audit.add_subparsers(title="questions", metavar="QUESTION", required=True)
    entered = questions.add_parser("entered", help="what memory a call read, wrote, listed or searched")
    entered.add_argument("source", metavar="SOURCE", help="the audit file (.jsonl) or database (sqlite:///...)")
    entered.add_argument("--request-id", help="the call's JSON-RPC request id (a client's counter: narrow it)")
    entered.add_argument("--trace-id", help="the call's trace id (32 hex digits)")
    entered.add_argument("--session", help="narrow to the session of this hash (a record's session field)")
    entered.add_argument("--caller", help="narrow to the caller of this hash (a record's caller field)")
    entered.set_defaults(handler=_entered)
    changed = questions.add_parser("changed", help="which calls wrote or deleted a key: when, tool, client")
    changed.add_argument("source", metavar="SOURCE", help="the audit file (.jsonl) or database (sqlite:///...)")
    key = changed.add_mutually_exclusive_group(required=True)
    key.add_argument("--key", help="the key's hash (16 hex digits)")
    key.add_argument("--label", help="the key's label (with Server(telemetry_key_labels=True))")
    changed.set_defaults(handler=_changed)


def audit_of(source: str) -> AuditSink:
    """The audit ``source`` names, opened for reading: a ``sqlite:///`` URL or an SQLite file is a table, any other
    existing file a JSON Lines log."""
    path = Path(source.removeprefix("sqlite:///"))
    if not path.is_file():
        raise CommandError(f"There is no audit at {source!r}: give the file or database the server's audit= names.")
    with open(path, "rb") as head:
        is_table = head.read(16) == b"SQLite format 3\x00"
    if source.startswith("sqlite:///") and not is_table:
        raise CommandError(f"{source!r} is not an SQLite database: give an AuditLog's file by its path alone.")
    if not is_table:
        return AuditLog(path)
    try:  # read-only, holding the rows to the max_age its server recorded (an idle server sweeps nothing)
        return AuditStore.reading(path)
    except (ValueError, OSError, sqlite3.Error) as exc:
        raise CommandError(f"{source!r} cannot be read as a memory audit: {exc}") from None


def _entered(args: argparse.Namespace) -> int:
    if args.request_id is None and args.trace_id is None:
        raise CommandError("mcpkit audit entered asks by --request-id or --trace-id (--session, --caller narrow).")
    audit = audit_of(args.source)
    return _answered(
        args.source,
        lambda: audit.entered(
            request_id=args.request_id, trace_id=args.trace_id, session=args.session, caller=args.caller
        ),
    )


def _changed(args: argparse.Namespace) -> int:
    audit = audit_of(args.source)
    return _answered(args.source, lambda: audit.changed(key=args.key, label=args.label))


def _answered(source: str, question: Callable[[], list[dict[str, Any]]]) -> int:
    """The question's records printed; a file or table that cannot be read is one line and exit code 2."""
    try:
        records = question()
    except (ValueError, OSError, sqlite3.Error) as exc:
        raise CommandError(f"{source!r} cannot be read as a memory audit: {exc}") from None
    return _printed(records)


def _printed(records: list[dict[str, Any]]) -> int:
    for record in records:
        print(json.dumps(record, ensure_ascii=False))
    if not records:
        print("no record answers the question (the audit keeps records for its max_age)", file=sys.stderr)
    return 0
