"""``Vault``: a store behind encryption — sealing, owner hashing, rotation fallback, unreadable values."""

from __future__ import annotations

import logging
from typing import Any, NamedTuple

from ._keyring import HEADER_BYTES, Keyring, UndecryptableError
from ._scope import Place
from ._store import Store
from ._values import decode_value, seal_text

__all__ = ["Found", "Vault"]

logger = logging.getLogger("mcpkit.remember")

_WARNED_LIMIT = 10_000

#: How many stored values ``check_secret`` looks at when the server starts.
SECRET_SAMPLE = 32


class Found(NamedTuple):
    """A value read back: the decoded value, and the exact bytes a compare-and-set must match."""

    value: Any
    data: bytes
    expires_at: float | None


class Vault:
    """Reads and writes values for places; everything a store holds is sealed and hashed."""

    def __init__(self, store: Store, keyring: Keyring) -> None:
        self.store = store
        self.keyring = keyring
        self._warned: set[tuple[str, str]] = set()

    async def read(self, place: Place, key: str, now: float) -> Found | None:
        """The live value at ``place``/``key``; an entry under an older secret is moved under the first."""
        owners = self.keyring.owners_for(place.identity)
        for index, owner in enumerate(owners):
            entry = await self.store.get(owner, place.bucket, key, now)
            if entry is None:
                continue
            try:
                opened = self.keyring.open(owner, place.bucket, key, entry.data)
            except UndecryptableError as exc:
                self._warn(owner, place.bucket, exc)
                return None
            value = decode_value(opened.plaintext)
            if index == 0 and not opened.stale:
                return Found(value, entry.data, entry.expires_at)
            data = self.keyring.seal(owners[0], place.bucket, key, opened.plaintext)
            if await self.store.swap(owners[0], place.bucket, key, None, data, entry.expires_at, now):
                await self.store.delete(owner, place.bucket, key, now)
                return Found(value, data, entry.expires_at)
            return await self.read(place, key, now)  # a newer value landed under the first secret
        return None

    def _seal(self, owner: str, place: Place, key: str, value_json: str) -> bytes:
        return self.keyring.seal(owner, place.bucket, key, seal_text(place.identity, value_json))

    async def write(self, place: Place, key: str, value_json: str, expires_at: float | None, now: float) -> None:
        owners = self.keyring.owners_for(place.identity)
        data = self._seal(owners[0], place, key, value_json)
        await self.store.put(owners[0], place.bucket, key, data, expires_at, now)
        for stale in owners[1:]:
            await self.store.delete(stale, place.bucket, key, now)

    async def swap(
        self, place: Place, key: str, expected: Found | None, value_json: str, expires_at: float | None, now: float
    ) -> bool:
        """Compare-and-set against what ``read`` returned (None: nothing was there)."""
        owner = self.keyring.owner_for(place.identity)
        data = self._seal(owner, place, key, value_json)
        return await self.store.swap(
            owner, place.bucket, key, None if expected is None else expected.data, data, expires_at, now
        )

    async def delete(self, place: Place, key: str, now: float) -> bool:
        existed = False
        for owner in self.keyring.owners_for(place.identity):
            existed = await self.store.delete(owner, place.bucket, key, now) or existed
        return existed

    async def exists(self, place: Place, key: str, now: float) -> bool:
        """Whether a readable value is there (one that fails to decrypt counts as missing, as in ``read``)."""
        return await self.read(place, key, now) is not None

    async def keys(self, place: Place, now: float) -> list[str]:
        owners = self.keyring.owners_for(place.identity)
        if len(owners) == 1:
            return await self.store.keys(owners[0], place.bucket, now)
        found: set[str] = set()
        for owner in owners:
            found.update(await self.store.keys(owner, place.bucket, now))
        return sorted(found)

    async def delete_bucket(self, place: Place, now: float) -> int:
        total = 0
        for owner in self.keyring.owners_for(place.identity):
            total += await self.store.delete_bucket(owner, place.bucket, now)
        return total

    async def check_secret(self, where: str, sample: int = SECRET_SAMPLE) -> None:
        """Warn when the first values in the store were sealed with a secret this keyring lacks.

        A wrong secret also hashes every owner differently, so no read ever meets such a value:
        without this look the store would just seem empty, and nothing would say why.
        """
        looked, foreign = 0, set[str]()
        records = self.store.scan()
        try:
            async for record in records:
                looked += 1
                try:
                    self.keyring.open(record.owner, record.bucket, record.key, record.entry.data)
                except UndecryptableError as exc:
                    if exc.reason == "unknown_key":
                        foreign.add(bytes(record.entry.data[1:HEADER_BYTES]).hex())
                if looked >= sample:
                    break
        finally:
            close = getattr(records, "aclose", None)  # an async generator: end its scan now
            if close is not None:
                await close()
        if foreign:
            logger.warning(
                "The remember store (%s) holds values sealed with a secret this server was not given "
                "(key id %s, in the first %d values looked at); they read as missing. Did REMEMBER_SECRET "
                "change? Set the secret that wrote them, or keep it after the new one (REMEMBER_SECRET=new,old) "
                "until `mcpkit remember rotate` has run. This server's key ids: %s.",
                where,
                ", ".join(sorted(foreign)),
                looked,
                ", ".join(self.keyring.key_ids),
            )

    def _warn(self, owner: str, bucket: str, exc: UndecryptableError) -> None:
        if (owner, bucket) in self._warned:
            return
        if len(self._warned) >= _WARNED_LIMIT:
            self._warned.clear()
        self._warned.add((owner, bucket))
        logger.warning(
            "a remembered value in %s scope (owner %s…) cannot be read and is treated as missing: %s. "
            "Did REMEMBER_SECRET change? Keep the old secret after the new one (REMEMBER_SECRET=new,old) "
            "until `mcpkit remember rotate` has run.",
            bucket,
            owner[:8],
            exc,
        )
