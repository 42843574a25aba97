"""The in-process store: nested dicts, for tests and single-process servers."""

from ._memory_store import MemoryStore

__all__ = [
    "MemoryStore",
]
