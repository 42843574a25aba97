"""``SecretWatch``: whether the store's values were rotated to a secret this server lacks, looked at as it serves."""

from __future__ import annotations

import logging
import math
import secrets

from ..base import RememberStoreUnavailableError, first_time
from ..stores import Store
from ._keyring import Keyring

__all__ = [
    "FORGET_SECONDS",
    "HELD_PREFIX",
    "HELD_SECONDS",
    "LOOK_SECONDS",
    "ROTATED_TO",
    "SecretWatch",
    "held_ids",
    "seen_at",
]

logger = logging.getLogger("mcpkit.remember")

#: The store's note naming the key id ``mcpkit remember rotate`` last moved every value to.
ROTATED_TO = "rotated-to"
#: A note ``held:PROCESS:KEY_IDS`` (key ids primary first) holds when that serving process last said so (seconds).
HELD_PREFIX = "held:"
#: How often a serving server reads the store's notes, at most (seconds of its clock): also the longest a server
#: left behind by a rotation goes on answering as though the moved values were missing.
LOOK_SECONDS = 5.0
#: How often a serving process notes the key ids it holds (with calls or without).
HELD_SECONDS = 60.0
#: A ``held:`` note not renewed for this long is of a process gone without a word: the next beat forgets it.
FORGET_SECONDS = 3600.0

#: This process, in the name of its ``held:`` notes (the plugins of one server share them).
_PROCESS = secrets.token_hex(4)


class SecretWatch:
    """The store's notes as one server reads them: a vault calls ``look`` before a call on the store once ``due``
    has come (a comparison per call, a read of the notes every ``LOOK_SECONDS``)."""

    def __init__(self, store: Store, keyring: Keyring, where: str) -> None:
        self._store = store
        self._keyring = keyring
        self._where = where
        self._held = f"{HELD_PREFIX}{_PROCESS}:{','.join(keyring.key_ids)}"
        #: When a call must look next: -inf while this server lacks the secret (every call is refused).
        self.due = -math.inf
        self._next_read = -math.inf
        self._lacking: str | None = None

    async def look(self, now: float) -> None:
        """Read the notes if it is time; raise RememberStoreUnavailableError while the store's values were rotated
        to a secret this server lacks."""
        if now >= self._next_read:
            self._judge((await self._store.notes()).get(ROTATED_TO), now)
        if self._lacking is not None:
            raise RememberStoreUnavailableError()

    async def beat(self, now: float) -> None:
        """What a serving process does when it starts and every ``HELD_SECONDS``: note the key ids it holds, forget
        the notes of processes not heard from for ``FORGET_SECONDS``, and judge the store's rotation (said in the
        log; calls are refused by ``look``)."""
        notes = await self._store.notes()
        await self._store.note(self._held, repr(now))
        for name, value in notes.items():
            if held_ids(name) is not None and name != self._held and now - seen_at(value) > FORGET_SECONDS:
                await self._store.note(name, None)
        self._judge(notes.get(ROTATED_TO), now)

    async def stopped(self) -> None:
        """Take this process's note out as it stops, so that ``rotate`` does not count it as serving."""
        await self._store.note(self._held, None)

    def _judge(self, rotated: str | None, now: float) -> None:
        self._next_read = now + LOOK_SECONDS
        self._lacking = None if rotated is None or rotated in self._keyring.key_ids else rotated
        self.due = -math.inf if self._lacking is not None else self._next_read
        if self._lacking is not None:
            self._say_lacking(self._lacking)

    def _say_lacking(self, key_id: str) -> None:
        if not first_time(("rotated past this server", self._where, key_id, self._keyring.key_ids)):
            return
        logger.error(
            "The remember store (%s) was rotated to a secret this server does not hold (key id %s; this server "
            "holds key ids %s): `mcpkit remember rotate` moved values under it, and this server can neither find "
            "nor open them. Rather than answer that they are missing, every call that uses the store gets "
            "REMEMBER_STORE_UNAVAILABLE until this server holds that secret: restart it with REMEMBER_SECRET "
            "listing the new secret first (new,old), as docs/stores.md#rotating-the-secret says.",
            self._where,
            key_id,
            ", ".join(self._keyring.key_ids),
        )


def held_ids(name: str) -> tuple[str, ...] | None:
    """The key ids a ``held:`` note names (primary first), or None for another note."""
    if not name.startswith(HELD_PREFIX):
        return None
    return tuple(name.removeprefix(HELD_PREFIX).partition(":")[2].split(","))


def seen_at(value: str | None) -> float:
    """When a ``held:`` note says its process last served (-inf: never, or a value that is not a time)."""
    try:
        seen = float(value) if value is not None else -math.inf
    except ValueError:
        return -math.inf
    return seen if math.isfinite(seen) else -math.inf
