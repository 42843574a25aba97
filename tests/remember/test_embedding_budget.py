"""The embedding budget (issue 35): a value embeds its first ``MAX_WINDOWS_PER_VALUE`` windows (the rest is found by
its words, and ``explain`` says so), and the callers share the embedder fairly, each wait with a deadline.

Through the real stack with ``Gated``, ``Concepts`` (the deterministic embedder of ``test_semantic``) whose calls
each wait until the test lets them through: the order in which calls reach the model is asserted, never a time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import anyio
import anyio.lowlevel
import pytest

import mcpkit_storage.index._semantic as semantic_module
from mcpkit import ConfigurationError, Server
from mcpkit.testing import CallAs, CallerClient, running
from mcpkit_remember import RememberPlugin
from mcpkit_search import CHUNK_OVERLAP, CHUNK_WORDS, document_chunks, vectors_in
from mcpkit_storage.base._scope import Place
from mcpkit_storage.index._scheduler import EmbedScheduler
from mcpkit_storage.index._semantic import BUSY, EMBED_BATCH_WORDS, MAX_WINDOWS_PER_VALUE, Semantic
from remember.support import mem, plugin_of, static_user_id, user_identity
from remember.test_semantic import Concepts, search_notes, semantic, with_memory_tools

NOUR = Place(user_identity(static_user_id("nour")), "user")
LONG = MAX_WINDOWS_PER_VALUE + 8  # windows of a value longer than the budget


class Gated(Concepts):
    """``Concepts`` whose calls wait, once ``close`` is called, until ``release`` lets the oldest through (or ``open``
    lets every one through); it records each call's texts in the order they reached it, and the most calls that ran
    at once."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[list[str]] = []
        self.running = self.most = 0
        self._gates: list[anyio.Event] = []
        self._closed = False

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            if self._closed:
                gate = anyio.Event()
                self._gates.append(gate)
                await gate.wait()
        finally:
            self.running -= 1
        return await super().embed(texts)

    def close(self) -> None:
        self._closed = True

    def release(self) -> None:
        self._gates.pop(0).set()

    def open(self) -> None:
        self._closed = False
        for gate in self._gates:
            gate.set()
        self._gates.clear()


@pytest.fixture
def embedder() -> Gated:
    return Gated()


@pytest.fixture
def mcpkit_server(store_options: dict[str, Any], embedder: Gated) -> Server:
    return semantic(store_options, embedder)


def long_text(tag: str, windows: int = LONG, last: str = "") -> str:
    """Words of ``windows`` windows, each ``tag`` and a number (no concept of ``Concepts``; 500 distinct words, so
    the index holds them all), then ``last``."""
    count = CHUNK_WORDS + (windows - 1) * (CHUNK_WORDS - CHUNK_OVERLAP)
    return " ".join([*(f"{tag}{number % 500}" for number in range(count - bool(last))), *([last] if last else [])])


def semantic_of(server: Server) -> Semantic:
    semantic = plugin_of(server)._started().vault.semantic
    assert semantic is not None
    return semantic


async def until(condition: Callable[[], bool]) -> None:
    """Let the server's tasks run until ``condition`` holds (failing rather than hanging if it never does)."""
    with anyio.fail_after(30):
        while not condition():
            await anyio.lowlevel.checkpoint()


async def write(client: CallerClient, key: str, value: str) -> None:
    await mem(client, "set", key=key, value=value, scope="user")


async def search(client: CallerClient, query: str) -> None:
    await mem(client, "search", query=query, scope="user")


def whose(calls: list[list[str]]) -> list[str]:
    """Whose value each call embedded (by the words of ``long_text``), or the query it embedded."""
    return [next((name for name in ("nour", "sam") if f" {name}" in call[0]), call[0]) for call in calls]


# -- the budget per value --------------------------------------------------------------------------------------


@pytest.mark.parametrize("store_kind", ["memory", "sqlite", "redis", "redis-cluster", "postgres"])
async def test_a_long_value_keeps_vectors_of_its_first_windows_and_is_found_past_them_by_its_words(
    call_as: CallAs, mcpkit_server: Server, embedder: Gated
) -> None:
    nour = call_as("nour")
    text = long_text("lorem", last="zanzibar")
    windows = document_chunks("talk", text)
    assert len(windows) > MAX_WINDOWS_PER_VALUE
    assert "zanzibar" not in " ".join(windows[:MAX_WINDOWS_PER_VALUE])
    await mem(nour, "set", key="talk", value=text, scope="user")
    assert sorted(text for call in embedder.calls for text in call) == sorted(windows[:MAX_WINDOWS_PER_VALUE])
    vault = plugin_of(mcpkit_server)._started().vault
    kept, _, _ = await vault.look(NOUR, "talk", mcpkit_server.clock.now(), False)
    assert kept is not None
    assert vectors_in(kept.vector, embedder.dimensions) == MAX_WINDOWS_PER_VALUE
    await mem(nour, "set", key="short", value="green tea from zanzibar", scope="user")
    found = await mem(nour, "search_explained", query="zanzibar", scope="user")
    why = {key: explanation for key, _, explanation in found}
    assert set(why) == {"talk", "short"}  # talk by its last word, which no vector holds
    assert why["talk"]["lexical_rank"] is not None
    assert why["talk"]["windows_embedded"] == MAX_WINDOWS_PER_VALUE  # explain says only its first windows were
    assert why["short"]["windows_embedded"] is None  # embedded whole
    assert [key for key, _, _ in await mem(nour, "search", query="zanzibar", scope="user", mode="lexical")] == [
        "short",
        "talk",
    ]


@pytest.mark.parametrize("store_kind", ["memory"])
async def test_a_long_value_kept_without_a_vector_is_embedded_when_searched_within_the_same_budget(
    call_as: CallAs, mcpkit_server: Server, embedder: Gated
) -> None:
    nour = call_as("nour")
    vault = plugin_of(mcpkit_server)._started().vault
    vault.vectors.semantic, kept = None, vault.semantic  # as if kept before the embedder was on: no vector, no shard
    await mem(nour, "set", key="talk", value=long_text("lorem", last="zanzibar"), scope="user")
    vault.vectors.semantic = kept
    found = await mem(nour, "search_explained", query="zanzibar", scope="user")
    assert [(key, why["windows_embedded"]) for key, _, why in found] == [("talk", MAX_WINDOWS_PER_VALUE)]
    assert len([text for call in embedder.calls for text in call]) == 1 + MAX_WINDOWS_PER_VALUE  # the query too


# -- turns at the embedder -------------------------------------------------------------------------------------


@pytest.mark.parametrize("store_kind", ["memory"])
async def test_another_callers_search_is_embedded_while_one_callers_writes_wait_their_turns(
    call_as: CallAs, mcpkit_server: Server, embedder: Gated
) -> None:
    nour, sam = call_as("nour"), call_as("sam")
    await mem(sam, "set", key="pref:coffee", value="Oat milk flat white, no sugar", scope="user")
    scheduler = semantic_of(mcpkit_server).scheduler
    embedder.calls.clear()
    embedder.close()
    searched: list[str] = []

    async def search() -> None:
        searched.extend(key for key, _, _ in await mem(sam, "search", query="favourite hot beverage", scope="user"))

    async with anyio.create_task_group() as group:
        for number in range(3):  # three long values at once: one batch at the model, two waiting
            group.start_soon(write, nour, f"talk-{number}", long_text(f"nour{number}x"))
        await until(lambda: len(embedder.calls) == 1 and scheduler.waiting == 2)
        group.start_soon(search)
        await until(lambda: len(embedder.calls) == 2)  # Sam's query reached the model beside Nour's batch
        assert embedder.calls[1] == ["favourite hot beverage"]
        assert scheduler.waiting == 2  # while her other two still wait
        embedder.open()
    assert searched == ["pref:coffee"]
    assert embedder.most == 2  # a batch and a query, never two batches: the model uses every core for one
    assert len(embedder.calls) == 1 + 3 * -(-MAX_WINDOWS_PER_VALUE * CHUNK_WORDS // EMBED_BATCH_WORDS)


@pytest.mark.parametrize("store_kind", ["memory"])
async def test_two_writers_take_turns_at_the_embedder_batch_by_batch(
    call_as: CallAs, mcpkit_server: Server, embedder: Gated
) -> None:
    nour, sam = call_as("nour"), call_as("sam")
    scheduler = semantic_of(mcpkit_server).scheduler
    embedder.close()
    async with anyio.create_task_group() as group:
        for number in range(3):  # Nour: three long values at once
            group.start_soon(write, nour, f"talk-{number}", long_text(f"nour{number}x"))
        await until(lambda: len(embedder.calls) == 1 and scheduler.waiting == 2)
        group.start_soon(write, sam, "talk", long_text("samx"))  # Sam: one
        await until(lambda: scheduler.waiting == 3)
        embedder.open()
    assert embedder.most == 1
    turns = whose(embedder.calls)
    first, last = turns.index("sam"), len(turns) - 1 - turns[::-1].index("sam")
    assert first == 2  # after Nour's batch at the model and the one that waited before Sam came
    # Then one of Nour's batches, one of Sam's, until Sam's value is done: her three values count as one caller.
    assert turns[first : last + 1] == ["sam", "nour"] * ((last - first) // 2) + ["sam"]
    assert turns.count("sam") == len(turns) // 4 > 1


@pytest.mark.parametrize("store_kind", ["memory"])
async def test_callers_take_turns_at_embedding_their_queries_too(
    call_as: CallAs, mcpkit_server: Server, embedder: Gated
) -> None:
    nour, sam = call_as("nour"), call_as("sam")
    scheduler = semantic_of(mcpkit_server).scheduler
    embedder.close()
    async with anyio.create_task_group() as group:
        for number in range(6):  # Sam: six searches at once, one query at the model
            group.start_soon(search, sam, f"question {number}")
        await until(lambda: len(embedder.calls) == 1 and scheduler.waiting == 5)
        group.start_soon(search, nour, "where to sit")
        await until(lambda: scheduler.waiting == 6)
        embedder.open()
    assert [call for [call] in embedder.calls].index("where to sit") == 2  # after Sam's query and one more


@pytest.mark.parametrize("store_kind", ["memory", "sqlite"])
async def test_a_write_whose_turn_does_not_come_in_time_keeps_its_value_without_a_vector(
    call_as: CallAs, mcpkit_server: Server, embedder: Gated, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(semantic_module, "EMBED_WAIT_SECONDS", 0.05)
    nour, sam = call_as("nour"), call_as("sam")
    embedder.close()
    async with anyio.create_task_group() as group:
        group.start_soon(write, nour, "talk", long_text("nourx", windows=2))
        await until(lambda: len(embedder.calls) == 1)  # Nour's value holds the model
        await mem(sam, "set", key="pref:coffee", value="Oat milk flat white, no sugar", scope="user")  # not waiting
        assert await mem(sam, "get", key="pref:coffee", scope="user") == "Oat milk flat white, no sugar"
        assert len(embedder.calls) == 1  # Sam's value never reached the model
        embedder.open()
    vault = plugin_of(mcpkit_server)._started().vault
    sams = Place(user_identity(static_user_id("sam")), "user")
    kept, _, _ = await vault.look(sams, "pref:coffee", mcpkit_server.clock.now(), False)
    assert kept is not None
    assert kept.vector == b""  # kept without a vector
    assert [key for key, _, _ in await mem(sam, "search", query="favourite hot beverage", scope="user")] == [
        "pref:coffee"  # embedded when searched, as a value kept before the embedder was
    ]


@pytest.mark.parametrize("store_kind", ["memory"])
async def test_a_search_whose_turn_does_not_come_in_time_goes_by_words_and_says_so(
    store_options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(semantic_module, "EMBED_WAIT_SECONDS", 0.05)
    model = Gated()
    async with running(with_memory_tools(store_options, model)) as callers:
        nour, sam = callers("nour"), callers("sam")
        await sam.call("remember_this", {"key": "pref:coffee", "value": "Oat milk flat white", "scope": "user"})
        model.close()
        async with anyio.create_task_group() as group:
            group.start_soon(search_notes, nour, "where to sit")
            await until(lambda: len(model.calls) == 2)  # Sam's value, then Nour's query, which holds the model
            assert await search_notes(sam, "oat milk") == (["pref:coffee"], BUSY)
            model.open()
        assert await search_notes(sam, "favourite hot beverage") == (["pref:coffee"], None)


class Hosted(Gated):
    concurrency = 2


@pytest.mark.parametrize("store_kind", ["memory"])
async def test_an_embedder_with_a_concurrency_runs_that_many_calls_at_once(store_options: dict[str, Any]) -> None:
    model = Hosted()
    async with running(semantic(store_options, model)) as callers:
        nour = callers("nour")
        model.close()
        async with anyio.create_task_group() as group:
            for number in range(3):
                group.start_soon(write, nour, f"talk-{number}", long_text(f"nour{number}x"))
            await until(lambda: len(model.calls) == 2)
            model.open()
    assert model.most == 2


@pytest.mark.parametrize("concurrency", [0, 1.5, True, "2"])
def test_an_embedder_concurrency_that_is_not_a_whole_number_from_1_is_refused(concurrency: object) -> None:
    model = type("Hosted", (Concepts,), {"concurrency": concurrency})()
    with pytest.raises(ConfigurationError, match="concurrency is how many of its embed calls may run at once"):
        RememberPlugin.init(type="memory", search=True, embedder=model)


def test_an_embedders_concurrency_sets_the_turns_at_once() -> None:
    hosted = type("Hosted", (Concepts,), {"concurrency": 4})()
    assert Semantic(hosted).scheduler.slots == 4
    assert Semantic(Concepts()).scheduler.slots == 1


async def test_a_turn_given_up_while_it_waits_holds_up_nobody() -> None:
    scheduler = EmbedScheduler()
    order: list[str] = []
    held = anyio.Event()

    async def take(caller: str, hold: bool = False) -> None:
        async with scheduler.turn(caller, query=False, wait=60):
            order.append(caller)
            if hold:
                await held.wait()

    async with anyio.create_task_group() as group:
        group.start_soon(take, "nour", True)
        await until(lambda: order == ["nour"])
        async with anyio.create_task_group() as leaving:
            leaving.start_soon(take, "sam")
            await until(lambda: scheduler.waiting == 1)
            leaving.cancel_scope.cancel()  # Sam's call ends (its client went away) while it waits
        group.start_soon(take, "lea")
        await until(lambda: scheduler.waiting == 1)
        held.set()
    assert order == ["nour", "lea"]
    assert scheduler.waiting == 0
    async with scheduler.turn("sam", query=False, wait=0):  # every slot free again: no wait at all
        pass
