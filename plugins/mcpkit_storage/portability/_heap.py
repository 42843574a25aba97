"""``frozen_heap``: a long export or import in a process of its own, without the collector walking the process's
startup objects again and again."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["frozen_heap"]


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """While in it, the garbage collector's passes leave out every object alive on entry (``gc.freeze``); on leaving,
    they are collected as before (``gc.unfreeze``). A one-off process (the ``mcpkit remember`` commands) holds tens of
    thousands of such objects, its modules' and their tables, none of them ever garbage: an import makes and drops
    many small containers, the collector's full passes came every few thousand values, and each walked the whole
    heap again (a tenth of an import's time, docs/benchmarks.md). Garbage of the run itself is collected as ever.

    A process that froze its heap itself (a server before it forks its workers) is left as it is: nothing is frozen
    or unfrozen. Not for a server's request path: while in it, cyclic garbage made before it waits until it ends."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
