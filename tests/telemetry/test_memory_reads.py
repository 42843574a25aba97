"""What the memory spans and the audit still missed (issue 38, items 3 and 5): a search says how many values it
returned, which (their key hashes, best first) and the mode it used (``hybrid`` falling back to words says so); a
search's query embedding is a span of its own under it; ``remember.info`` is a read (hit or miss, bytes); and
``Vault.swap_many`` is one write span with an event and an audit line per key. Never a value or a plain key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from mcpkit import AuditStore, Server, StaticKeys, Telemetry, ToolContext, app, tool
from mcpkit.testing import running
from mcpkit_remember import RememberPlugin
from mcpkit_storage import Keyring, Place, key_hash, make_store, parse_store_url
from mcpkit_storage.stores.sqlite._sqlite_index import MERGE_EVERY
from mcpkit_storage.vault import ObservedVault, Swap
from remember.test_semantic import Broken, Concepts
from telemetry.recording import PROVIDER

MARKER = "marker-c41d09e7"
SECRET = "remember-secret-for-the-memory-reads-0123456789"
ERAS = ("2025-11-25", "2026-07-28")


@tool(name="recall", description="Keeps two notes, searches them and reads one's provenance.")
class Recall(ToolContext):
    async def execute(self, query: str) -> str:
        await self.remember.set(f"cat:{MARKER}", f"the cat sleeps {MARKER}", scope="user")
        await self.remember.set(f"dog:{MARKER}", f"the dog barks {MARKER}", scope="user")
        found = await self.remember.search(query, scope="user")
        info = await self.remember.info(f"cat:{MARKER}", scope="user")
        missing = await self.remember.info(f"bird:{MARKER}", scope="user")
        return f"{len(found)} {info is not None} {missing is None} {found.note is not None}"


def recalling(tmp_path: Path, audit: AuditStore, embedder: Any = None) -> Server:
    plugin = RememberPlugin.init(
        type="sqlite", path=tmp_path / "kept.db", secret=SECRET, search=True, history=0, embedder=embedder
    )

    @app(id="notes", tools=[Recall], plugins=[plugin])
    class Notes: ...

    return Server(
        [Notes],
        auth=StaticKeys({"nour": "nour-key-0123456789"}),
        tracer_provider=PROVIDER,
        audit=audit,
        telemetry_key_labels=True,
    )


def under(spans: InMemorySpanExporter, parent: ReadableSpan) -> list[ReadableSpan]:
    assert parent.context is not None
    finished = spans.get_finished_spans()
    return [s for s in finished if s.parent is not None and s.parent.span_id == parent.context.span_id]


@pytest.mark.parametrize("protocol", ERAS)
async def test_a_search_says_what_it_returned_and_its_query_embedding_is_a_span_under_it(
    protocol: str, tmp_path: Path, spans: InMemorySpanExporter
) -> None:
    audit = AuditStore(tmp_path / "audit.db")
    async with running(recalling(tmp_path, audit, Concepts()), protocol=protocol) as call_as:
        result = await call_as("nour").call("recall", {"query": "cat"})
    assert "True True False" in str(result)  # found, info hit, info miss, no fallback note
    [call] = [s for s in spans.get_finished_spans() if s.name == "tools/call recall"]
    [search] = [s for s in under(spans, call) if s.name == "search sqlite"]
    attributes = dict(search.attributes or {})
    assert attributes["mcpkit.search.mode"] == "hybrid"
    assert "mcpkit.search.requested_mode" not in attributes  # used as asked
    returned = [dict(event.attributes or {}) for event in search.events]
    count = attributes["mcpkit.memory.count"]
    assert isinstance(count, int)
    assert count >= 1
    assert len(returned) == count
    cat = key_hash(Keyring([SECRET]), "user", f"cat:{MARKER}")
    assert returned[0] == {"mcpkit.memory.key": cat, "mcpkit.memory.key_label": "cat", "mcpkit.memory.rank": 1}
    assert {event.name for event in search.events} == {"mcpkit.memory.search"}
    [embedded] = [s for s in under(spans, search) if s.name == "embed query"]
    assert embedded.kind == SpanKind.INTERNAL
    assert dict(embedded.attributes or {})["mcpkit.embedding.model"] == "test-concepts"
    assert embedded.end_time is not None
    assert embedded.start_time is not None
    assert embedded.end_time > embedded.start_time
    # the audit: the search's one line names what it returned, best first
    [line] = [line for line in audit.lines() if line["operation"] == "search"]
    assert (line["mode"], line["count"], line["keys"][0], line["key_labels"][0]) == ("hybrid", count, cat, "cat")
    assert MARKER not in repr([(s.name, s.attributes, s.events) for s in spans.get_finished_spans()])
    assert MARKER not in json.dumps(list(audit.lines()))


@pytest.mark.parametrize("protocol", ERAS)
async def test_a_search_that_fell_back_to_words_records_the_mode_it_used_and_the_one_asked(
    protocol: str, tmp_path: Path, spans: InMemorySpanExporter
) -> None:
    audit = AuditStore()
    async with running(recalling(tmp_path, audit, Broken()), protocol=protocol) as call_as:
        result = await call_as("nour").call("recall", {"query": "cat"})
    assert str(result).count("True") == 3  # the search said it went by words
    [search] = [s for s in spans.get_finished_spans() if s.name == "search sqlite"]
    attributes = dict(search.attributes or {})
    assert (attributes["mcpkit.search.mode"], attributes["mcpkit.search.requested_mode"]) == ("lexical", "hybrid")
    [line] = [line for line in audit.lines() if line["operation"] == "search"]
    assert (line["mode"], line["requested_mode"], line["count"]) == ("lexical", "hybrid", 1)


@pytest.mark.parametrize("protocol", ERAS)
async def test_remember_info_is_a_read_with_hit_or_miss_and_bytes(
    protocol: str, tmp_path: Path, spans: InMemorySpanExporter
) -> None:
    audit = AuditStore()
    async with running(recalling(tmp_path, audit), protocol=protocol) as call_as:
        await call_as("nour").call("recall", {"query": "dog"})
    inspected = [dict(s.attributes or {}) for s in spans.get_finished_spans() if s.name == "inspect sqlite"]
    seen = [(a["mcpkit.memory.hit"], a["mcpkit.memory.key_label"]) for a in inspected]
    assert seen == [(True, "cat"), (False, "bird")]
    assert isinstance(inspected[0]["mcpkit.memory.bytes"], int)
    assert inspected[0]["mcpkit.memory.bytes"] > 0
    assert "mcpkit.memory.bytes" not in inspected[1]
    lines = [line for line in audit.lines() if line["db_operation"] == "inspect"]
    assert [(line["operation"], line["hit"]) for line in lines] == [("read", True), ("read", False)]
    assert lines[0]["key"] == key_hash(Keyring([SECRET]), "user", f"cat:{MARKER}")


async def test_swap_many_is_one_write_span_with_an_event_and_an_audit_line_per_key(
    tmp_path: Path, spans: InMemorySpanExporter
) -> None:
    """No tool reaches ``swap_many`` over HTTP (the import command uses it through a plain vault): the observed vault
    is driven here on a real SQLite store, under a recording span as a call's would be."""
    audit = AuditStore()
    keyring = Keyring([SECRET])
    store = make_store(parse_store_url(f"sqlite:///{tmp_path / 'swapped.db'}"), "")
    await store.open()
    vault = ObservedVault(store, keyring, Telemetry(tracer_provider=PROVIDER, audit=audit), "sqlite")
    user, other = Place('["u","nour"]', "user"), Place('["u","nour"]', "tool.notes")
    now = 1_000.0
    swaps = []
    for place, key in ((user, f"a:{MARKER}"), (other, f"b:{MARKER}")):
        swaps.append(Swap(place, key, await vault.observe(place, key, now), json.dumps(f"v {MARKER}"), None))
    stale = swaps[0]._replace(key=f"c:{MARKER}")  # observed for another key: refused (another writer came first)
    with PROVIDER.get_tracer("test").start_as_current_span("tools/call import"):
        results = await vault.swap_many([*swaps, stale], now, None)
    await store.close()
    assert results == [True, True, False]
    [span] = [s for s in spans.get_finished_spans() if s.name == "swap_many sqlite"]
    events = [dict(event.attributes or {}) for event in span.events]
    assert len(events) == 3
    assert all(event.keys() >= {"mcpkit.memory.key", "mcpkit.memory.scope"} for event in events)
    assert [event["mcpkit.memory.scope"] for event in events] == ["user", "tool", "user"]
    assert events[0]["mcpkit.memory.bytes"] == len(json.dumps(f"v {MARKER}"))
    assert events[2]["mcpkit.memory.hit"] is False
    assert "mcpkit.memory.bytes" not in events[2]
    lines = [line for line in audit.lines() if line["db_operation"] == "swap_many"]  # the observes before: reads
    assert [line["operation"] for line in lines] == ["write"] * 3
    assert [line["key"] for line in lines][:2] == [
        key_hash(keyring, "user", f"a:{MARKER}"),
        key_hash(keyring, "tool.notes", f"b:{MARKER}"),
    ]
    assert MARKER not in json.dumps(list(audit.lines())) + repr([(span.attributes, span.events)])


@tool(name="fill", description="Keeps many notes at once.")
class Fill(ToolContext):
    async def execute(self, count: int) -> str:
        await self.remember.set_many({f"note-{n}:{MARKER}": f"the cat {n}" for n in range(count)}, scope="user")
        return "kept"


@pytest.mark.parametrize("protocol", ERAS)
async def test_index_and_vector_shard_merges_are_spans_of_the_write_that_made_them(
    protocol: str, tmp_path: Path, spans: InMemorySpanExporter
) -> None:
    plugin = RememberPlugin.init(
        type="sqlite", path=tmp_path / "kept.db", secret=SECRET, search=True, history=0, embedder=Concepts()
    )

    @app(id="notes", tools=[Fill], plugins=[plugin])
    class Notes: ...

    server = Server([Notes], auth=StaticKeys({"nour": "nour-key-0123456789"}), tracer_provider=PROVIDER)
    async with running(server, protocol=protocol) as call_as:
        await call_as("nour").call("fill", {"count": MERGE_EVERY})  # the changes after which SQLite merges its index
    [call] = [s for s in spans.get_finished_spans() if s.name == "tools/call fill"]
    [written] = [s for s in under(spans, call) if s.name == "write_many sqlite"]
    inside = under(spans, written)
    [shards] = [s for s in inside if s.name == "merge_shards sqlite"]  # the vectors merged into their shards at once
    assert dict(shards.attributes or {})["mcpkit.memory.count"] == MERGE_EVERY
    merged = [dict(s.attributes or {}) for s in inside if s.name == "merge_index sqlite"]
    assert merged
    assert merged[0]["db.operation.name"] == "merge_index"
    assert MARKER not in repr([(s.name, s.attributes, s.events) for s in spans.get_finished_spans()])


@tool(name="find", description="Searches the caller's notes.")
class Find(ToolContext):
    async def execute(self, query: str) -> str:
        return f"{len(await self.remember.search(query, scope='user'))} found"


async def test_the_shards_a_search_fills_are_a_merge_span_under_the_search(
    tmp_path: Path, spans: InMemorySpanExporter
) -> None:
    auth = StaticKeys({"nour": "nour-key-0123456789"})
    before = RememberPlugin.init(type="sqlite", path=tmp_path / "kept.db", secret=SECRET, search=True, history=0)

    @app(id="notes", tools=[Recall], plugins=[before])
    class WithoutEmbedder: ...

    async with running(Server([WithoutEmbedder], auth=auth)) as call_as:  # values kept with no vectors, no shards
        await call_as("nour").call("recall", {"query": "cat"})
    after = RememberPlugin.init(
        type="sqlite", path=tmp_path / "kept.db", secret=SECRET, search=True, history=0, embedder=Concepts()
    )

    @app(id="notes", tools=[Find], plugins=[after])
    class WithEmbedder: ...

    spans.clear()
    async with running(Server([WithEmbedder], auth=auth, tracer_provider=PROVIDER)) as call_as:
        await call_as("nour").call("find", {"query": "cat"})
    [search] = [s for s in spans.get_finished_spans() if s.name == "search sqlite"]
    [filled] = [s for s in under(spans, search) if s.name == "merge_shards sqlite"]
    assert dict(filled.attributes or {})["mcpkit.memory.count"] == 2  # both values, now in their shards
