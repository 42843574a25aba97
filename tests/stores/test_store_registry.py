"""A store is one package and one ``register_store``: configuration, start and tool calls reach a store known only
by its registration (the contract suite runs on the same toy store: ``conftest.make_store``'s ``toy``)."""

from __future__ import annotations

import pytest

from mcpkit import ConfigurationError, ManualClock
from mcpkit.testing import running
from mcpkit_remember import RememberPlugin
from mcpkit_storage import StoreConfig, parse_store_url
from mcpkit_storage.stores import StoreKind, register_store, store_kinds
from remember.support import SECRET, build_server, mem
from stores.toy import SHELVES, TOY, ToyStore, make_toy


def test_a_registered_store_is_read_from_its_url_and_described_by_its_label(toy_registered: StoreKind) -> None:
    config = parse_store_url("  toy://shelf-a ")

    assert config == StoreConfig("toy", url="toy://shelf-a")
    assert config.kind is toy_registered
    assert config.describe() == "Toy at toy://shelf-a"


def test_an_unregistered_scheme_is_refused_naming_every_registered_one(toy_registered: StoreKind) -> None:
    with pytest.raises(ConfigurationError) as refused:
        parse_store_url("mongodb://db")

    assert str(refused.value).startswith("Unknown store 'mongodb://db': use 'memory', ")
    for url in ("toy://NAME", "sqlite:///relative.db", "redis+cluster://HOST:PORT,HOST:PORT"):
        assert repr(url) in str(refused.value)


async def test_remember_store_env_reaches_a_registered_store_through_a_tool_call(
    toy_registered: StoreKind, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REMEMBER_STORE", "toy://from-env")
    monkeypatch.setenv("REMEMBER_SECRET", SECRET)
    async with running(build_server(RememberPlugin.init()), clock=ManualClock(), store=None) as callers:
        await mem(callers("nour"), "set", key="k", value="on the toy shelf", scope="user")

    assert isinstance(SHELVES["toy://from-env"], ToyStore)
    plugin = RememberPlugin.init(type="toy", url="toy://from-env", secret=SECRET)
    async with running(build_server(plugin), clock=ManualClock()) as callers:
        assert await mem(callers("nour"), "get", key="k", scope="user") == "on the toy shelf"


async def test_a_store_other_processes_reach_needs_a_secret_to_start(toy_registered: StoreKind) -> None:
    plugin = RememberPlugin.init(type="toy", url="toy://no-secret")

    with pytest.raises(ConfigurationError, match="The Toy store needs a secret shared by every server instance"):
        async with running(build_server(plugin), clock=ManualClock()):
            pass


def test_a_second_store_with_a_taken_name_or_scheme_is_refused(toy_registered: StoreKind) -> None:
    with pytest.raises(ValueError, match="A store named 'toy' is registered already"):
        register_store(TOY)
    with pytest.raises(ValueError, match="would be read as the Redis store's"):
        register_store(StoreKind(name="my-redis", label="My Redis", make=make_toy, schemes=("redis://",)))

    assert [kind.name for kind in store_kinds()].count("toy") == 1
