"""A counter kept as decimal bytes and bumped with get + swap: the classic lost-update race.

Each write's bytes are unique (a random tag after the number), as sealed values are with their
fresh nonce: a store takes a swap whose bytes are already there for a replay of that same swap.
"""

from __future__ import annotations

import asyncio
import os

from mcpkit_storage.stores._store import Store


async def increment(store: Store, owner: str, key: str, times: int, now: float) -> int:
    """Add one ``times`` times, retrying each lost swap; returns how many swaps were lost."""
    lost = 0
    for _ in range(times):
        while True:
            current = await store.get(owner, "global", key, now)
            value = 0 if current is None else _number(current.data)
            await asyncio.sleep(0)  # let the other writers in between the read and the swap
            expected = None if current is None else current.data
            if await store.swap(
                owner, "global", key, expected, b"%d %s" % (value + 1, os.urandom(8).hex().encode()), None, now
            ):
                break
            lost += 1
    return lost


async def read(store: Store, owner: str, key: str, now: float) -> int:
    entry = await store.get(owner, "global", key, now)
    return 0 if entry is None else _number(entry.data)


def _number(data: bytes) -> int:
    return int(data.split()[0])
