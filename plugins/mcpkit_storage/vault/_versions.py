"""``Versions``: a key's change history — its last N versions, each with its event and provenance, sealed as one
internal entry beside the value (docs/provenance.md#change-history)."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple

import pydantic_core

from ..base import INTERNAL_KEY, Place, RememberConflictError, backoff
from ..sealing import Provenance, provenance_of
from ..stores import Quota, QuotaExceededError, StoreUnavailableError
from ._found import Observed
from ._vault import Vault
from ._writer import PartialWriteError, Swap

__all__ = [
    "EVENTS",
    "VERSIONS_KEY",
    "Event",
    "Version",
    "record",
    "same_history",
    "settled_json",
    "shifted_rows",
    "swap_versioned",
    "versions_key",
    "versions_of",
    "write_many_versioned",
    "write_versioned",
]

Event = Literal["set", "update", "delete", "expire", "import"]

#: What can happen to a key: written anew, written over, forgotten (keeping its history), expired, imported.
EVENTS: tuple[Event, ...] = ("set", "update", "delete", "expire", "import")

#: Where a key's versions are kept in its place: an internal key, which no caller's key can be.
VERSIONS_KEY = INTERNAL_KEY + "versions:"

#: Compare-and-set attempts of a history write before it gives up (only writers in other processes race it).
_ATTEMPTS = 64

_LIVE_EVENTS = ("set", "update", "import")


class Version(NamedTuple):
    """One version of a key (``self.remember.history(key)``), oldest first.

    ``value`` is None for ``delete`` and ``expire`` events, and for a version whose own ttl has passed (its value
    is not kept past it). ``written_at``: when the event happened in the store; ``expires_at``: the version's
    deadline (None: none); ``provenance``: who wrote it, and the source (None for ``expire``).
    """

    event: Event
    value: Any
    written_at: float | None
    expires_at: float | None
    provenance: Provenance | None


def versions_key(key: str) -> str:
    """The internal key a key's versions live under."""
    return VERSIONS_KEY + key


def _decoded(rows: object) -> list[list[Any]]:
    """The rows of a versions entry's value: [event, value JSON or None, written at, deadline, sealed meta (base64)]."""
    return [list(row) for row in rows if isinstance(row, list) and len(row) == 5] if isinstance(rows, list) else []


def _settled(rows: list[list[Any]], now: float) -> list[list[Any]]:
    """The rows with values past their deadline dropped, and an ``expire`` row after a last version that expired."""
    for row in rows:
        if row[3] is not None and row[3] <= now:
            row[1] = None
    if rows and rows[-1][0] in _LIVE_EVENTS and rows[-1][3] is not None and rows[-1][3] <= now:
        rows.append(["expire", None, rows[-1][3], None, ""])
    return rows


def settled_json(value_json: bytes, now: float) -> bytes:
    """A versions entry's JSON as of ``now``: the values past their deadline left out (an export never carries a
    copy that a ttl ended, though the entry keeps it sealed until the key's next write). An entry with nothing to
    leave out (every version well formed, none past its deadline) is returned as it is, not encoded again."""
    try:
        stored = pydantic_core.from_json(value_json)
    except ValueError:  # what pydantic_core's parser refuses (a lone surrogate's escape), ``json.loads`` reads
        stored = json.loads(value_json)
    if isinstance(stored, list) and all(_untouched(row, now) for row in stored):
        return value_json
    rows = _settled(_decoded(stored), now)
    return json.dumps(rows, separators=(",", ":")).encode()


def _untouched(row: object, now: float) -> bool:
    """Whether ``_settled`` leaves a row as it is: a version of five parts whose deadline, if any, is ahead."""
    if not isinstance(row, list) or len(row) != 5:
        return False
    deadline = row[3]
    return deadline is None or (isinstance(deadline, int | float) and deadline > now)


def shifted_rows(rows: list[list[Any]], by: float, until: float | None = None) -> list[list[Any]]:
    """A versions entry's rows (decoded, each a list of five) with every version's deadline moved ``by`` seconds, in
    place: an import keeps each version's time left as the file's clock saw it, as it keeps the entry's own (an
    unmoved deadline can be a false ``expire``). ``until``: no deadline later than it (the entry's own, so no copy
    outlives the entry that holds it). Event times are when things happened, and stay."""
    for row in rows:
        if isinstance(row[3], int | float) and not isinstance(row[3], bool):
            row[3] += by
            if until is not None:
                row[3] = min(row[3], until)
    return rows


def same_history(value_json: bytes, other_json: bytes) -> bool:
    """Whether two versions entries hold the same versions, whatever their deadlines' clock: an entry imported twice
    at different times differs only in where its deadlines were moved (``shifted_rows``), and is the same history."""
    return _unshifted(value_json) == _unshifted(other_json)


def _unshifted(value_json: bytes) -> list[list[Any]]:
    """The rows of a versions entry with each deadline reduced to whether there is one."""
    return [[*row[:3], row[3] is not None, row[4]] for row in _decoded(json.loads(value_json))]


def versions_of(stored: object, now: float) -> list[Version]:
    """The versions a versions entry's value holds, oldest first."""
    versions = []
    for event, value, written, deadline, meta in _settled(_decoded(stored), now):
        provenance = provenance_of(base64.b64decode(meta), written) if meta else None
        versions.append(Version(event, None if value is None else json.loads(value), written, deadline, provenance))
    return versions


def _added(
    observed: Observed,
    event: Event | None,
    value_json: str | None,
    expires_at: float | None,
    now: float,
    meta: bytes,
    keep: int,
) -> tuple[bytes, float | None]:
    """The versions entry (its JSON, UTF-8, and its deadline) with a version added to what ``observed`` saw, keeping the
    last ``keep``. ``event`` None: ``set`` for a key whose last version is gone (or that has none), else ``update``."""
    rows = _settled(_decoded(None if observed.found is None else observed.found.value), now)
    chosen: Event = event or ("update" if rows and rows[-1][0] in _LIVE_EVENTS else "set")
    rows.append([chosen, value_json, now, expires_at, base64.b64encode(meta).decode() if meta else ""])
    rows = rows[-keep:]
    # The entry lives as long as the longest-lived value it holds (no longer: a value's ttl holds for its copies
    # here too); one holding events alone (after a delete that kept the history) until it is forgotten.
    deadlines = [row[3] for row in rows if row[1] is not None]
    deadline = None if not deadlines or None in deadlines else max(deadlines)
    # pydantic_core's encoder writes JSON equivalent to ``json.dumps(rows, separators=(",", ":"), ensure_ascii=False)``
    # (the same text but for floats under 1e-4, written without an exponent), in a seventh of the time (every set with a
    # history re-encodes its last versions here); whatever compares versions decodes them first.
    return pydantic_core.to_json(rows), deadline


async def record(
    vault: Vault,
    place: Place,
    key: str,
    event: Event | None,
    value_json: str | None,
    expires_at: float | None,
    now: float,
    meta: bytes,
    keep: int,
    quota: Quota | None,
) -> None:
    """Add a version to the key's history alone (a ``delete`` that keeps the history), keeping the last ``keep``."""
    name = versions_key(key)
    for attempt in range(_ATTEMPTS):
        observed = await vault.observe(place, name, now)
        text, deadline = _added(observed, event, value_json, expires_at, now, meta, keep)
        if await vault.swap(place, name, observed, text, deadline, now, quota, indexed=False):
            return
        await backoff(attempt)
    raise RememberConflictError(key, _ATTEMPTS)


async def swap_versioned(
    vault: Vault,
    value: Swap,
    history: Observed,
    event: Event | None,
    now: float,
    keep: int,
    quota: Quota | None,
) -> bool:
    """The compare-and-set ``value`` and its version added to the key's history (as ``history`` saw it) in one store
    call, all or nothing (``Store.swap_many(whole=True)``): the quota counts both before either is written. False
    when another writer came first (read both again); the ``QuotaExceededError`` raised when the quota refused."""
    text, deadline = _added(history, event, _text(value.value_json), value.expires_at, now, value.meta, keep)
    swaps = [value, Swap(value.place, versions_key(value.key), history, text, deadline, indexed=False)]
    results = await vault.swap_many(swaps, now, quota, whole=True)
    for result in results:
        if isinstance(result, QuotaExceededError):
            raise result
    return results[0] is True


async def write_versioned(
    vault: Vault,
    place: Place,
    key: str,
    event: Event | None,
    value_json: str,
    expires_at: float | None,
    now: float,
    meta: bytes,
    keep: int,
    quota: Quota | None,
    vector: bytes = b"",
) -> None:
    """Keep the value over whatever is there and add its version to the key's history: one read of both and one
    ``swap_versioned``, again while writers in other processes come first."""
    for attempt in range(_ATTEMPTS):
        seen, history = await vault.observe_beside(place, key, versions_key(key), now)
        value = Swap(place, key, seen, value_json, expires_at, vector=vector, meta=meta)
        if await swap_versioned(vault, value, history, event, now, keep, quota):
            return
        await backoff(attempt)
    raise RememberConflictError(key, _ATTEMPTS)


#: How many keys ``write_many_versioned`` writes in one all-or-nothing store call (each a value and its history).
BATCH_KEYS = 128


async def write_many_versioned(
    vault: Vault,
    place: Place,
    items: Sequence[tuple[str, str, bytes]],
    event: Event | None,
    expires_at: float | None,
    moment: Callable[[], float],
    meta: bytes,
    keep: int,
    quota: Quota | None,
) -> None:
    """``write_versioned`` of each (key, value JSON, vector), in order, each at its own ``moment()``: per batch of
    ``BATCH_KEYS`` keys, one read of their values and histories and one all-or-nothing store call writing them all.
    A batch the store refuses whole (its quota reached part-way, another writer first) is written again key by key,
    so the keys before the one that failed are kept and a ``PartialWriteError`` names that one."""
    for start in range(0, len(items), BATCH_KEYS):
        batch = items[start : start + BATCH_KEYS]
        now = moment()
        try:
            if await _batched(vault, place, batch, event, expires_at, now, moment, meta, keep, quota):
                continue
        except StoreUnavailableError as exc:
            raise PartialWriteError(batch[0][0], exc, vault.sharded(place)) from None
        for key, value_json, vector in batch:
            try:
                await write_versioned(
                    vault, place, key, event, value_json, expires_at, moment(), meta, keep, quota, vector
                )
            except (StoreUnavailableError, QuotaExceededError) as exc:
                raise PartialWriteError(key, exc, vault.sharded(place)) from None


async def _batched(
    vault: Vault,
    place: Place,
    batch: Sequence[tuple[str, str, bytes]],
    event: Event | None,
    expires_at: float | None,
    now: float,
    moment: Callable[[], float],
    meta: bytes,
    keep: int,
    quota: Quota | None,
) -> bool:
    """The batch's values and versions written in one all-or-nothing store call; False when it wrote none (a
    rotation under way, a quota refusing one, another writer first)."""
    seen = await vault.observe_beside_many(place, [(key, versions_key(key)) for key, _, _ in batch], now)
    if seen is None:
        return False
    swaps = []
    for (key, value_json, vector), (value, history) in zip(batch, seen, strict=True):
        at = moment()
        text, deadline = _added(history, event, value_json, expires_at, at, meta, keep)
        swaps.append(Swap(place, key, value, value_json, expires_at, written_at=at, vector=vector, meta=meta))
        swaps.append(Swap(place, versions_key(key), history, text, deadline, written_at=at, indexed=False))
    return all(result is True for result in await vault.swap_many(swaps, now, quota, whole=True))


def _text(value_json: str | bytes) -> str:
    return value_json if isinstance(value_json, str) else value_json.decode()
