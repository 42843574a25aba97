"""``import_memory``: an export file's values into a store, each whole or not at all, as the conflicts policy says."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import time
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any, Literal, NamedTuple, get_args

from mcpkit_search import Embedder

from ..base import Place, RememberConflictError, backoff, recorded_quotas
from ..index import Semantic
from ..sealing import Keyring, UndecryptableError
from ..stores import Address, Entry, Quota, QuotaExceededError, Store, bulk_writes
from ..vault import VERSIONS_KEY, Found, Observed, Sealed, Swap, Vault, found, same_history
from ._format import ExportFileError, Item, item_of, scope_of
from ._histories import Refusals, history_left_out, value_key
from ._lines import LineReader
from ._report import ImportReport
from ._sealing import SealingKey

__all__ = ["CONFLICTS", "Conflicts", "ImportReport", "import_memory"]

Conflicts = Literal["skip", "replace", "newer"]
CONFLICTS: tuple[Conflicts, ...] = get_args(Conflicts)

_ATTEMPTS = 16
#: Values read from the file before they are written, so that one store call can say which keys are free.
_CHUNK = 512
#: A value of the file waiting to be written: its line, the value, and where it goes.
_Pending = tuple[int, Item, Place]


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
    if owner[0] == "s" and only is not None:
        raise ExportFileError(
            line,
            "a value of a session, which belongs to no user: an import of some users' values (--user) takes no "
            "session's; export those users alone (export --user), or import the whole file without --user",
        )
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
    quotas: Mapping[str, Quota] | None = None,
    embedder: Embedder | None = None,
    now: float | None = None,
    progress: Callable[[int], None] | None = None,
) -> ImportReport:
    """Write the values of an export file's ``lines`` (bytes with their newlines, as a file opened ``rb`` yields)
    into ``store``, each in one atomic write with its search postings (and with an ``embedder``, its vector).

    A value whose key is there already is kept (``skip``), replaced (``replace``), or replaced when the file's is
    newer (``newer``); one equal to the file's is left as it is, so importing a file twice changes nothing. Each
    value lands whole or not at all, and one that does not fit its quota (per owner and bucket) is refused, listed in
    the report: ``quota`` for every bucket; else ``quotas`` by namespace (``""``: remember's own buckets); else the
    quotas the store's servers recorded when they started (``record_quotas``).
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
    quota_of: Callable[[str], Quota | None]
    if quota is not None:
        held, quota_of = {"*": quota}, (lambda _: quota)
    else:
        held = dict(recorded_quotas(await store.notes()) if quotas is None else quotas)
        quota_of = _quota_of(held)
    report = ImportReport(quotas=held)
    now = time.time() if now is None else now
    shift = _clock_shift(reader.header, now)
    chunks = _Chunks(vault, on_conflict, quota_of, now, report)
    async with bulk_writes(store):  # a store with a cheaper way to take a long run of writes takes it
        pending: list[_Pending] = []
        try:
            for line, record in reader.records():
                try:
                    # a history's versions' time left, as the entry's, no longer
                    item = item_of(record, (shift, now))
                except (ValueError, OverflowError) as exc:  # OverflowError: a time of more digits than a float holds
                    raise ExportFileError(line, f"the record is not a value: {exc}") from None
                owner = _mapped(item, users, allow_global, only, line)
                pending.append((line, item, _place(tuple(owner), item.bucket)))
                if len(pending) == _CHUNK:
                    await chunks.add(pending)
                    pending = []
                    if progress is not None:
                        progress(reader.count)
        except ExportFileError as exc:
            await chunks.add(pending)  # those before the bad line, each whole
            await chunks.flush()
            raise ExportFileError(exc.line, exc.problem, report.imported) from None
        except (Exception, asyncio.CancelledError, KeyboardInterrupt):  # unreadable on, or cancelled: no write left
            with contextlib.suppress(Exception):
                await chunks.flush(write=False)
            raise
        await chunks.add(pending)
        await chunks.flush()
        if progress is not None:
            progress(reader.count)
    return report


@lru_cache(maxsize=1024)
def _place(owner: tuple[str, ...], bucket: str) -> Place:
    """Where a value of ``owner`` (its identity's parts) goes in ``bucket`` (cached: a file's values have a few)."""
    return Place(json.dumps(list(owner)), bucket, owner[0] == "s")


def _quota_of(quotas: Mapping[str, Quota]) -> Callable[[str], Quota | None]:
    """A bucket's quota: its namespace's."""
    return lambda bucket: quotas.get(scope_of(bucket)[0])


class _Chunk(NamedTuple):
    """Values of the file sealed for one store call: all of them, which were free, those sealed, and those whose
    outcome the store's copy settled without a write (``unchanged`` or ``kept``)."""

    pending: list[_Pending]
    free: list[int]
    sealed: Sealed
    settled: dict[int, str]


class _Chunks:
    """Writes the file's values a chunk at a time, in file order. With one address per key, one store call finds
    which keys of a chunk are free (a migration's usual case), and one more writes them all (``Vault.swap_many``: one
    transaction on SQLite and PostgreSQL) while the next chunk is sealed and indexed; the others, and any another
    writer took meanwhile, are then written one by one."""

    def __init__(
        self,
        vault: Vault,
        on_conflict: Conflicts,
        quota_of: Callable[[str], Quota | None],
        now: float,
        report: ImportReport,
    ) -> None:
        self._vault, self._on_conflict, self._quota_of, self._now = vault, on_conflict, quota_of, now
        self._report = report
        self._ready: _Chunk | None = None  # sealed, not yet written
        self._writing: tuple[_Chunk, asyncio.Future[list[bool | QuotaExceededError]]] | None = None  # in the store
        self._refusals = Refusals()

    async def add(self, pending: list[_Pending]) -> None:
        """Seal ``pending``'s free values while the chunk before is written, a write that goes on while the file's
        next chunk is read (an embedder's vector shards: after); the chunk before that is counted first."""
        await self._written()
        vault, now = self._vault, self._now
        free: list[int] = []
        settled: dict[int, str] = {}
        swaps: list[Swap] = []
        if pending and len(vault.keyring) == 1 and not vault.store.legacy:
            keyring = vault.keyring
            addresses = [keyring.locate(place.identity, place.bucket, item.key)[0] for _, item, place in pending]
            beside = {  # the value of each change history's key, unless ``replace`` writes the history anyway
                index: keyring.locate(place.identity, place.bucket, value_key(item.key))[0]
                for index, (_, item, place) in enumerate(pending)
                if item.key.startswith(VERSIONS_KEY) and self._on_conflict != "replace"
            }
            # one call for both (a key the chunk before takes is found again)
            entries = await vault.store.get_many([*addresses, *beside.values()], now)
            values = dict(zip(beside, entries[len(addresses) :], strict=True))
            for index, entry in enumerate(entries[: len(addresses)]):
                if self._refusals.left_out(pending[index][2], pending[index][1].key, pending[index][1].value_json):
                    settled[index] = "left out"
                elif index in values and history_left_out(
                    pending[index][1].value_json, self._kept(beside[index], values[index]), self._on_conflict
                ):
                    settled[index] = "kept"
                elif entry is None:
                    free.append(index)
                elif (outcome := self._settled(addresses[index], entry, pending[index][1])) is not None:
                    settled[index] = outcome
            for index in free:
                _, item, place = pending[index]
                swaps.append(await _swap_of(vault, item, place, Observed(None, ((addresses[index], None),)), now))
        if vault.semantic is not None:  # shards are written as values are sealed: never ahead of a failed write
            await self.flush()
        if self._ready is not None:
            ready, self._ready = self._ready, None
            self._writing = ready, asyncio.ensure_future(vault.write_sealed(ready.sealed, now))
            await asyncio.sleep(0)  # the task runs to its store call, handed to the worker thread now: sealing
            # and reading the file never yield to the loop, and would hold the write back until they were done
        try:
            sealed = await self._sealed(swaps)
        except BaseException:
            await self._written()
            raise
        self._ready = _Chunk(pending, free, sealed, settled)

    async def _written(self) -> None:
        """Wait for the chunk in the store, and count it."""
        if self._writing is not None:
            chunk, writing = self._writing
            self._writing = None
            await self._finish(chunk, await writing)

    async def _sealed(self, swaps: list[Swap]) -> Sealed:
        """``swaps`` sealed in file order, each run of one quota's with it (a chunk has one run, or a few)."""
        sealed = Sealed([], [], [])
        start = 0
        while start < len(swaps):
            quota = self._quota_of(swaps[start].place.bucket)
            end = start + 1
            while end < len(swaps) and self._quota_of(swaps[end].place.bucket) == quota:
                end += 1
            run = await self._vault.seal_many(swaps[start:end], self._now, quota)
            sealed.places.extend(run.places)
            sealed.writes.extend(run.writes)
            sealed.sharded.extend(run.sharded)
            start = end
        return sealed

    def _kept(self, address: Address, entry: Entry | None) -> Found | None:
        """The store's live value at ``address`` (None: none, or one that cannot be read here)."""
        if entry is None:
            return None
        try:
            payload, _ = self._vault.open_record(address, entry)
        except (UndecryptableError, ValueError):
            return None
        return found(payload) if payload.live(self._now) else None

    def _settled(self, address: Address, entry: Entry, item: Item) -> str | None:
        """What the store's copy of a value decides with no write: "unchanged" when it is the file's value, byte for
        byte, of the same write time (a second import of a file); "kept" when ``skip`` keeps any live copy; None when
        a compare-and-set must decide (or the copy cannot be read here)."""
        try:
            payload, _ = self._vault.open_record(address, entry)
        except (UndecryptableError, ValueError):
            return None
        if not payload.live(self._now):
            return None
        if payload.written_at == item.updated and (
            same_history(item.value_json, payload.value_json)
            if item.key.startswith(VERSIONS_KEY)
            else payload.value_json == item.value_json
        ):
            return "unchanged"
        return "kept" if self._on_conflict == "skip" else None

    async def flush(self, *, write: bool = True) -> None:
        """Write the chunk sealed last (after the one in the store); ``write`` False: only wait for that one."""
        await self._written()
        if self._ready is not None and write:
            ready, self._ready = self._ready, None
            await self._finish(ready, await self._vault.write_sealed(ready.sealed, self._now))

    async def _finish(self, chunk: _Chunk, results: list[bool | QuotaExceededError]) -> None:
        """Count what the chunk's store call did, then write the chunk's other values one by one."""
        report = self._report
        done: set[int] = set(chunk.settled)
        refused: list[int] = []
        refusals = self._refusals
        for outcome in chunk.settled.values():
            report.count(outcome)
        for index, result in zip(chunk.free, results, strict=True):
            line, item, place = chunk.pending[index]
            if result is True:
                report.imported += 1
                report.histories += item.key.startswith(VERSIONS_KEY)
            elif isinstance(result, QuotaExceededError):
                refused.append(line)
                refusals.refused(place, item.key, item.value_json, item.updated)
            else:
                continue  # taken meanwhile (or twice in the file): written below, as the conflicts policy says
            done.add(index)
        for index, (line, item, place) in enumerate(chunk.pending):
            if index in done:
                continue
            if refusals.left_out(place, item.key, item.value_json):  # its value did not fit: nor does its story
                report.count("left out")
                continue
            try:
                quota = self._quota_of(place.bucket)
                outcome = await _apply(self._vault, place, item, self._on_conflict, quota, self._now, line)
            except QuotaExceededError:
                refused.append(line)
                refusals.refused(place, item.key, item.value_json, item.updated)
                continue
            report.count(outcome)
            report.histories += outcome == "imported" and item.key.startswith(VERSIONS_KEY)
        for index, result in zip(chunk.free, results, strict=True):  # in one call with their values, or before
            if result is True:  # their refusals were known: taken out again below
                _, item, place = chunk.pending[index]
                refusals.written(place, item.key, item.value_json)
        gone = await refusals.take_out(self._vault, self._now)
        report.imported -= gone
        report.histories -= gone
        report.histories_left_out += gone
        report.over_quota.extend(sorted(refused))


def _clock_shift(header: Mapping[str, Any], now: float) -> float:
    """How far this import's clock is past the export's (``exported_at``, when the file's times left were taken)."""
    exported_at = header.get("exported_at")
    if not isinstance(exported_at, int | float) or isinstance(exported_at, bool) or not math.isfinite(exported_at):
        return 0.0
    return now - exported_at


async def _swap_of(vault: Vault, item: Item, place: Place, observed: Observed, now: float) -> Swap:
    """The compare-and-set that writes the file's value over what ``observed`` saw, with its time left, its write
    time, its first-write time (unknown in the file: the store's own for a key it holds, the file's write time for a
    new one, never the import's), and (for a searchable value) its vector."""
    expires_at = None if item.ttl is None else now + item.ttl
    vector = await vault.vector(place, item.key, item.value_json.decode()) if item.indexed else b""
    written_at, indexed = item.updated, item.indexed
    created = _created(item, observed)
    return Swap(place, item.key, observed, item.value_json, expires_at, written_at, indexed, vector, item.meta, created)


def _created(item: Item, observed: Observed) -> float | None:
    """The first-write time a write of ``item`` over what ``observed`` saw gives: the file's; unknown there, the
    file's write time for a free key, else None (the store keeps its own)."""
    if item.created is None and all(there is None for _, there in observed.seen):
        return item.updated
    return item.created


async def _apply(
    vault: Vault, place: Place, item: Item, on_conflict: Conflicts, quota: Quota | None, now: float, line: int
) -> str:
    """Write one value by compare-and-set against what is there: "imported", "unchanged" or "kept";
    RememberConflictError naming the value by its line (an import's errors never show a key) when writers in other
    processes kept coming first."""
    history = item.key.startswith(VERSIONS_KEY)
    value = json.dumps(json.loads(item.value_json))
    if history and on_conflict != "replace":  # a history goes in only with the value it ends with (or none there)
        kept = (await vault.observe(place, value_key(item.key), now)).found
        if history_left_out(item.value_json, kept, on_conflict):
            return "kept"
    swap: Swap | None = None
    for attempt in range(_ATTEMPTS):
        observed = await vault.observe(place, item.key, now)
        there = observed.found
        if there is not None:
            stored = json.dumps(there.value)
            if there.updated_at == item.updated and (
                same_history(item.value_json, stored.encode()) if history else stored == value
            ):
                return "unchanged"
            if on_conflict == "skip":
                return "kept"
            if on_conflict == "newer" and (item.updated or 0.0) <= (there.updated_at or 0.0):
                return "kept"
        swap = (  # a retry keeps the vector, its costly part, and sees what is there now
            await _swap_of(vault, item, place, observed, now)
            if swap is None
            else swap._replace(observed=observed, created=_created(item, observed))
        )
        (written,) = await vault.swap_many([swap], now, quota)
        if isinstance(written, QuotaExceededError):
            raise written
        if written:
            return "imported"
        await backoff(attempt)
    raise RememberConflictError(f"line {line}", _ATTEMPTS)
