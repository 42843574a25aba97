"""PostgreSQL for the tests: the server at 127.0.0.1:5432 (``MCPKIT_TEST_POSTGRES_URL`` to use another), a database
of this test session's own (created, and dropped at the end), and a schema per test so tests never see each
other's rows. Without PostgreSQL the tests that need it skip, saying so; under ``CI=true`` they fail."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from ci import missing

DEFAULT_POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/postgres"


def _psycopg() -> object:
    try:
        import psycopg
    except ImportError:
        missing("psycopg is not installed: pip install -e '.[dev]' (it brings psycopg[binary,pool])")
    return psycopg


@pytest.fixture(scope="session")
def postgres_database() -> Iterator[str]:
    """The URL of a database created for this session (dropped when it ends)."""
    psycopg = _psycopg()
    server = os.environ.get("MCPKIT_TEST_POSTGRES_URL", DEFAULT_POSTGRES_URL)
    name = f"mcpkit_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    try:
        admin = psycopg.connect(server, autocommit=True, connect_timeout=3)  # type: ignore[attr-defined]
    except Exception as exc:
        missing(f"no PostgreSQL answers at {server} ({type(exc).__name__}); start one or set MCPKIT_TEST_POSTGRES_URL")
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    base, _, _ = server.rpartition("/")
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(server, autocommit=True) as admin:  # type: ignore[attr-defined]
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def postgres_url(postgres_database: str) -> Iterator[str]:
    """A URL whose connections work in a schema of this test's own (``search_path``), dropped afterwards."""
    psycopg = _psycopg()
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_database, autocommit=True) as conn:  # type: ignore[attr-defined]
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{postgres_database}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(postgres_database, autocommit=True) as conn:  # type: ignore[attr-defined]
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
