"""``Reader``: the one read path of a vault — fetch entries, open them, keep the live ones that are not replays.

Every read takes a tick of the rollback guard before its store call and checks what it found against it
(``_rollback``); an entry that does not open is logged once and read as missing (``_unreadable``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import anyio.to_thread

from ..base import Place, is_internal_key
from ..sealing import Payload
from ..stores import Address, Entry, Expectation, Store, StoreUnavailableError
from ._codec import Codec
from ._found import Found, Inspected, Observed, found, newer
from ._rollback import RollbackGuard
from ._unreadable import scope_of, warn_unreadable

__all__ = ["Reader"]


class Reader:
    """Reads a store's sealed entries through a codec, checked against the rollback guard."""

    __slots__ = ("_codec", "_guard", "_store", "_where")

    def __init__(self, store: Store, codec: Codec, guard: RollbackGuard, where: str) -> None:
        self._store, self._codec, self._guard, self._where = store, codec, guard, where

    async def observe(self, place: Place, key: str, now: float) -> Observed:
        """The value and the bytes at each of the key's addresses."""
        codec = self._codec
        if not codec.single:
            best, _, seen = await self.look(place, key, now, codec.legacy)
            return Observed(None if best is None else found(best), seen)
        # The fast path of every read and update: one address, its entry peeked rather than unpacked.
        address = codec.keyring.locate(place.identity, place.bucket, key)[0]  # ``primary``, one call fewer
        began = self._guard.begin()
        entry = await self._store.get(*address, now)
        return Observed(self._opened(place, address, entry, now, began), ((address, _data(entry)),))

    def _opened(self, place: Place, address: Address, entry: Entry | None, now: float, began: int) -> Found | None:
        """``entry`` (read at ``address`` since ``began``) peeked open: None when missing, past its deadline or
        unreadable (logged once); a replay raises."""
        if entry is None:
            return None
        value = self._codec.peeked(address, entry, now)
        if isinstance(value, Exception):
            warn_unreadable(self._where, address.owner, place.bucket, value)
            return None
        if value is not None:
            self._check_replay(address, entry.data, place, began)
        return value

    async def observe_beside(
        self, place: Place, key: str, beside: str, now: float, *, opened: bool = False
    ) -> tuple[Observed, Observed]:
        """What a compare-and-set of ``key`` expects (its value opened only when asked: ``found`` None otherwise) and
        ``beside`` observed: one store call with one address per key (a value and its change history)."""
        codec = self._codec
        if not codec.single:
            if opened:
                return await self.observe(place, key, now), await self.observe(place, beside, now)
            seen = (await self.look(place, key, now, codec.legacy))[2]
            return Observed(None, seen), await self.observe(place, beside, now)
        locate = codec.keyring.locate
        address, other = locate(place.identity, place.bucket, key)[0], locate(place.identity, place.bucket, beside)[0]
        began = self._guard.begin()
        entry, entry_beside = await self._store.get_many([address, other], now)
        value = self._opened(place, address, entry, now, began) if opened else None
        return (
            Observed(value, ((address, _data(entry)),)),
            Observed(self._opened(place, other, entry_beside, now, began), ((other, _data(entry_beside)),)),
        )

    async def observe_beside_many(
        self, place: Place, pairs: Sequence[tuple[str, str]], now: float
    ) -> list[tuple[Observed, Observed]] | None:
        """``observe_beside`` of each (key, beside) pair in one store call (values not opened); None during a rotation
        (one address per key is the case this batches: each pair is then observed alone)."""
        codec = self._codec
        if not codec.single:
            return None
        locate = codec.keyring.locate
        addresses = [locate(place.identity, place.bucket, name)[0] for pair in pairs for name in pair]
        began = self._guard.begin()
        entries = await self._store.get_many(addresses, now)
        out: list[tuple[Observed, Observed]] = []
        for number in range(0, len(addresses), 2):
            (address, other), (entry, entry_beside) = addresses[number : number + 2], entries[number : number + 2]
            beside = Observed(self._opened(place, other, entry_beside, now, began), ((other, _data(entry_beside)),))
            out.append((Observed(None, ((address, _data(entry)),)), beside))
        return out

    async def look(
        self, place: Place, key: str, now: float, legacy: bool
    ) -> tuple[Payload | None, int, tuple[Expectation, ...]]:
        """The newest live copy, the index of its address, and the bytes at every address (``legacy``: 0.1's too)."""
        addresses = self._codec.addresses(place, key, legacy)
        began = self._guard.begin()
        if len(addresses) == 1:
            entries = [await self._store.get(*addresses[0], now)]
        else:
            entries = await self._store.get_many(addresses, now)
        best, where = self._best(place, addresses, entries, now, began)
        return best, where, _seen(addresses, entries)

    async def inspect(self, place: Place, key: str, now: float) -> tuple[Inspected | None, tuple[Expectation, ...]]:
        """As ``look`` (0.1's addresses when the codec is ``legacy``), the newest copy with its first-write time
        (``Store.get_many_created``: one round trip, as ``look``'s; a store of your own written before it existed
        answers with ``get_many``, whose entries may not know it)."""
        addresses = self._codec.addresses(place, key, self._codec.legacy)
        began = self._guard.begin()
        read = getattr(self._store, "get_many_created", None) or self._store.get_many
        entries = await read(addresses, now)
        best, where = self._best(place, addresses, entries, now, began)
        kept = None if best is None else Inspected(best, cast("Entry", entries[where]).created)
        return kept, _seen(addresses, entries)

    def _best(
        self, place: Place, addresses: Sequence[Address], entries: Sequence[Entry | None], now: float, began: int
    ) -> tuple[Payload | None, int]:
        """The newest live copy among ``entries`` read since ``began``, and its index (-1: none)."""
        best: Payload | None = None
        where = -1
        for index, (address, entry) in enumerate(zip(addresses, entries, strict=True)):
            payload = None if entry is None else self._accepted(address, entry, now, place, began)
            if payload is not None and (best is None or newer(payload, best)):
                best, where = payload, index
        return best, where

    async def at(self, place: Place, addresses: Sequence[Address], now: float) -> list[Payload | None]:
        """The live payload at each of ``addresses`` of ``place`` (None where there is none), in one store call."""
        began = self._guard.begin()
        entries = await self._store.get_many(addresses, now) if addresses else []
        return [
            None if entry is None else self._accepted(address, entry, now, place, began)
            for address, entry in zip(addresses, entries, strict=True)
        ]

    async def at_in_thread(self, place: Place, addresses: Sequence[Address], now: float) -> list[Found | None]:
        """As ``at``, with the entries opened in a worker thread (the replay check back on the event loop)."""
        began = self._guard.begin()
        entries = await self._store.get_many(addresses, now) if addresses else []
        unsealed = self._codec.unsealed

        def open_all() -> list[Payload | Exception | None]:
            pairs = zip(addresses, entries, strict=True)
            return [None if entry is None else unsealed(address, entry) for address, entry in pairs]

        values: list[Found | None] = []
        for address, entry, opened in zip(addresses, entries, await anyio.to_thread.run_sync(open_all), strict=True):
            payload = (
                None if entry is None or opened is None else self._checked(address, entry, opened, now, place, began)
            )
            values.append(None if payload is None else found(payload))
        return values

    async def bucket(self, place: Place, owner: str, bucket: str, now: float) -> dict[str, Payload]:
        """Every live value at one (owner, bucket) address of the place, by store name (no internal entries: vector
        shards, versions)."""
        began = self._guard.begin()
        opened: dict[str, Payload] = {}
        for name, entry in await self._store.entries(owner, bucket, now):
            payload = self._accepted(Address(owner, bucket, name), entry, now, place, began)
            if payload is not None and not is_internal_key(payload.key):
                opened[name] = payload
        return opened

    def _accepted(self, address: Address, entry: Entry, now: float, place: Place, began: int) -> Payload | None:
        return self._checked(address, entry, self._codec.unsealed(address, entry), now, place, began)

    def _checked(
        self, address: Address, entry: Entry, payload: Payload | Exception, now: float, place: Place, began: int
    ) -> Payload | None:
        """``payload`` when it opened, is live by its sealed deadline and is not a replay (read since ``began``)."""
        if isinstance(payload, Exception):
            warn_unreadable(self._where, address.owner, place.bucket, payload)
            return None
        if not payload.live(now):
            return None
        self._check_replay(address, entry.data, place, began)
        return payload

    def _check_replay(self, address: Address, data: bytes, place: Place, began: int) -> None:
        if not self._guard.seen(address, data, began):
            # Neither the old value nor "missing" is the truth (an update would start again from its default):
            # the store is not to be trusted for this key now, as when it cannot be reached.
            raise StoreUnavailableError(
                f"a remembered value in {scope_of(place.bucket)} scope (owner {address.owner[:8]}…) is one this "
                "server saw replaced or deleted, put back in the store: someone with write access to the store "
                "replayed an older value (or a restore or failover lost newer writes); refusing to answer it"
            )


def _seen(addresses: Sequence[Address], entries: Sequence[Entry | None]) -> tuple[Expectation, ...]:
    """The bytes at each address (None: no live entry), what a compare-and-set expects."""
    return tuple((a, None if e is None else e.data) for a, e in zip(addresses, entries, strict=True))


def _data(entry: Entry | None) -> bytes | None:
    return None if entry is None else entry.data
