"""Which change histories of an export file an import leaves out: those of a key whose value the store keeps, and
those of a value its quota refused."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from ..base import Place
from ..vault import VERSIONS_KEY, Found, Vault, versions_key

__all__ = ["Refusals", "history_left_out", "value_key"]

#: A value's place and key: (identity, bucket, key).
_Slot = tuple[str, str, str]

_LIVE_EVENTS = ("set", "update", "import")
#: The size of what ``Refusals`` keeps of a refused value: a BLAKE2b digest of its last version.
DIGEST_BYTES = 16


def value_key(history_key: str) -> str:
    """The key whose change history is kept under ``history_key`` (an internal ``VERSIONS_KEY`` key)."""
    return history_key[len(VERSIONS_KEY) :]


def history_left_out(history_json: bytes, kept: Found | None, on_conflict: Literal["skip", "replace", "newer"]) -> bool:
    """Whether the file's change history of a key (its versions' JSON) stays out of the store because the store keeps
    its own live value ``kept`` of that key, which the history does not end with: ``skip``, or ``newer`` with the
    store's value written later than the history's last. That history tells how another value came to be, and would
    outlive the one that stays; a history ending with the value the store holds (imported now, or before) goes in."""
    if kept is None or on_conflict == "replace":
        return False
    last = _last_value(history_json)
    if last is not None and last == (_canonical(kept.value), kept.updated_at):
        return False
    if on_conflict == "newer" and last is not None:
        return (last[1] or 0.0) <= (kept.updated_at or 0.0)
    return True


def _last_value(history_json: bytes) -> tuple[str, float | None] | None:
    """The value a history ends with (its JSON, canonical, and its write time); None when it ends with none (a
    ``delete``, an ``expire``, a value whose ttl ended)."""
    rows = json.loads(history_json)
    if not isinstance(rows, list) or not rows:
        return None
    event, value, written_at, *_ = rows[-1]
    if event not in _LIVE_EVENTS or not isinstance(value, str):
        return None
    return _canonical(json.loads(value)), written_at


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class Refusals:
    """The values of one import that their quota refused, so that their change histories stay out with them: one
    that comes later in the file is not written (``left_out``), one written before is taken out again (``take_out``).
    Only a history that ends with the refused value is its story: a later value of the same key that fits (a key twice
    in the file, two users mapped to one) keeps its own.

    It keeps each refused value's slot and a digest (``DIGEST_BYTES``) of its last version (the file's value,
    canonical, and write time), so it grows with the refusals, never with the values or their size."""

    __slots__ = ("_refused", "_waiting")

    def __init__(self) -> None:
        self._refused: dict[_Slot, bytes] = {}
        self._waiting: dict[_Slot, Place] = {}  # refused since the last ``take_out``, or their histories written

    def refused(self, place: Place, key: str, value_json: bytes, updated: float | None) -> None:
        """The file's value ``value_json`` of ``key`` (written at ``updated``) did not fit its quota."""
        if not key.startswith(VERSIONS_KEY):
            slot = (place.identity, place.bucket, key)
            self._refused[slot] = _digest((_canonical(json.loads(value_json)), updated))
            self._waiting[slot] = place

    def left_out(self, place: Place, key: str, history_json: bytes) -> bool:
        """Whether ``key`` is a change history (``history_json``, its versions) ending with a value this import's
        quota refused (so it is not written)."""
        if not key.startswith(VERSIONS_KEY):
            return False
        refused = self._refused.get((place.identity, place.bucket, value_key(key)))
        return refused is not None and _digest(_last_value(history_json)) == refused

    def written(self, place: Place, key: str, history_json: bytes) -> None:
        """Note that ``key`` was written: a change history whose value was refused (in the same store call, or before
        its write was decided on) is then deleted by ``take_out``."""
        if self.left_out(place, key, history_json):
            self._waiting[(place.identity, place.bucket, value_key(key))] = place

    async def take_out(self, vault: Vault, now: float) -> int:
        """Delete the stored change history of each value refused since the last call, when it is the file's (it ends
        with the refused value, as the file wrote it): how many went. A history of the store's own value stays. One
        read per place (a round trip where the store can) of every such history."""
        gone = 0
        waiting, self._waiting = self._waiting, {}
        by_place: dict[Place, list[_Slot]] = {}
        for slot, place in waiting.items():
            by_place.setdefault(place, []).append(slot)
        for place, slots in by_place.items():
            histories = [versions_key(slot[2]) for slot in slots]
            for slot, history, kept in zip(slots, histories, await vault.read_many(place, histories, now), strict=True):
                ends = None if kept is None else _last_value(json.dumps(kept.value).encode())
                if kept is not None and _digest(ends) == self._refused[slot]:
                    gone += int(await vault.delete(place, history, now))
        return gone


def _digest(last: tuple[str, float | None] | None) -> bytes:
    """A version's digest: what ``Refusals`` keeps of a refused value."""
    return hashlib.blake2b(json.dumps(last).encode(), digest_size=DIGEST_BYTES).digest()
