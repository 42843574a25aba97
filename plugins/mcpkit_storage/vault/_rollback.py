"""``RollbackGuard``: notices a sealed value put back at its address after this process saw it replaced."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable

__all__ = ["RollbackGuard"]

#: Tags of replaced values kept per address.
REPLACED_KEPT = 8
#: Addresses remembered before starting afresh.
ADDRESSES_KEPT = 4096
_TAG = 16


class RollbackGuard:
    """``began = begin()`` before each store call; then ``seen``, ``replaced`` or ``deleted`` with it."""

    __slots__ = ("_current", "_limit", "_replaced", "_ticks", "begin")

    def __init__(self, addresses: int = ADDRESSES_KEPT) -> None:
        self._limit = addresses
        self._ticks = itertools.count(1)
        #: ``begin()``: the tick a read or write starts at (the counter's own ``__next__``: no Python call).
        self.begin: Callable[[], int] = self._ticks.__next__
        self._current: dict[Hashable, tuple[bytes, int]] = {}  # address -> (tag, tick it was learned at)
        self._replaced: dict[Hashable, dict[bytes, int]] = {}  # address -> tag -> tick it was retired at

    def seen(self, address: Hashable, data: bytes, began: int) -> bool:
        """Record ``data`` as read at ``address``; False when it was retired before this read began (a replay)."""
        tag = data[-_TAG:]
        current = self._current.get(address)
        if current is not None and current[0] == tag:
            return True  # the usual case: what this process last knew
        replaced = self._replaced.get(address)
        if replaced is not None and tag in replaced:
            return replaced[tag] >= began  # retired while this read was in flight: late, not replayed
        if current is None or current[1] < began:
            self._learn(address, tag, current)  # the store moved on since the guard learned its value
        return True

    def replaced(self, address: Hashable, old: bytes | None, new: bytes, began: int) -> None:
        """Record that this process's write, begun at ``began``, put ``new`` at ``address`` over ``old``."""
        retired = None if old is None else old[-_TAG:]
        if retired is not None:
            self._retire(address, retired)
        current = self._current.get(address)
        if current is None:
            self._learn(address, new[-_TAG:], None)
        elif current[1] < began:  # as _learn, inlined: a write over what this process knew
            tag = new[-_TAG:]
            if current[0] != tag and current[0] != retired:  # an update's old value is what it knew: retired once
                self._retire(address, current[0])
            self._current[address] = (tag, next(self._ticks))

    def deleted(self, address: Hashable, began: int, old: bytes | None = None) -> None:
        """Record that this process's delete, begun at ``began``, removed what was at ``address`` (``old`` if known)."""
        if old is not None:
            self._retire(address, old[-_TAG:])
        current = self._current.get(address)
        if current is not None and current[1] < began:
            del self._current[address]
            self._retire(address, current[0])

    def _learn(self, address: Hashable, tag: bytes, current: tuple[bytes, int] | None) -> None:
        if current is None:
            if len(self._current) >= self._limit:
                self._forget_all()
        elif current[0] != tag:
            self._retire(address, current[0])
        self._current[address] = (tag, next(self._ticks))

    def _retire(self, address: Hashable, tag: bytes) -> None:
        replaced = self._replaced.get(address)
        if replaced is None:
            if len(self._replaced) >= self._limit:
                self._forget_all()
            replaced = self._replaced[address] = {}
        if tag not in replaced:
            replaced[tag] = next(self._ticks)
            if len(replaced) > REPLACED_KEPT:
                del replaced[next(iter(replaced))]

    def _forget_all(self) -> None:
        self._current.clear()
        self._replaced.clear()
