"""The PostgreSQL store: several server instances on one database, through psycopg 3's async connection pool."""

from ._postgres_store import PostgresStore

__all__ = [
    "PostgresStore",
]
