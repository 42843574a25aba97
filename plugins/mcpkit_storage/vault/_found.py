"""What a read finds: a value with its deadline and write time, what a compare-and-set expects, and which of two
copies of a key wins."""

from __future__ import annotations

from typing import Any, NamedTuple

from ..sealing import Payload
from ..stores import Expectation

__all__ = ["Found", "Inspected", "Observed", "found", "newer"]


class Found(NamedTuple):
    """A value read back (``Remember.lookup``), with its sealed deadline (None: none) and when it was written.

    Both times are seconds since the epoch on the framework clock; ``updated_at`` is None for a value
    written by mcpkit 0.1, which did not keep it.
    """

    value: Any
    expires_at: float | None
    updated_at: float | None


class Inspected(NamedTuple):
    """A value read whole (``Vault.inspect``, for ``self.remember.info``): its payload, with its provenance, and when
    its key was first written (the store's ``Entry.created``; None: unknown, written before stores kept it)."""

    payload: Payload
    created: float | None


class Observed(NamedTuple):
    """What a read saw: the value (if any) and the bytes at every address the key may live at.

    The first address is where a write puts the value; a compare-and-set expects all of them unchanged.
    """

    found: Found | None
    seen: tuple[Expectation, ...]


def found(payload: Payload) -> Found:
    """What a read of ``payload`` returns."""
    return Found(payload.value(), payload.expires_at, payload.written_at)


def newer(candidate: Payload, best: Payload) -> bool:
    """Whether ``candidate`` should win over ``best`` when a key has copies at two addresses.

    Writers of this version always leave one copy, so two copies mean a writer that knew only one of
    the addresses: one whose secrets are not all known here (the later write wins), or an entry of
    mcpkit 0.1, which carries no time and always loses. 0.1 servers must be stopped before this
    version writes (docs/stores.md), so a 0.1 copy beside a current one is older — or a replay of an
    old backup by someone who can write the store, which must not win either.
    """
    if candidate.written_at is None or best.written_at is None:
        return best.written_at is None and candidate.written_at is not None
    return candidate.written_at > best.written_at
