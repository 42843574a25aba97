"""The in-process store: nested dicts, for tests and single-process servers."""

from ._kind import MEMORY
from ._memory_store import MemoryStore

__all__ = ["MEMORY", "MemoryStore"]
