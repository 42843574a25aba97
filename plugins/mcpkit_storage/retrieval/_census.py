"""How many values a searchable place holds, from its search index's statistics: no value is read or opened, so the
answer costs the same for ten values as for ten thousand (counting by ``Vault.keys`` opens every one)."""

from __future__ import annotations

from ..base import Place
from ..vault import Vault

__all__ = ["indexed_count"]


async def indexed_count(vault: Vault, place: Place, now: float) -> int:
    """The live indexed values of ``place`` (during a rotation of the secret, a value with a copy under each secret
    counts twice until ``mcpkit remember rotate`` has run)."""
    await vault.watched(now)
    total = 0
    for owner, bucket in vault.buckets(place):
        total += (await vault.store.search(owner, bucket, [], now, limit=0)).stats.documents
    return total
