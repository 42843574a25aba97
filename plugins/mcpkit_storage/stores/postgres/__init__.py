"""The PostgreSQL store: several server instances on one database, through psycopg 3's async connection pool."""

from ._kind import POSTGRES

__all__ = ["POSTGRES"]
