"""What only the PostgreSQL store has to prove (issue 14): it creates its schema once however many instances start
together, refuses a newer schema, says ``REMEMBER_STORE_UNAVAILABLE`` while the database is unreachable and recovers
without a restart, and serves remembered values, search and history through the real HTTP stack."""

from __future__ import annotations

import asyncio
import time
from unittest.mock import ANY
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from mcpkit import Server, StaticKeys, ToolContext, app, tool
from mcpkit.testing import ToolCallError, error_code, running
from mcpkit_history import HistoryPlugin
from mcpkit_remember import RememberPlugin
from mcpkit_storage.stores._store import Entry, StoreUnavailableError
from mcpkit_storage.stores.postgres._postgres_schema import SCHEMA, SCHEMA_VERSION
from mcpkit_storage.stores.postgres._postgres_store import PostgresStore

from ._proxy import Proxy

OWNER, BUCKET = "0f3c9a1b2d4e5f60718293a4b5c6d7e8", "b"
SECRET = "postgres-store-secret-0123456789"
KEYS = {"nour": "nour-key-0123456789abcdef", "sam": "sam-key-0123456789abcdef"}


async def test_instances_starting_together_create_the_schema_once(postgres_url: str) -> None:
    stores = [PostgresStore(postgres_url) for _ in range(4)]
    await asyncio.gather(*(store.open() for store in stores))
    try:
        await stores[0].put(OWNER, BUCKET, "k", b"v", None, time.time())
        seen = [await store.get(OWNER, BUCKET, "k", time.time()) for store in stores]
    finally:
        await asyncio.gather(*(store.close() for store in stores))

    assert {entry.data for entry in seen if entry} == {b"v"}
    assert len([entry for entry in seen if entry]) == 4


async def test_a_schema_newer_than_this_mcpkit_is_refused_with_what_to_do(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    await store.open()
    await store.close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("UPDATE remember_schema SET version = 99")

    with pytest.raises(StoreUnavailableError, match="has schema version 99, newer than this mcpkit understands"):
        await PostgresStore(postgres_url).open()


async def test_a_database_of_an_older_mcpkit_gains_the_notes_table_and_keeps_its_entries_and_version(
    postgres_url: str,
) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:  # what mcpkit's first PostgreSQL store made
        conn.execute("CREATE TABLE remember_schema (one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one), version INT)")
        for statement in SCHEMA[1]:
            conn.execute(statement)
        conn.execute("INSERT INTO remember_schema (one, version) VALUES (TRUE, 1)")
        conn.execute(
            "INSERT INTO remember_entries (owner, bucket, key, data) VALUES (%s, %s, 'k', 'v')", [OWNER, BUCKET]
        )
    store = PostgresStore(postgres_url)
    await store.open()
    try:
        await store.note("rotated-to", "0a1b2c3d")
        kept, notes = await store.get(OWNER, BUCKET, "k", time.time()), await store.notes()
    finally:
        await store.close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        version = conn.execute("SELECT version FROM remember_schema").fetchone()

    assert kept == Entry(b"v", None, ANY)
    assert notes == {"rotated-to": "0a1b2c3d"}
    assert version == (SCHEMA_VERSION,) == (1,)  # an added table: an older mcpkit still starts on the database


async def test_an_outage_is_store_unavailable_and_the_store_recovers_without_a_restart(postgres_url: str) -> None:
    parts = urlsplit(postgres_url)
    proxy = Proxy(parts.hostname or "127.0.0.1", parts.port or 5432)
    await proxy.up()
    netloc = f"{parts.username}@127.0.0.1:{proxy.port}"
    through = urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))
    store = PostgresStore(through, timeout=1.0)
    await store.open()
    try:
        await store.put(OWNER, BUCKET, "before", b"kept", None, time.time())
        await proxy.down()
        with pytest.raises(StoreUnavailableError) as reading:
            await store.get(OWNER, BUCKET, "before", time.time())
        with pytest.raises(StoreUnavailableError) as writing:
            await store.put(OWNER, BUCKET, "during", b"lost", None, time.time())
        await proxy.up()
        recovered, waited = await recovering(store)
        await store.put(OWNER, BUCKET, "after", b"written", None, time.time())
        during = await store.get(OWNER, BUCKET, "during", time.time())
    finally:
        await store.close()
        await proxy.down()

    assert not reading.value.maybe_applied
    assert not writing.value.maybe_applied  # refused before it was sent: it was not made
    assert recovered is not None
    assert recovered.data == b"kept"
    assert waited < RECOVERY_SECONDS  # the pool reconnects by itself, backing off: no restart
    assert during is None


async def test_pooled_connections_the_server_closed_are_replaced_without_an_error(postgres_url: str) -> None:
    """No check on each checkout (a round trip per call): a connection found closed by using it is replaced, with
    the rest of the pool, and the call made again; a read, or a write that had not reached COMMIT."""
    parts = urlsplit(postgres_url)
    proxy = Proxy(parts.hostname or "127.0.0.1", parts.port or 5432)
    await proxy.up()
    store = PostgresStore(urlunsplit((parts.scheme, f"{parts.username}@127.0.0.1:{proxy.port}", parts.path,
                                      parts.query, "")), min_connections=3)  # fmt: skip
    await store.open()
    try:
        await store.put(OWNER, BUCKET, "before", b"kept", None, time.time())
        for writing_first in (False, True):  # a read meets the closed connections first, then a write
            await proxy.down()  # every connection cut, as a server restart or an idle timeout does
            await proxy.up()
            if writing_first:
                await store.put(OWNER, BUCKET, "after", b"written", None, time.time())
            read = await store.get(OWNER, BUCKET, "before", time.time())
            if not writing_first:
                await store.put(OWNER, BUCKET, "after", b"written", None, time.time())
            written = await store.get(OWNER, BUCKET, "after", time.time())
            assert read is not None
            assert read.data == b"kept"
            assert written is not None
            assert written.data == b"written"
            await store.delete(OWNER, BUCKET, "after", time.time())
    finally:
        await store.close()
        await proxy.down()


#: How long the pool may take to reconnect once the database answers again (its backoff: 1 s, 2 s, 4 s, ...).
RECOVERY_SECONDS = 20.0


async def recovering(store: PostgresStore) -> tuple[Entry | None, float]:
    """The first read that works after an outage, and how long it took to come."""
    started = time.monotonic()
    while True:
        try:
            return await store.get(OWNER, BUCKET, "before", time.time()), time.monotonic() - started
        except StoreUnavailableError:
            if time.monotonic() - started > RECOVERY_SECONDS:
                raise
            await asyncio.sleep(0.2)


@tool(name="note", description="Keep a note, then find notes like it.")
class Note(ToolContext):
    async def execute(self, text: str) -> list[str]:
        await self.remember.set(f"note:{len(text)}", text, scope="user")
        return [match.value for match in await self.remember.search(text, scope="user")]


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
async def test_remember_search_and_history_work_on_postgres_through_http(postgres_url: str, protocol: str) -> None:
    @app(
        id="desk",
        tools=[Note],
        plugins=[
            RememberPlugin.init(type="postgres", url=postgres_url, secret=SECRET, search=True),
            HistoryPlugin.init(type="postgres", url=postgres_url, secret=SECRET, tools=True),
        ],
    )
    class Desk: ...

    server = Server([Desk], auth=StaticKeys(KEYS), allow_anonymous=True)
    async with running(server, protocol=protocol) as call_as:
        found = await call_as("nour").call("note", {"text": "refund the kettle"})
        await call_as("nour").call(
            "save_messages", {"conversation": "T-1", "messages": [{"role": "user", "content": "Codename Cedar."}]}
        )
        history = await call_as("nour").call("load_history", {"conversation": "T-1"})
        sams = await call_as("sam").call("load_history", {"conversation": "T-1"})
        with pytest.raises(ToolCallError) as anonymous:
            await call_as(None).call("load_history", {"conversation": "T-1"})

    assert found == {"result": ["refund the kettle"]}
    assert [message["content"] for message in history["messages"]] == ["Codename Cedar."]
    assert sams["messages"] == []
    assert error_code(anonymous.value.result) == "REMEMBER_IDENTITY_REQUIRED"
    with psycopg.connect(postgres_url) as conn:
        raw = b"".join(bytes(row[0]) for row in conn.execute("SELECT data FROM remember_entries"))
    assert b"Cedar" not in raw
    assert b"kettle" not in raw


async def test_every_connection_bounds_statements_locks_and_idle_transactions(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    await store.open()
    try:
        async with store._connection() as conn:
            shown = [
                (await (await conn.execute(f"SHOW {name}")).fetchone() or ("",))[0]
                for name in ("statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout", "jit")
            ]
    finally:
        await store.close()

    assert shown == ["30s", "10s", "30s", "off"]


def test_a_password_in_the_url_never_reaches_the_logs() -> None:
    from mcpkit_remember import parse_store_url

    described = parse_store_url("postgresql://app:pw1@db:5432/mcp?sslmode=require&password=pw2").describe()

    assert "pw1" not in described
    assert "pw2" not in described
    assert described == "PostgreSQL at postgresql://app:***@db:5432/mcp?sslmode=require&password=***"
