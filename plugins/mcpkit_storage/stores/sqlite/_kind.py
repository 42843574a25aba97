"""The SQLite store's registration: ``sqlite:///`` URLs, a file path, and the secret file beside the database."""

from __future__ import annotations

from pathlib import Path

from mcpkit import ConfigurationError

from .. import Store, StoreKind, register_store
from ._private_files import read_secret_file, secret_beside

__all__ = ["SQLITE"]

SCHEME = "sqlite:///"


def _make(where: str, *, prefix: str, create: bool) -> Store:
    from ._sqlite_store import SQLiteStore  # sqlite3 loads only for a server that uses it

    return SQLiteStore(where, create=create)


def _path(url: str) -> str:
    path = url[len(SCHEME) :]
    if not path or path == ":memory:":
        raise ConfigurationError(
            f"Store {url!r} names no database file: use sqlite:///relative/file.db or sqlite:////absolute/file.db."
        )
    return path


SQLITE = register_store(
    StoreKind(
        name="sqlite",
        label="SQLite",
        make=_make,
        schemes=(SCHEME,),
        examples=("sqlite:///relative.db", "sqlite:////absolute/path.db"),
        locate=_path,
        in_file=True,
        secret_beside=lambda where: secret_beside(Path(where)),
        read_secret=lambda where: read_secret_file(Path(where)),
    )
)
