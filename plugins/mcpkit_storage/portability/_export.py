"""``export_memory``: every remembered value of a store (or of some users) into an export file, a page at a time."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO

from ..index import is_shard_key
from ..sealing import Keyring, UndecryptableError
from ..stores import Address, Store
from ..vault import VERSIONS_KEY, Vault, settled_json
from ._format import record_of
from ._lines import LineWriter
from ._sealing import SealingKey

__all__ = ["ExportReport", "export_memory"]

#: Buckets that are not memory: the server's tasks (transient work, gone within hours), which an export leaves out.
_NOT_MEMORY = frozenset({"tasks"})


@dataclass
class ExportReport:
    """What ``export_memory`` wrote: values, and what it left out (past their deadline, or not readable with the
    secrets given: sealed under a secret that is not in REMEMBER_SECRET, or damaged)."""

    exported: int = 0
    #: Of ``exported``, the keys' change histories (each beside its value, not a value of its own).
    histories: int = 0
    expired: int = 0
    unreadable: int = 0

    def __str__(self) -> str:
        text = f"exported {self.exported - self.histories} values"
        if self.histories:
            text += f" and {self.histories} change histories"
        if self.expired:
            text += f", left out {self.expired} past their deadline"
        if self.unreadable:
            text += (
                f", left out {self.unreadable} that do not open with REMEMBER_SECRET (sealed under a secret it lacks,"
                " or damaged)"
            )
        return text


def _refused(key: SealingKey | None, plaintext: bool) -> str | None:
    if key is None and not plaintext:
        return "An export is sealed: give a passphrase or key file, or ask for plaintext explicitly (plaintext=True)."
    if key is not None and plaintext:
        return "An export is either sealed with a key or plaintext: not both."
    return None


async def export_memory(
    store: Store,
    keyring: Keyring,
    out: IO[bytes],
    *,
    key: SealingKey | None = None,
    plaintext: bool = False,
    users: Sequence[str] | None = None,
    now: float | None = None,
    progress: Callable[[int], None] | None = None,
) -> ExportReport:
    """Write every live value of ``store`` (or of the user ids in ``users``) to ``out``, sealed with ``key`` unless
    ``plaintext``. Vector shards and search postings are left out (an import makes them again), and so are the
    server's tasks. Memory stays bounded: the store is read a page at a time and each record written at once.
    ``progress`` is called with the count of values written so far, every few hundred."""
    refusal = _refused(key, plaintext)
    if refusal is not None:
        raise ValueError(refusal)
    now = time.time() if now is None else now
    vault = Vault(store, keyring)
    wanted: frozenset[str] | None = None
    if users is not None:
        wanted = frozenset(owner for user in users for owner in keyring.owners_for(json.dumps(["u", user])))
    writer = LineWriter(out, key)
    writer.header({"users": None if users is None else list(users)}, now)
    report = ExportReport()
    async for record in store.scan():
        if wanted is not None and record.owner not in wanted:
            continue
        try:
            payload, _ = vault.open_record(Address(record.owner, record.bucket, record.key), record.entry)
            identity, bucket, name = payload.names_text()
        except (UndecryptableError, ValueError):
            report.unreadable += 1
            continue
        if bucket in _NOT_MEMORY or is_shard_key(name):
            continue
        if not (record.entry.live(now) and payload.live(now)):
            report.expired += 1
            continue
        history = name.startswith(VERSIONS_KEY)
        try:
            value_json = payload.value_json
            if history:  # a change history: without the copies a ttl ended
                value_json = settled_json(value_json, now)
            line = record_of(
                identity,
                bucket,
                name,
                value_json,
                payload.expires_at,
                payload.written_at,
                indexed=record.indexed,
                now=now,
                provenance=payload.provenance,
                created=record.entry.created,
            )
        except ValueError:  # an owner that is no caller's identity (no value of a plugin's), or a damaged provenance
            report.unreadable += 1
            continue
        writer.record(line)
        report.exported += 1
        report.histories += history
        if progress is not None and report.exported % 512 == 0:
            progress(report.exported)
    writer.end()
    if progress is not None:
        progress(report.exported)
    return report
