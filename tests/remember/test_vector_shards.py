"""Vector shards: search by meaning reads a place's vectors from sealed shard entries and opens only its best values.

Through the real stack (the official client, real stores) with ``Concepts``, the deterministic embedder of
``test_semantic``. The shards are looked at through the vault (``Vault.shards``), and how many values a search
opens is counted where the vault opens them.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

import anyio
import pytest

from mcpkit import ManualClock, Server
from mcpkit.testing import CallAs, running
from mcpkit_remember import RememberPlugin
from mcpkit_storage._cli import purge_user, rotate
from mcpkit_storage.base._scope import Place
from mcpkit_storage.index._shard_layout import SHARD_ITEMS, Item, Leaf, deadline_of, leaf_of, merged
from mcpkit_storage.sealing import Payload
from mcpkit_storage.stores import Address, StoreUnavailableError
from mcpkit_storage.vault._vault import Vault
from remember.support import (
    NEW,
    SECRET,
    SECRET_B,
    build_server,
    keyring_for,
    mem,
    plugin_of,
    refused,
    static_user_id,
    user_identity,
)
from remember.test_rotation import opened_store
from remember.test_semantic import CONCEPTS, Concepts, semantic

NOUR = Place(user_identity(static_user_id("nour")), "user")
QUERIES = ("favourite hot beverage", "which seat on the plane", "money back for an order", "the language she writes")
STORES = pytest.mark.parametrize("store_kind", ["memory", "sqlite", "redis", "postgres"])


@pytest.fixture
def mcp_protocol() -> str:
    return NEW


@pytest.fixture
def mcpkit_server(store_options: dict[str, Any]) -> Server:
    return semantic(store_options, Concepts())


def notes(count: int, seed: int = 30) -> dict[str, str]:
    """``count`` values, each one concept's word among filler words of its own (so no two vectors are equal)."""
    rng = random.Random(seed)
    words = [word for group in CONCEPTS.values() for word in group]
    filler = [f"w{number}" for number in range(4000)]
    return {f"note:{n}": " ".join([rng.choice(words), *rng.sample(filler, 3)]) for n in range(count)}


def vault_of(server: Server) -> Vault:
    return plugin_of(server)._started().vault


class Opened:
    """Counts the values a search has the vault open (each is one decryption)."""

    def __init__(self, vault: Vault) -> None:
        self.count = 0
        at, bucket = vault.open_at, vault.open_bucket

        async def counting_at(place: Place, addresses: Sequence[Address], now: float) -> list[Payload | None]:
            self.count += len(addresses)
            return await at(place, addresses, now)

        async def counting_bucket(place: Place, owner: str, name: str, now: float) -> dict[str, Payload]:
            opened = await bucket(place, owner, name, now)
            self.count += len(opened)
            return opened

        vault.open_at = counting_at  # type: ignore[method-assign]
        vault.open_bucket = counting_bucket  # type: ignore[method-assign]


async def names_in_shards(vault: Vault, now: float) -> set[str]:
    leaves = await vault.vectors.shards.leaves(NOUR, now) or []
    return {leaf.names[at : at + 16].hex() for leaf in leaves for at in range(0, len(leaf.names), 16)}


def name_of(vault: Vault, key: str) -> str:
    return vault.keyring.locate(NOUR.identity, NOUR.bucket, key)[0].key


async def drop_shards(vault: Vault, now: float) -> int:
    """Delete the place's shard entries, as a store written before them (or by an older mcpkit) has none."""
    addresses = await vault.vectors.shards.addresses(NOUR, now)
    return await vault.store.delete_many(addresses, now)


async def ranked(call_as: CallAs, mode: str) -> list[list[tuple[str, float]]]:
    nour = call_as("nour")
    answers = []
    for query in QUERIES:
        found = await mem(nour, "search", query=query, scope="user", limit=5, mode=mode)
        answers.append([(key, score) for key, _, score in found])
    return answers


def same(left: list[list[tuple[str, float]]], right: list[list[tuple[str, float]]]) -> None:
    """The same scores (within float rounding), and the same keys in order, except among values whose scores tie
    within rounding: which of those ranks first depends on rounding (numpy sums rows in blocks of its choosing)."""
    for one, other in zip(left, right, strict=True):
        assert [score for _, score in one] == pytest.approx([score for _, score in other], abs=1e-5)
        last = round(one[-1][1], 5) if one else None
        for tie in {round(score, 5) for _, score in one} - {last}:
            assert {key for key, score in one if round(score, 5) == tie} == {
                key for key, score in other if round(score, 5) == tie
            }


@STORES
@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
async def test_a_search_by_meaning_opens_only_its_best_values_and_ranks_as_opening_them_all(
    call_as: CallAs, mcpkit_server: Server, clock: ManualClock, mode: str
) -> None:
    kept = notes(3 * SHARD_ITEMS)
    keys = list(kept)
    for start in range(0, len(keys), 300):
        await mem(
            call_as("nour"), "set_many", value={key: kept[key] for key in keys[start : start + 300]}, scope="user"
        )
    vault = vault_of(mcpkit_server)
    assert len(await vault.vectors.shards.addresses(NOUR, clock.now())) > 3  # split: a root and its leaves
    assert await names_in_shards(vault, clock.now()) == {name_of(vault, key) for key in kept}
    opened = Opened(vault)
    from_shards = await ranked(call_as, mode)
    assert opened.count <= len(QUERIES) * (5 * 2 + 8)  # the shortlist of each query, not the place
    assert all(len(answer) == 5 for answer in from_shards)
    await drop_shards(vault, clock.now())
    opened.count = 0
    every_value = await ranked(call_as, mode)  # the first search opens every value, and fills the shards
    assert opened.count >= len(kept)
    same(from_shards, every_value)
    opened.count = 0
    same(await ranked(call_as, mode), every_value)
    assert opened.count <= len(QUERIES) * (5 * 2 + 8)


@pytest.mark.parametrize("store_kind", ["sqlite", "redis", "redis-cluster", "postgres"])
async def test_two_servers_writing_into_one_shard_at_once_lose_no_vector(
    store_options: dict[str, Any], clock: ManualClock
) -> None:
    first, second = semantic(store_options, Concepts()), semantic(store_options, Concepts())
    async with running(first, clock=clock) as one, running(second, clock=clock) as two:
        nour_one, nour_two = one("nour"), two("nour")

        async def write(client: Any, prefix: str) -> None:
            for number in range(25):
                await mem(client, "set", key=f"{prefix}{number}", value=f"tea number {number}", scope="user")

        async with anyio.create_task_group() as group:
            group.start_soon(write, nour_one, "a")
            group.start_soon(write, nour_two, "b")
        vault = vault_of(first)
        keys = [f"{prefix}{number}" for prefix in "ab" for number in range(25)]
        assert await names_in_shards(vault, clock.now()) == {name_of(vault, key) for key in keys}
        found = await mem(nour_one, "search", query="beverage", scope="user", limit=100, mode="semantic")
        assert sorted(key for key, _, _ in found) == sorted(keys)


@pytest.mark.parametrize("store_kind", ["memory", "sqlite"])
async def test_a_value_gone_behind_its_shard_drops_out_the_next_is_taken_and_the_shard_is_pruned(
    call_as: CallAs, mcpkit_server: Server, clock: ManualClock
) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="latte", value="a latte", scope="user")
    await mem(nour, "set", key="tea", value="green tea and biscuits", scope="user", ttl=60)
    await mem(nour, "set", key="seat", value="aisle seat", scope="user")
    vault = vault_of(mcpkit_server)
    # The value goes the way a crash between a write and its shard would leave it: its shard still holds it.
    await vault.store.delete(*vault.keyring.locate(NOUR.identity, NOUR.bucket, "latte")[0], clock.now())
    assert name_of(vault, "latte") in await names_in_shards(vault, clock.now())
    found = await mem(nour, "search", query="beverage", scope="user", limit=1, mode="semantic")
    assert [key for key, _, _ in found] == ["tea"]
    assert name_of(vault, "latte") not in await names_in_shards(vault, clock.now())  # pruned by the search
    clock.advance(61)  # tea expires: its shard item with it
    assert await mem(nour, "search", query="beverage", scope="user", mode="semantic") == []
    await mem(nour, "set", key="seat", value="a cup of coffee", scope="user")  # its shard changed first
    found = await mem(nour, "search", query="beverage", scope="user", mode="semantic")
    assert [key for key, _, _ in found] == ["seat"]
    assert await names_in_shards(vault, clock.now()) == {name_of(vault, "seat")}  # the expired one pruned


@pytest.mark.parametrize("store_kind", ["sqlite", "redis", "postgres"])
async def test_values_kept_before_the_shards_or_without_the_embedder_get_exact_shards_from_reindex(
    store_options: dict[str, Any], clock: ManualClock
) -> None:
    server = semantic(store_options, Concepts())
    kept = notes(40)
    async with running(server, clock=clock) as callers:
        await mem(callers("nour"), "set_many", value=kept, scope="user")
    plain = build_server(RememberPlugin.init(**store_options, secret=SECRET, search=True))
    async with running(plain, clock=clock) as callers:  # a while without the embedder: the shards fall behind
        for key in list(kept)[:5]:
            await mem(callers("nour"), "forget", key=key, scope="user")
            del kept[key]
        later = notes(5, seed=31)
        await mem(callers("nour"), "set_many", value={f"late:{key}": text for key, text in later.items()}, scope="user")
        kept.update({f"late:{key}": text for key, text in later.items()})
    async with opened_store(store_options) as store:
        report = await rotate(store, keyring_for(store_options, [SECRET]), clock.now(), embedder=Concepts())
    assert report.reindexed == len(kept)  # the shards are not counted as values
    server = semantic(store_options, Concepts())
    async with running(server, clock=clock) as callers:
        vault = vault_of(server)
        assert await names_in_shards(vault, clock.now()) == {name_of(vault, key) for key in kept}
        opened = Opened(vault)
        assert await mem(callers("nour"), "search", query="beverage", scope="user", limit=3, mode="semantic")
        assert opened.count <= 3 * 2 + 8
        await drop_shards(vault, clock.now())  # as an mcpkit from before shards leaves a store
        opened.count = 0
        assert await mem(callers("nour"), "search", query="beverage", scope="user", limit=3, mode="semantic")
        assert opened.count >= len(kept)  # every value opened, and the shards filled from them
        assert await names_in_shards(vault, clock.now()) == {name_of(vault, key) for key in kept}


@pytest.mark.parametrize("store_kind", ["sqlite", "redis", "redis-cluster", "postgres"])
async def test_forgetting_purging_and_rotating_take_the_shards_with_the_values(
    store_options: dict[str, Any], clock: ManualClock
) -> None:
    server = semantic(store_options, Concepts())
    async with running(server, clock=clock) as callers:
        nour = callers("nour")
        await mem(nour, "set_many", value=notes(10), scope="user")
        vault = vault_of(server)
        owner, bucket = vault.buckets(NOUR)[0]
        assert await mem(nour, "forget_all", scope="user") == 10  # values, not shard entries
        assert await vault.store.entries(owner, bucket, clock.now()) == []
        await mem(nour, "set_many", value=notes(10), scope="user")
    async with opened_store(store_options) as store:
        await rotate(store, keyring_for(store_options, [SECRET_B, SECRET]), clock.now())
        assert await store.entries(owner, bucket, clock.now()) == []  # the old secret's shards went too
    server = semantic(store_options, Concepts(), SECRET_B)
    async with running(server, clock=clock) as callers:
        found = await mem(callers("nour"), "search", query="beverage", scope="user", limit=10, mode="semantic")
        drinks = [key for key, text in notes(10).items() if text.split()[0] in CONCEPTS["drink"]]
        assert sorted(key for key, _, _ in found) == sorted(drinks)  # from the values, which fill the shards anew
        assert len(await names_in_shards(vault_of(server), clock.now())) == 10
    async with opened_store(store_options) as store:
        await purge_user(store, keyring_for(store_options, [SECRET_B]), static_user_id("nour"))
        assert [record async for record in store.scan()] == []


@pytest.mark.parametrize("store_kind", ["sqlite", "redis", "postgres"])
async def test_shards_expire_with_the_values_they_hold(store_options: dict[str, Any], clock: ManualClock) -> None:
    server = semantic(store_options, Concepts())
    async with running(server, clock=clock) as callers:
        await mem(callers("nour"), "set_many", value=notes(SHARD_ITEMS + 10), scope="user", ttl=60)
        await mem(callers("nour"), "set", key="later", value="a latte", scope="user", ttl=120)
        assert len(await vault_of(server).vectors.shards.addresses(NOUR, clock.now())) >= 3
    async with opened_store(store_options) as store:
        clock.advance(61)
        await store.purge_expired(clock.now())
        left = [record async for record in store.scan()]
        # The later value and its change history (the default), and the shards on its path: the root, and a leaf
        assert len(left) == 2 + 2
        clock.advance(60)
        await store.purge_expired(clock.now())
        assert [record async for record in store.scan()] == []


@pytest.mark.parametrize("store_kind", ["sqlite", "redis"])
async def test_a_tree_another_server_deleted_is_not_written_into_from_memory(
    store_options: dict[str, Any], clock: ManualClock
) -> None:
    first, second = semantic(store_options, Concepts()), semantic(store_options, Concepts())
    async with running(first, clock=clock) as one, running(second, clock=clock) as two:
        await mem(one("nour"), "set_many", value=notes(SHARD_ITEMS + 100), scope="user")
        assert await mem(one("nour"), "search", query="beverage", scope="user", mode="semantic")  # knows the tree
        vault = vault_of(first)
        assert len(await vault.vectors.shards.addresses(NOUR, clock.now())) >= 3
        assert await mem(two("nour"), "forget_all", scope="user") == SHARD_ITEMS + 100
        for key in ("tea", "latte", "seat"):
            await mem(one("nour"), "set", key=key, value=f"a {key}", scope="user")
        found = await mem(one("nour"), "search", query="beverage", scope="user", mode="semantic")
        assert sorted(key for key, _, _ in found) == ["latte", "tea"]
        owner, bucket = vault.buckets(NOUR)[0]
        # three values, their change histories (the default), one root leaf
        assert len(await vault.store.entries(owner, bucket, clock.now())) == 3 + 3 + 1
        assert await names_in_shards(vault, clock.now()) == {name_of(vault, key) for key in ("tea", "latte", "seat")}


@pytest.mark.parametrize("store_kind", ["sqlite"])
async def test_a_server_whose_first_call_is_a_search_fills_the_shards_with_vectors(
    store_options: dict[str, Any], clock: ManualClock
) -> None:
    kept = notes(30)
    first = semantic(store_options, Concepts())
    async with running(first, clock=clock) as callers:
        await mem(callers("nour"), "set_many", value=kept, scope="user")
        await drop_shards(vault_of(first), clock.now())
    fresh = semantic(store_options, Concepts())
    async with running(fresh, clock=clock) as callers:
        vault = vault_of(fresh)
        assert await mem(callers("nour"), "search", query="beverage", scope="user", limit=3, mode="semantic")
        leaves = await vault.vectors.shards.leaves(NOUR, clock.now()) or []
        assert sum(len(leaf) for leaf in leaves) == len(kept)
        assert all(leaf.meta["rows"].min() > 0 for leaf in leaves)  # every value's vector, none to embed again
        opened = Opened(vault)
        assert await mem(callers("nour"), "search", query="beverage", scope="user", limit=3, mode="semantic")
        assert opened.count <= 3 * 2 + 8


@pytest.mark.parametrize("store_kind", ["memory", "sqlite"])
async def test_shard_entries_count_in_the_callers_quota(store_options: dict[str, Any]) -> None:
    plugin = RememberPlugin.init(**store_options, secret=SECRET, search=True, embedder=Concepts(), max_values=5)
    async with running(build_server(plugin)) as callers:
        nour = callers("nour")
        for number in range(2):  # each a value and its change history (the default): four entries
            await mem(nour, "set", key=f"k{number}", value="tea", scope="user")
        error = await refused(nour, "set", key="k2", value="tea", scope="user")  # the shard is the fifth entry
        assert error.code == "REMEMBER_QUOTA_EXCEEDED"
        counted = "values, their change histories and the vector shards of search by meaning"
        assert f"5 entries ({counted}) in user scope" in error.message
    plugin = RememberPlugin.init(
        **store_options, secret=SECRET, search=True, embedder=Concepts(), max_values=5, history=0
    )
    async with running(build_server(plugin)) as callers:
        nour = callers("nour")
        await mem(nour, "forget_all", scope="user")
        for number in range(4):
            await mem(nour, "set", key=f"k{number}", value="tea", scope="user")
        error = await refused(nour, "set", key="k4", value="tea", scope="user")  # the shard is the fifth entry
        assert "5 entries (values and the vector shards of search by meaning) in user scope" in error.message


def comparable(items: dict[str, Item]) -> dict[str, Item]:
    """Items that compare equal when equal (an unknown write time, NaN, is not equal to itself)."""
    return {
        name: item._replace(written=-1.0 if math.isnan(item.written) else item.written) for name, item in items.items()
    }


@pytest.mark.parametrize("seed", range(20))
def test_a_leaf_merged_on_its_columns_keeps_what_merging_its_items_keeps(seed: int) -> None:
    rng = random.Random(seed)
    tag, dimensions = b"tag!", 3

    def item(written: float) -> Item:
        rows = bytes(rng.randrange(256) for _ in range((4 + dimensions) * rng.randint(0, 3)))
        deadline = rng.choice([math.inf, 50.0, 150.0, 250.0])
        return Item(written, deadline, rows, rng.choice(["k", "clé", "a:b", "x" * 40]))

    names = [f"{rng.getrandbits(128):032x}" for _ in range(40)]
    kept = {name: item(rng.choice([1.0, 5.0, math.nan])) for name in rng.sample(names, 25)}
    changes: dict[str, Item | None] = {
        name: None if rng.random() < 0.3 else item(rng.choice([0.5, 5.0, 9.0, math.nan]))
        for name in rng.sample(names, rng.choice([1, 3, 30]))
    }
    now = rng.choice([0.0, 100.0])
    expected = merged(kept, changes, now)
    leaf = Leaf.decode(leaf_of(tag, dimensions, kept))
    result = leaf.merge(changes, now)
    if result is None:
        assert comparable(expected) == comparable(kept)
        return
    after = Leaf.decode(result.blob)
    assert comparable(after.items()) == comparable(expected)
    assert (result.values, result.rows) == (len(expected), sum(len(i.rows) for i in expected.values()) // 7)
    assert result.deadline == deadline_of(expected.values(), now)


@pytest.mark.parametrize("store_kind", ["memory", "sqlite"])
async def test_a_write_that_fails_after_its_shard_changed_takes_its_vector_out_again(
    call_as: CallAs, mcpkit_server: Server, clock: ManualClock
) -> None:
    nour = call_as("nour")
    kept = notes(6)
    await mem(nour, "set_many", value=kept, scope="user")
    vault = vault_of(mcpkit_server)
    name = name_of(vault, "note:0")
    assert name in await names_in_shards(vault, clock.now())

    async def gone(*arguments: Any, **options: Any) -> Any:
        raise StoreUnavailableError("the store went away")

    put, swap_many = vault.store.put, vault.store.swap_many  # without a history, and with one (the default)
    vault.store.put = vault.store.swap_many = gone  # type: ignore[method-assign]
    try:
        error = await refused(nour, "set", key="note:0", value="an altogether different text", scope="user")
    finally:
        vault.store.put, vault.store.swap_many = put, swap_many  # type: ignore[method-assign]
    assert error.code == "REMEMBER_STORE_UNAVAILABLE"
    # Not the vector of a text that was never kept: none, which the count of a complete shard notices ...
    assert name not in await names_in_shards(vault, clock.now())
    await ranked(call_as, "semantic")
    # ... and the next search by meaning, opening every value, puts the kept value's vector back.
    assert name in await names_in_shards(vault, clock.now())
    assert await mem(nour, "get", key="note:0", scope="user") == kept["note:0"]


@pytest.mark.parametrize("store_kind", ["memory", "sqlite"])
@pytest.mark.parametrize("embedded", [False, True])
async def test_set_many_past_the_quota_names_the_key_that_did_not_fit_and_keeps_those_before(
    store_options: dict[str, Any], embedded: bool
) -> None:
    embedder = {"search": True, "embedder": Concepts()} if embedded else {}
    plugin = RememberPlugin.init(**store_options, secret=SECRET, max_values=8, **embedder)
    async with running(build_server(plugin)) as callers:
        nour = callers("nour")
        error = await refused(nour, "set_many", value={f"k{n}": "tea" for n in range(6)}, scope="user")
        assert error.code == "REMEMBER_QUOTA_EXCEEDED"
        # Each value is two entries with its change history (the default); with search by meaning, the batch's
        # shard is an entry too.
        first_left_out = 3 if embedded else 4
        assert f"Cannot keep 'k{first_left_out}'" in error.message
        assert ("vector shards" in error.message) is embedded
        kept = [await mem(nour, "get", key=f"k{n}", scope="user") for n in range(6)]
        assert kept == ["tea"] * first_left_out + ["<missing>"] * (6 - first_left_out)
