"""``Nonces``: fresh random nonces for AES-GCM, drawn from a buffer of the operating system's randomness."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

__all__ = ["Nonces"]

#: Bytes of randomness read at a time: a nonce of 12 bytes costs a system call once in 341.
_BUFFER = 4096


class Nonces:
    """Each call returns ``size`` fresh random bytes, as ``os.urandom(size)`` would, sliced from a buffer that is
    refilled from ``os.urandom`` when spent. A system call gives up the GIL, and while another thread of the process
    is busy (a store's worker thread, say) getting it back waits up to the interpreter's switch interval, 5 ms: an
    import sealed a value per call and so took turns with the store's thread instead of running beside it.

    Every slice is handed out once: its number comes from the buffer's own counter (``next`` on an
    ``itertools.count`` is one step under the GIL), so threads never share one, and no lock is held that a fork
    could leave taken. A process forked from this one fills a buffer of its own at its first call (a nonce repeated
    under one key would reveal both plaintexts' difference and the key's authentication)."""

    def __init__(self, size: int) -> None:
        self._size = size
        # (the process that filled it, the buffer, the number of the next slice); none yet: the first call fills it
        self._state: tuple[int, bytes, Iterator[int]] = (-1, b"", itertools.count())

    def __call__(self) -> bytes:
        pid, buffer, slices = self._state
        if pid == os.getpid():
            start = next(slices) * self._size
            if start + self._size <= len(buffer):
                return buffer[start : start + self._size]
        buffer = os.urandom(_BUFFER)  # a thread refilling beside it fills a buffer of its own
        self._state = (os.getpid(), buffer, itertools.count(1))  # slice 0 is this call's
        return buffer[: self._size]
