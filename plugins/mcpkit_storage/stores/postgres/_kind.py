"""The PostgreSQL store's registration: ``postgresql://`` URLs, made through psycopg 3 once a server uses one."""

from __future__ import annotations

from mcpkit import ConfigurationError

from .. import Store, StoreKind, register_store

__all__ = ["POSTGRES"]


def _make(where: str, *, prefix: str, create: bool) -> Store:
    try:
        from ._postgres_store import PostgresStore  # psycopg and its pool load only for a server that uses them
    except ImportError as exc:
        raise ConfigurationError(
            f"The PostgreSQL store needs psycopg 3 with its pool ({exc.name} is missing): "
            "pip install 'mcpkit[postgres]' (or 'psycopg[binary,pool]')."
        ) from None
    return PostgresStore(where, create=create)


POSTGRES = register_store(
    StoreKind(
        name="postgres",
        db_system="postgresql",
        label="PostgreSQL",
        make=_make,
        schemes=("postgresql://", "postgres://"),
        examples=("postgresql://USER@HOST:5432/DB",),
    )
)
