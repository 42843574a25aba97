"""Reading many large values with their opening (decrypting and parsing) in a worker thread.

One caller reading megabytes of its own values (a long conversation) would otherwise hold the event loop that every
other caller's call waits on: the store round trip stays on the loop, the opening goes to a thread, and the replay
check, which reads the vault's guard, comes back to the loop.
"""

from __future__ import annotations

from collections.abc import Sequence

import anyio.to_thread

from ..base import Place
from ..sealing import Payload
from ._found import Found, found
from ._vault import Vault

__all__ = ["read_many_in_thread"]


async def read_many_in_thread(vault: Vault, place: Place, keys: Sequence[str], now: float) -> list[Found | None]:
    """As ``Vault.read_many`` (one address per key, one round trip), with the values opened in a worker thread."""
    await vault.watched(now)
    if len(vault.keyring) != 1 or vault.store.legacy:  # a key may have copies: the vault's own careful read
        return await vault.read_many(place, keys, now)
    addresses = [vault.keyring.locate(place.identity, place.bucket, key)[0] for key in keys]
    began = vault.begin()
    entries = await vault.store.get_many(addresses, now) if addresses else []

    def open_all() -> list[tuple[Payload | Exception, Found | None] | None]:
        opened: list[tuple[Payload | Exception, Found | None] | None] = []
        for address, entry in zip(addresses, entries, strict=True):
            if entry is None:
                opened.append(None)
                continue
            payload = vault.unsealed(address, entry)
            opened.append((payload, None if isinstance(payload, Exception) else found(payload)))
        return opened

    values: list[Found | None] = []
    for address, entry, result in zip(addresses, entries, await anyio.to_thread.run_sync(open_all), strict=True):
        if result is None or entry is None:
            values.append(None)
            continue
        payload, value = result
        values.append(value if vault.accepted(address, entry, payload, now, place, began) is not None else None)
    return values
