"""The SQLite store: one file, shareable by several server processes, with its secret in a private file beside it."""

from ._kind import SQLITE

__all__ = ["SQLITE"]
