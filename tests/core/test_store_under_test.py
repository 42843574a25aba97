"""The fixtures never reach a store the test did not name (issue 36): with ``REMEMBER_STORE`` pointing at a live
Redis or a SQLite file (and ``REMEMBER_SECRET`` set), a test that uses ``call_as`` keeps the values of the remember,
history and context plugins on a memory store of its own, and the Redis prefix stays empty, the file uncreated. The
same server run as it serves (``running(..., store=None)``) writes there: the checks can fail."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from mcpkit import Server, StaticKeys, app
from mcpkit.testing import CallAs, CallerClient, running
from mcpkit_context import ContextPlugin, WritableBlock
from mcpkit_history import HistoryPlugin
from mcpkit_remember import RememberPlugin

KEYS = {"nour": "nour-key-0123456789abcdef"}
SECRET = "a-production-secret-0123456789abcdef"


def keys_under(url: str, prefix: str) -> list[bytes]:
    client = redis.Redis.from_url(url)
    try:
        return list(client.scan_iter(match=f"{prefix}*", count=1000))
    finally:
        client.close()


def build(prefix: str) -> Server:
    """Three plugins that take their store from the environment, all under the Redis key ``prefix``."""
    remember = RememberPlugin.init(tools={"enabled": True}, redis_prefix=prefix)
    history = HistoryPlugin.init(tools=True, redis_prefix=prefix)
    context = ContextPlugin.init([WritableBlock("notes", "Notes about the customer")], redis_prefix=prefix)
    apps = [
        app(id=name, plugins=[plugin])(type(name, (), {"__doc__": name}))
        for name, plugin in (("memory", remember), ("history", history), ("context", context))
    ]
    return Server(apps, auth=StaticKeys(KEYS))


async def keep_something_with_every_plugin(nour: CallerClient) -> None:
    await nour.call("remember_this", {"key": "tone", "value": "warm", "scope": "user"})
    await nour.call("save_messages", {"conversation": "T-1", "messages": [{"role": "user", "content": "Hi"}]})
    await nour.call("set_context", {"block": "notes", "content": "Prefers email."})
    assert (await nour.call("recall", {"key": "tone", "scope": "user"}))["value"] == "warm"


@pytest.fixture
def prefix(redis_url: str) -> Iterator[str]:
    """A key prefix no other test writes under; checked empty before, and emptied after."""
    chosen = f"mcpkit-test-isolation:{uuid.uuid4().hex}:"
    assert keys_under(redis_url, chosen) == []
    yield chosen
    client = redis.Redis.from_url(redis_url)
    try:
        for name in client.scan_iter(match=f"{chosen}*", count=1000):
            client.delete(name)
    finally:
        client.close()


@pytest.fixture
def production(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """``REMEMBER_STORE`` and ``REMEMBER_SECRET`` as a shell with production settings has them."""
    store = request.getfixturevalue("redis_url") if request.param == "redis" else f"sqlite:///{tmp_path / 'shared.db'}"
    monkeypatch.setenv("REMEMBER_STORE", store)
    monkeypatch.setenv("REMEMBER_SECRET", SECRET)
    return store


@pytest.fixture
def mcpkit_server(production: str, prefix: str) -> Server:
    return build(prefix)


@pytest.fixture
def mcpkit_store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The fixtures' default (memory), or a SQLite file of the test's own when it names one."""
    named = getattr(request, "param", None)
    return "memory" if named is None else f"sqlite:///{tmp_path / named}"


@pytest.mark.parametrize("production", ["redis"], indirect=True)
async def test_a_redis_in_remember_store_is_never_reached_by_the_fixtures(
    call_as: CallAs, production: str, prefix: str
) -> None:
    await keep_something_with_every_plugin(call_as("nour"))

    assert keys_under(production, prefix) == []


@pytest.mark.parametrize("production", ["sqlite"], indirect=True)
async def test_a_sqlite_file_in_remember_store_is_never_created_by_the_fixtures(
    call_as: CallAs, production: str, tmp_path: Path
) -> None:
    await keep_something_with_every_plugin(call_as("nour"))

    for made_beside in ("", "-wal", "-shm", ".secret"):
        assert not (tmp_path / f"shared.db{made_beside}").exists()


@pytest.mark.parametrize("production", ["redis", "sqlite"], indirect=True)
async def test_the_same_server_run_as_it_serves_writes_where_the_environment_says(
    production: str, prefix: str, tmp_path: Path, mcp_protocol: str
) -> None:
    async with running(build(prefix), protocol=mcp_protocol, store=None) as outside_the_fixtures:
        await keep_something_with_every_plugin(outside_the_fixtures("nour"))

    if production.startswith("redis"):
        assert len(keys_under(production, prefix)) >= 3
    else:
        assert (tmp_path / "shared.db").is_file()


@pytest.mark.parametrize("production", ["redis"], indirect=True)
async def test_running_gives_a_server_built_outside_any_test_a_memory_store(
    production: str, prefix: str, mcp_protocol: str
) -> None:
    server = build(prefix)  # REMEMBER_STORE is read here: a Redis store

    async with running(server, protocol=mcp_protocol) as call_as:
        await keep_something_with_every_plugin(call_as("nour"))

    assert keys_under(production, prefix) == []


@pytest.mark.parametrize("production", ["sqlite"], indirect=True)
@pytest.mark.parametrize("mcpkit_store", ["named-by-the-test.db"], indirect=True)
async def test_a_test_names_its_own_store_with_mcpkit_store(call_as: CallAs, mcpkit_store: str, tmp_path: Path) -> None:
    await keep_something_with_every_plugin(call_as("nour"))

    assert mcpkit_store == f"sqlite:///{tmp_path / 'named-by-the-test.db'}"
    assert (tmp_path / "named-by-the-test.db").is_file()
    assert not (tmp_path / "shared.db").exists()


async def test_a_server_started_by_two_tests_gives_the_second_none_of_the_firsts_values(mcp_protocol: str) -> None:
    """A module-level server (built once, started by each test) gets a new memory store per test, for every plugin."""
    server = build("unused:")  # built outside any test, as a conftest's module-level server is

    async with running(server, protocol=mcp_protocol) as call_as:
        await keep_something_with_every_plugin(call_as("nour"))
    async with running(server, protocol=mcp_protocol) as call_as:
        nour = call_as("nour")
        assert (await nour.call("recall", {"key": "tone", "scope": "user"}))["value"] is None
        assert (await nour.call("list_conversations", {}))["conversations"] == []
        assert "Prefers email." not in str(await nour.read("context://notes"))
