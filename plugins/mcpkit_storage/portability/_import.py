"""``import_memory``: an export file's values into a store, each whole or not at all, as the conflicts policy says."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args

from mcpkit_search import Embedder

from ..base import Place, RememberConflictError, backoff
from ..index import Semantic
from ..sealing import Keyring
from ..stores import Quota, QuotaExceededError, Store
from ..vault import Observed, Vault
from ._format import ExportFileError, Item, item_of
from ._lines import LineReader
from ._sealing import SealingKey

__all__ = ["CONFLICTS", "Conflicts", "ImportReport", "import_memory"]

Conflicts = Literal["skip", "replace", "newer"]
CONFLICTS: tuple[Conflicts, ...] = get_args(Conflicts)

#: Lines named in a report, at most (the count says how many more).
_NAMED = 10
_ATTEMPTS = 16
#: Values read from the file before they are written, so that one store call can say which keys are free.
_CHUNK = 256
#: A value of the file waiting to be written: its line, the value, and where it goes.
_Pending = tuple[int, Item, Place]


@dataclass
class ImportReport:
    """What ``import_memory`` did: values written, left as they were (already there, or newer there), and not written
    because their bucket's quota was full (by line number: an import report never shows a key or a value)."""

    imported: int = 0
    unchanged: int = 0
    kept: int = 0
    over_quota: list[int] = field(default_factory=list)

    def __str__(self) -> str:
        text = f"imported {self.imported} values, {self.unchanged} already there as in the file"
        if self.kept:
            text += f", {self.kept} kept as the store has them (--on-conflict)"
        if self.over_quota:
            lines = ", ".join(str(line) for line in self.over_quota[:_NAMED])
            more = f" and {len(self.over_quota) - _NAMED} more" if len(self.over_quota) > _NAMED else ""
            text += (
                f"; {len(self.over_quota)} did not fit their bucket's quota and were not written (lines {lines}{more})"
            )
        return text


def _mapped(item: Item, users: Mapping[str, str], allow_global: bool, only: set[str] | None, line: int) -> list[str]:
    """The owner a value goes to: its own, or its user's mapped one; ExportFileError when the file asks for what
    was not allowed."""
    owner = item.identity
    if owner[0] == "g" and not allow_global:
        raise ExportFileError(
            line,
            "a value of the global scope, which every caller reads: pass --global (allow_global=True) to import it",
        )
    if owner[0] == "u":
        user = users.get(owner[1], owner[1])
        if only is not None and user not in only:
            raise ExportFileError(
                line,
                f"a value of user {owner[1]!r}, who is not among the users to import; to import it as another user, "
                f"map it: --map-user {owner[1]}=NEW_USER_ID",
            )
        return ["u", user]
    return owner


async def import_memory(
    store: Store,
    keyring: Keyring,
    lines: Iterable[bytes],
    *,
    key: SealingKey | None = None,
    plaintext: bool = False,
    on_conflict: Conflicts = "skip",
    users: Mapping[str, str] | None = None,
    only_users: Iterable[str] | None = None,
    allow_global: bool = False,
    quota: Quota | None = None,
    embedder: Embedder | None = None,
    now: float | None = None,
    progress: Callable[[int], None] | None = None,
) -> ImportReport:
    """Write the values of an export file's ``lines`` (bytes with their newlines, as a file opened ``rb`` yields)
    into ``store``, each in one atomic write with its search postings (and with an ``embedder``, its vector).

    A value whose key is there already is kept (``skip``), replaced (``replace``), or replaced when the file's is
    newer (``newer``); one equal to the file's is left as it is, so importing a file twice changes nothing. Each
    value lands whole or not at all; ``quota`` (per owner and bucket) refuses what does not fit, listed in the report.
    ``users`` maps user ids of the file to those to write under; ``only_users``: the file may hold no other user's
    values. ``allow_global``: the file may write the global scope. A bad file raises ``ExportFileError`` naming the
    line; the values before it are imported. Time left to live is kept: a value with an hour left has an hour left.
    """
    if on_conflict not in CONFLICTS:
        raise ValueError(f"on_conflict={on_conflict!r}: use one of {', '.join(CONFLICTS)}.")
    users = dict(users or {})
    only = None if only_users is None else set(only_users)
    reader = LineReader(lines, key, plaintext=plaintext)
    # Every bucket may be searchable: each record says whether its value was (``indexed``), and so it is again.
    vault = Vault(store, keyring, search_all=True, semantic=None if embedder is None else Semantic(embedder))
    report = ImportReport()
    now = time.time() if now is None else now
    pending: list[_Pending] = []
    try:
        for line, record in reader.records():
            try:
                item = item_of(record)
            except ValueError as exc:
                raise ExportFileError(line, f"the record is not a value: {exc}") from None
            owner = _mapped(item, users, allow_global, only, line)
            pending.append((line, item, Place(json.dumps(owner), item.bucket, owner[0] == "s")))
            if len(pending) == _CHUNK:
                await _apply_chunk(vault, pending, on_conflict, quota, now, report)
                pending.clear()
                if progress is not None:
                    progress(reader.count)
    except ExportFileError as exc:
        await _apply_chunk(vault, pending, on_conflict, quota, now, report)  # those before the bad line, each whole
        raise ExportFileError(exc.line, exc.problem, report.imported) from None
    await _apply_chunk(vault, pending, on_conflict, quota, now, report)
    if progress is not None:
        progress(reader.count)
    return report


async def _apply_chunk(
    vault: Vault, pending: list[_Pending], on_conflict: Conflicts, quota: Quota | None, now: float, report: ImportReport
) -> None:
    """Write a chunk of values in file order. With one address per key, one store call first finds which keys are
    free (a migration's usual case), and those are written with no read of their own."""
    store, keyring = vault.store, vault.keyring
    free: list[Observed | None] = [None] * len(pending)
    if pending and len(keyring) == 1 and not store.legacy:
        addresses = [keyring.locate(place.identity, place.bucket, item.key)[0] for _, item, place in pending]
        for index, entry in enumerate(await store.get_many(addresses, now)):
            if entry is None:
                free[index] = Observed(None, ((addresses[index], None),))
    for (line, item, place), observed in zip(pending, free, strict=True):
        try:
            outcome = await _apply(vault, place, item, on_conflict, quota, now, observed)
        except QuotaExceededError:
            report.over_quota.append(line)
            continue
        if outcome == "imported":
            report.imported += 1
        elif outcome == "unchanged":
            report.unchanged += 1
        else:
            report.kept += 1


async def _apply(
    vault: Vault,
    place: Place,
    item: Item,
    on_conflict: Conflicts,
    quota: Quota | None,
    now: float,
    observed: Observed | None = None,
) -> str:
    """Write one value by compare-and-set against what is there: "imported", "unchanged" or "kept"."""
    expires_at = None if item.ttl is None else now + item.ttl
    text = item.value_json.decode()
    vector = await vault.vector(place, item.key, text) if item.indexed else b""
    for attempt in range(_ATTEMPTS):
        if observed is None or attempt:  # (a key found free needs no read: its swap expects it free)
            observed = await vault.observe(place, item.key, now)
        there = observed.found
        if there is not None:
            if there.updated_at == item.updated and json.dumps(there.value) == json.dumps(json.loads(text)):
                return "unchanged"
            if on_conflict == "skip":
                return "kept"
            if on_conflict == "newer" and (item.updated or 0.0) <= (there.updated_at or 0.0):
                return "kept"
        written = await vault.swap(
            place,
            item.key,
            observed,
            item.value_json,
            expires_at,
            now,
            quota,
            written_at=item.updated,
            indexed=item.indexed,
            vector=vector,
            meta=item.meta,
        )
        if written:
            return "imported"
        await backoff(attempt)
    raise RememberConflictError(item.key, _ATTEMPTS)
