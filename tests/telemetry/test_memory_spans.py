"""Spans inside a call (issue 38, item 3): each store operation of remember, history, context blocks and the task
store is a child of the call's SERVER span, with ``db.system.name``, the operation and the scope, and what it read or
wrote (a bulk operation: one event per key on its span); keys hashed (a label only where the app opts in), the caller
only where the app opts in, never a value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from mcpkit import Server, StaticKeys, ToolContext, app, tool
from mcpkit.testing import running
from mcpkit_history import HistoryPlugin
from mcpkit_remember import RememberPlugin
from mcpkit_storage import Keyring, key_hash
from telemetry.recording import PROVIDER

MARKER = "marker-5b0e42f1"
SECRET = "remember-secret-for-the-memory-spans-0123456789"
SYSTEMS = {"memory": "memory", "sqlite": "sqlite", "redis": "redis", "postgres": "postgresql"}


@tool(name="keep", description="Keeps a note, reads it and a missing one back, searches, and forgets it.")
class Keep(ToolContext):
    async def execute(self, key: str, note: str) -> str:
        await self.remember.set(key, note, scope="user")
        kept = await self.remember.get(key, scope="user")
        missing = await self.remember.get(f"{key}-missing", scope="user")
        found = await self.remember.search(note, scope="user")
        await self.remember.forget(key, scope="user")
        return f"kept {kept} {missing} {len(found)}"


def keep_server(store: dict[str, Any], **options: Any) -> Server:
    plugin = RememberPlugin.init(**store, secret=SECRET, search=True, history=0)  # the change history: its own test

    @app(id="notes", tools=[Keep], plugins=[plugin])
    class Notes: ...

    return Server([Notes], auth=StaticKeys({"nour": "nour-key-0123456789"}), tracer_provider=PROVIDER, **options)


@pytest.fixture(params=sorted(SYSTEMS))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    kind = request.param
    if kind == "sqlite":
        return {"type": "sqlite", "path": tmp_path / "kept.db"}
    if kind == "redis":
        return {"type": "redis", "url": request.getfixturevalue("redis_url"), "redis_prefix": "otel:test:"}
    if kind == "postgres":
        return {"type": "postgres", "url": request.getfixturevalue("postgres_url")}
    return {"type": "memory"}


def children(spans: InMemorySpanExporter, call: ReadableSpan) -> list[ReadableSpan]:
    assert call.context is not None
    return [
        span
        for span in spans.get_finished_spans()
        if span.parent is not None and span.parent.span_id == call.context.span_id
    ]


async def test_each_store_operation_of_a_call_is_a_child_span_with_its_store_operation_and_scope(
    store: dict[str, Any], spans: InMemorySpanExporter
) -> None:
    key = f"prefs:{MARKER}"
    async with running(keep_server(store)) as call_as:
        result = await call_as("nour").call("keep", {"key": key, "note": f"note {MARKER}"})
    assert f"kept note {MARKER} None 1" in str(result)
    [call] = [span for span in spans.get_finished_spans() if span.name == "tools/call keep"]
    inside = children(spans, call)
    system = SYSTEMS[store["type"]]
    operations = [span.attributes["db.operation.name"] for span in inside if span.attributes]
    assert operations == ["write", "read", "read", "search", "delete", "delete"]  # forget: the value, its history
    assert [span.name for span in inside] == [f"{operation} {system}" for operation in operations]
    hashed = key_hash(Keyring([SECRET]), "user", key)
    for span in inside:
        attributes = dict(span.attributes or {})
        assert span.kind == SpanKind.CLIENT
        assert attributes["db.system.name"] == system
        assert attributes["mcpkit.memory.scope"] == "user"
        assert "mcpkit.memory.caller" not in attributes
        assert "mcpkit.memory.key_label" not in attributes
    write, hit, miss, search, delete, history = (dict(span.attributes or {}) for span in inside)
    assert write["mcpkit.memory.key"] == hit["mcpkit.memory.key"] == delete["mcpkit.memory.key"] == hashed
    assert write["mcpkit.memory.bytes"] == len(f'"note {MARKER}"')
    assert (hit["mcpkit.memory.hit"], miss["mcpkit.memory.hit"]) == (True, False)
    assert history["mcpkit.memory.key"] != hashed  # the history's own key (it had none: the tool keeps no history)
    assert search["mcpkit.search.mode"] == "lexical"
    assert search["mcpkit.memory.count"] == 1
    returned = [dict(event.attributes or {}) for event in inside[3].events]  # a search: one event per match
    assert returned == [{"mcpkit.memory.key": hashed, "mcpkit.memory.rank": 1}]
    assert not call.events  # the child spans say it: the call's span does not repeat them
    assert not any(span.events for span in inside[:3])  # one key each: its line is on its span
    assert MARKER not in repr([(span.attributes, span.events, span.name) for span in spans.get_finished_spans()])


async def test_the_caller_s_hashed_id_and_the_key_s_label_only_where_the_app_opts_in(
    spans: InMemorySpanExporter,
) -> None:
    server = keep_server({"type": "memory"}, telemetry_callers=True, telemetry_key_labels=True)
    async with running(server) as call_as:
        await call_as("nour").call("keep", {"key": f"prefs:{MARKER}", "note": "n"})
    [call] = [span for span in spans.get_finished_spans() if span.name == "tools/call keep"]
    [write, *_] = children(spans, call)
    attributes = dict(write.attributes or {})
    assert attributes["mcpkit.memory.key_label"] == "prefs"
    caller = attributes["mcpkit.memory.caller"]
    assert isinstance(caller, str)
    assert "nour" not in caller
    assert {dict(span.attributes or {})["mcpkit.memory.caller"] for span in children(spans, call)} == {caller}
    assert MARKER not in repr([(span.attributes, span.events) for span in spans.get_finished_spans()])


async def test_without_a_recording_span_a_call_records_no_memory_span(spans: InMemorySpanExporter) -> None:
    spans.clear()
    server = keep_server({"type": "memory"}, telemetry="propagation")
    async with running(server) as call_as:
        await call_as("nour").call("keep", {"key": "k", "note": "n"})
    assert [span for span in spans.get_finished_spans() if span.name.endswith(" memory")] == []


@tool(name="converse", description="Saves two messages, reads the conversation back and searches it.")
class Converse(ToolContext):
    async def execute(self, text: str) -> str:
        await self.history.append("c-1", [{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}])
        kept = await self.history.get("c-1")
        hits = await self.history.search(text)
        return f"{len(kept)} {len(hits)}"


async def test_history_appends_loads_and_searches_are_memory_spans_of_its_namespace(
    spans: InMemorySpanExporter,
) -> None:
    @app(id="assistant", tools=[Converse], plugins=[HistoryPlugin.init(type="memory", secret=SECRET)])
    class Assistant: ...

    server = Server([Assistant], auth=StaticKeys({"nour": "nour-key-0123456789"}), tracer_provider=PROVIDER)
    async with running(server) as call_as:
        assert "2 1" in str(await call_as("nour").call("converse", {"text": f"refund {MARKER}"}))
    [call] = [span for span in spans.get_finished_spans() if span.name == "tools/call converse"]
    inside = [dict(span.attributes or {}) for span in children(spans, call)]
    namespaces = {attributes.get("mcpkit.memory.namespace") for attributes in inside}
    assert namespaces == {"history", "conversations"}
    operations = {attributes["db.operation.name"] for attributes in inside}
    assert {"read_many", "write", "search"} <= operations
    assert {attributes["db.system.name"] for attributes in inside} == {"memory"}
    assert MARKER not in repr([(span.attributes, span.events) for span in spans.get_finished_spans()])


@tool(name="keep_both", description="Keeps two notes at once.")
class KeepBoth(ToolContext):
    async def execute(self, note: str) -> str:
        await self.remember.set_many({f"a:{MARKER}": note, f"b:{MARKER}": note + "!"}, scope="user")
        return "kept"


async def test_a_bulk_operation_s_span_has_one_event_per_key_with_its_hash_and_bytes(
    spans: InMemorySpanExporter,
) -> None:
    @app(id="both", tools=[KeepBoth], plugins=[RememberPlugin.init(type="memory", secret=SECRET, history=0)])
    class Both: ...

    server = Server([Both], auth=StaticKeys({"nour": "nour-key-0123456789"}), tracer_provider=PROVIDER)
    async with running(server) as call_as:
        await call_as("nour").call("keep_both", {"note": f"note {MARKER}"})
    [call] = [span for span in spans.get_finished_spans() if span.name == "tools/call keep_both"]
    [bulk] = [span for span in children(spans, call) if span.name == "write_many memory"]
    events = [(event.name, dict(event.attributes or {})) for event in bulk.events]
    keyring = Keyring([SECRET])
    assert events == [
        (
            "mcpkit.memory.write",
            {"mcpkit.memory.key": key_hash(keyring, "user", f"{name}:{MARKER}"), "mcpkit.memory.bytes": size},
        )
        for name, size in (("a", len(f'"note {MARKER}"')), ("b", len(f'"note {MARKER}!"')))
    ]
    assert not call.events
    assert MARKER not in repr([(span.attributes, span.events, span.name) for span in spans.get_finished_spans()])
