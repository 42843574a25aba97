"""The SQLite store: one file, shareable by several server processes, with its secret in a private file beside it."""

from ._private_files import read_secret_file, secret_beside
from ._sqlite_store import SQLiteStore

__all__ = [
    "SQLiteStore",
    "read_secret_file",
    "secret_beside",
]
