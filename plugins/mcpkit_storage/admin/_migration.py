"""Moving a value to the primary secret's address (``mcpkit remember rotate``): one compare-and-set per key."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal

from ..base import Place
from ..sealing import Payload
from ..vault import Observed, Vault, found

__all__ = ["Migration", "migrate"]

Migration = Literal["moved", "cleaned", "changed", "gone"]


async def migrate(
    vault: Vault,
    payload: Payload,
    now: float,
    *,
    indexed: bool | None = None,
    embed: Callable[[Payload], Awaitable[bytes]] | None = None,
) -> Migration:
    """Leave the newest copy of a stale entry's key at its primary address and delete every other copy.

    ``moved``: the value now lives under the primary secret; ``cleaned``: it already did, and older
    copies went; ``changed``: a writer came in between (look again); ``gone``: nothing live is left.
    ``embed`` makes the newest copy's vector (empty bytes: keep the one it has).
    """
    place = Place(payload.identity, payload.bucket)
    best, where, seen = await vault.look(place, payload.key, now, True)
    if best is None:
        return "gone"
    vector = (await embed(best) if embed is not None else b"") or best.vector
    observed = Observed(found(best), seen)
    done = await vault.swap(
        place,
        payload.key,
        observed,
        best.value_json,
        best.expires_at,
        now,
        None,
        written_at=best.written_at,
        indexed=indexed,
        vector=vector,
        meta=best.meta,
    )
    if not done:
        return "changed"
    return "cleaned" if where == 0 else "moved"
