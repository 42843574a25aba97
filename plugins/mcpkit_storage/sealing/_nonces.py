"""``Nonces``: fresh random nonces for AES-GCM, drawn from a buffer of the operating system's randomness."""

from __future__ import annotations

import os
import threading

__all__ = ["Nonces"]

#: Bytes of randomness read at a time: a nonce of 12 bytes costs a system call once in 341.
_BUFFER = 4096


class Nonces:
    """Each call returns ``size`` fresh random bytes, as ``os.urandom(size)`` would, sliced from a buffer that is
    refilled from ``os.urandom`` when spent. A system call gives up the GIL, and while another thread of the process
    is busy (a store's worker thread, say) getting it back waits up to the interpreter's switch interval, 5 ms: an
    import sealed a value per call and so took turns with the store's thread instead of running beside it. Every
    byte is used once. A process forked from this one starts a buffer of its own (a nonce repeated under one key
    would reveal both plaintexts' difference and the key's authentication); threads take their slices in turn."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._buffer = b""
        self._at = 0
        self._pid = -1  # no process's: the first call fills it

    def __call__(self) -> bytes:
        with self._lock:
            if self._at + self._size > len(self._buffer) or self._pid != os.getpid():
                self._buffer, self._at, self._pid = os.urandom(_BUFFER), 0, os.getpid()
            nonce = self._buffer[self._at : self._at + self._size]
            self._at += self._size
        return nonce
