"""Reading many large values with their opening (decrypting and parsing) in a worker thread.

One caller reading megabytes of its own values (a long conversation) would otherwise hold the event loop that every
other caller's call waits on (``Vault.read_many(..., in_thread=True)``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..base import Place
from ._found import Found
from ._vault import Vault

__all__ = ["read_many_in_thread"]


async def read_many_in_thread(vault: Vault, place: Place, keys: Sequence[str], now: float) -> list[Found | None]:
    """As ``Vault.read_many`` (one address per key, one round trip), with the values opened in a worker thread."""
    return await vault.read_many(place, keys, now, in_thread=True)
