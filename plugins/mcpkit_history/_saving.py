"""What a save checks against the store before it writes: a message sent again, and an id of the caller's own."""

from __future__ import annotations

import json
from typing import Any

from mcpkit_storage import Place, Quota, Vault

from ._errors import HistoryInvalidError
from ._messages import stored
from ._tree import Tree

__all__ = ["create", "resent"]


async def create(
    vault: Vault,
    quota: Quota | None,
    where: tuple[Place, str, str, str],
    value: str,
    expires_at: float | None,
    now: float,
    meta: bytes = b"",
) -> bool:
    """Write a message under a caller's id only where none is; False when the same message is there already.

    ``where`` is the place, the key, and the conversation and id the key stands for (for the errors).
    """
    place, key, conversation, node = where
    observed = await vault.observe(place, key, now)
    if observed.found is not None:
        if json.dumps(observed.found.value, ensure_ascii=False, separators=(",", ":")) == value:
            return False
        raise HistoryInvalidError(
            f"The id {node!r} is already a message of {conversation!r}; leave id out for a new one."
        )
    if not await vault.swap(place, key, observed, value, expires_at, now, quota, meta=meta):
        raise HistoryInvalidError(
            f"Another save used the id {node!r} in {conversation!r} at the same moment; leave id out for a new one."
        )
    return True


async def resent(
    vault: Vault, place: Place, conversation: str, tree: Tree, messages: list[dict[str, Any]], now: float
) -> bool:
    """Whether every message of a save names an id of the caller's that the tree holds with the same content."""
    parents = tree.parents()
    if not all(message["given"] and message["id"] in parents for message in messages):
        return False
    kept = await vault.read_many(place, [f"{conversation}/{m['id']}" for m in messages], now)
    return all(
        found is not None and found.value == stored(message) for message, found in zip(messages, kept, strict=True)
    )
