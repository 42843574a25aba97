"""Conversation history (issue 13): ``HistoryPlugin`` and its six tools through the real HTTP stack, both eras,
with named users — the seed-000 scenario across a restart, branches and leaf walks, ids that never reach across
callers or conversations, search isolation, compaction keeping the originals, retention, and purge."""

from __future__ import annotations

import contextlib
import re
import sqlite3
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcpkit import Caller, ManualClock, Server, StaticKeys, ToolContext, app, iso_time, tool
from mcpkit.testing import CallAs, ToolCallError, error_code, running
from mcpkit_history import HistoryPlugin
from mcpkit_storage._cli import purge_user
from mcpkit_storage.sealing._keyring import Keyring
from mcpkit_storage.stores.sqlite._sqlite_store import SQLiteStore

KEYS = {"nour": "nour-key-0123456789abcdef", "sam": "sam-key-0123456789abcdef"}
SECRET = "history-secret-0123456789abcdef"
PROTOCOLS = ["2026-07-28", "2025-11-25"]


@tool(name="whoami", description="The caller's user id.")
class WhoAmI(ToolContext):
    async def execute(self) -> str:
        return str(self.caller.user_id)


@tool(name="original", description="A conversation as saved, without its summaries.")
class Original(ToolContext):
    async def execute(self, conversation: str) -> list[dict[str, Any]]:
        return await self.history.get(conversation, compacted=False)


def desk(plugin: HistoryPlugin, **options: Any) -> Server:
    @app(id="desk", tools=[WhoAmI, Original], plugins=[plugin])
    class Desk: ...

    return Server([Desk], auth=StaticKeys(KEYS), **options)


def sqlite(path: Path) -> HistoryPlugin:
    return HistoryPlugin.init(type="sqlite", path=path / "history.db", secret=SECRET, tools=True)


def texts(messages: list[dict[str, Any]]) -> list[str]:
    return [message["content"] for message in messages]


async def save(call_as: CallAs, who: str, conversation: str, *turns: str, **options: Any) -> list[str]:
    roles = ["user", "assistant"]
    messages = [{"role": roles[number % 2], "content": text} for number, text in enumerate(turns)]
    saved = await call_as(who).call("save_messages", {"conversation": conversation, "messages": messages, **options})
    return list(saved["ids"])


async def load(call_as: CallAs, who: str, conversation: str, **options: Any) -> dict[str, Any]:
    return dict(await call_as(who).call("load_history", {"conversation": conversation, **options}))


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_the_codename_comes_back_after_the_server_restarts(tmp_path: Path, protocol: str) -> None:
    async with running(desk(sqlite(tmp_path)), protocol=protocol) as call_as:
        await save(call_as, "nour", "chat-1", "My project codename is Cedar.", "Noted: your codename is Cedar.")

    async with running(desk(sqlite(tmp_path)), protocol=protocol) as call_as:  # a new process, the same file
        history = await load(call_as, "nour", "chat-1")
        theirs = await load(call_as, "sam", "chat-1")

    assert texts(history["messages"]) == ["My project codename is Cedar.", "Noted: your codename is Cedar."]
    assert [m["role"] for m in history["messages"]] == ["user", "assistant"]
    first, second = history["messages"]
    assert first["parent_id"] is None
    assert second["parent_id"] == first["id"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", second["created_at"])  # ISO 8601, UTC
    assert theirs["messages"] == []  # Sam has a conversation of that name too: his own, empty


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_saving_after_a_message_with_a_reply_starts_a_branch_and_any_leaf_can_be_walked(protocol: str) -> None:
    async with running(desk(HistoryPlugin.init(type="memory", tools=True)), protocol=protocol) as call_as:
        question, first_answer = await save(call_as, "nour", "T-7", "Can I get a refund?", "No.")
        [second_answer] = await save(call_as, "nour", "T-7", "Yes, within 30 days.", parent_id=question)
        [follow_up] = await save(call_as, "nour", "T-7", "How?")  # after the newest leaf: the second answer
        newest = await load(call_as, "nour", "T-7")
        older = await load(call_as, "nour", "T-7", leaf_id=first_answer)
        last_two = await load(call_as, "nour", "T-7", limit=2)
        listed = await call_as("nour").call("list_conversations")

    assert texts(newest["messages"]) == ["Can I get a refund?", "Yes, within 30 days.", "How?"]
    assert newest["messages"][2]["parent_id"] == second_answer
    assert newest["leaves"] == [{"id": follow_up, "depth": 3}, {"id": first_answer, "depth": 2}]
    assert texts(older["messages"]) == ["Can I get a refund?", "No."]
    assert texts(last_two["messages"]) == ["Yes, within 30 days.", "How?"]
    [conversation] = listed["conversations"]
    assert (conversation["conversation"], conversation["messages"], conversation["branches"]) == ("T-7", 4, 2)


async def test_a_parent_from_another_conversation_or_another_caller_is_not_found() -> None:
    async with running(desk(HistoryPlugin.init(type="memory", tools=True))) as call_as:
        [nours] = await save(call_as, "nour", "T-1", "Nour's question")
        [other] = await save(call_as, "nour", "T-2", "Another conversation")
        with pytest.raises(ToolCallError) as across_callers:
            await save(call_as, "sam", "T-1", "Sam replying under Nour's message", parent_id=nours)
        with pytest.raises(ToolCallError) as across_conversations:
            await save(call_as, "nour", "T-1", "Under T-2's message", parent_id=other)
        with pytest.raises(ToolCallError) as unknown_leaf:
            await load(call_as, "sam", "T-1", leaf_id=nours)
        sams = await load(call_as, "sam", "T-1")

    for refused in (across_callers, across_conversations, unknown_leaf):
        assert error_code(refused.value.result) == "HISTORY_NOT_FOUND"
    assert "Nour's question" not in str(across_callers.value)
    assert sams["messages"] == []  # nothing of Sam's was written


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_search_finds_only_the_callers_own_messages_best_first(protocol: str) -> None:
    async with running(desk(HistoryPlugin.init(type="memory", tools=True)), protocol=protocol) as call_as:
        await save(call_as, "nour", "T-1", "The customer wants a refund for the broken kettle.", "Refund approved.")
        await save(call_as, "nour", "T-2", "Deployment moved to Friday.")
        await save(call_as, "sam", "T-9", "Sam's customer also asked about refunds.")
        nours = await call_as("nour").call("search_history", {"query": "refunded"})
        in_t2 = await call_as("nour").call("search_history", {"query": "refund friday", "conversation": "T-2"})
        sams = await call_as("sam").call("search_history", {"query": "kettle refund"})

    found = [(hit["conversation"], hit["message"]["content"]) for hit in nours["results"]]
    assert found == [("T-1", "Refund approved."), ("T-1", "The customer wants a refund for the broken kettle.")]
    assert nours["results"][0]["score"] >= nours["results"][1]["score"] > 0
    assert [hit["message"]["content"] for hit in in_t2["results"]] == ["Deployment moved to Friday."]
    assert [hit["message"]["content"] for hit in sams["results"]] == ["Sam's customer also asked about refunds."]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_search_keeps_the_messages_of_the_window_asked(protocol: str, kind: str, tmp_path: Path) -> None:
    """Across every conversation and within one, filtered before the ranking's cut: the one refund message of the
    second day is found at limit 1 though twelve older ones say refund more often."""
    clock = ManualClock()
    plugin = sqlite(tmp_path) if kind == "sqlite" else HistoryPlugin.init(type="memory", tools=True)
    async with running(desk(plugin), protocol=protocol, clock=clock) as call_as:
        for number in range(12):
            await save(call_as, "nour", f"T-{number}", "Refund, refund, refund the kettle.")
        first_day = clock.now()
        clock.advance(86_400)
        await save(call_as, "nour", "T-0", "A refund, at last, among other words.")
        today = iso_time(clock.now())[:10]
        nour = call_as("nour")
        recent = await nour.call("search_history", {"query": "refund", "limit": 1, "since": today})
        in_t0 = await nour.call("search_history", {"query": "refund", "conversation": "T-0", "since": today})
        before = await nour.call("search_history", {"query": "refund", "until": iso_time(first_day + 1)})
        with pytest.raises(ToolCallError) as refused:
            await nour.call("search_history", {"query": "refund", "since": "yesterday"})
    assert [hit["message"]["content"] for hit in recent["results"]] == ["A refund, at last, among other words."]
    assert [hit["message"]["content"] for hit in in_t0["results"]] == ["A refund, at last, among other words."]
    assert len(before["results"]) == 10
    assert all("kettle" in hit["message"]["content"] for hit in before["results"])
    assert "ISO 8601" in refused.value.message


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_compaction_replaces_the_start_in_what_is_loaded_and_keeps_the_originals(protocol: str) -> None:
    async with running(desk(HistoryPlugin.init(type="memory", tools=True)), protocol=protocol) as call_as:
        ids = await save(call_as, "nour", "T-3", "Order 1142 arrived damaged.", "Sorry! Photo please?", "Sent.", "Ok.")
        compacted = await call_as("nour").call(
            "compact_history",
            {"conversation": "T-3", "through_id": ids[1], "summary": "Order 1142 arrived damaged; photo asked."},
        )
        loaded = await load(call_as, "nour", "T-3")
        original = await call_as("nour").call("original", {"conversation": "T-3"})
        searched = await call_as("nour").call("search_history", {"query": "damaged order"})

    summary, *rest = loaded["messages"]
    assert summary == {
        "id": compacted["summary_id"],
        "role": "system",
        "content": "Order 1142 arrived damaged; photo asked.",
        "summary_of": ids[1],
        "created_at": summary["created_at"],
        "at": summary["created_at"],  # said when it was saved
    }
    assert texts(rest) == ["Sent.", "Ok."]
    assert texts(original["result"]) == ["Order 1142 arrived damaged.", "Sorry! Photo please?", "Sent.", "Ok."]
    found = {hit["message"]["content"] for hit in searched["results"]}
    assert found >= {"Order 1142 arrived damaged.", "Order 1142 arrived damaged; photo asked."}


async def test_messages_are_checked_and_an_anonymous_caller_is_refused() -> None:
    server = desk(HistoryPlugin.init(type="memory", tools=True, max_message_bytes=100), allow_anonymous=True)
    async with running(server) as call_as:
        problems = {}
        for label, messages in {
            "role": [{"role": "robot", "content": "hi"}],
            "size": [{"role": "user", "content": "x" * 200}],
            "part": [{"role": "user", "content": [{"type": "image", "url": "x"}]}],
            "extra": [{"role": "user", "content": "hi", "name": "Nour"}],
        }.items():
            with pytest.raises(ToolCallError) as refused:
                await call_as("nour").call("save_messages", {"conversation": "T-1", "messages": messages})
            problems[label] = (error_code(refused.value.result), str(refused.value))
        with pytest.raises(ToolCallError) as anonymous:
            await save(call_as, None, "T-1", "hello")  # type: ignore[arg-type]
        nothing = await load(call_as, "nour", "T-1")

    assert {code for code, _ in problems.values()} == {"HISTORY_INVALID"}
    assert "role is one of user, assistant, system, tool" in problems["role"][1]
    assert "may have at most 100" in problems["size"][1]
    assert "type is text, tool_call or tool_result" in problems["part"][1]
    assert "a message has id (optional), role, content and at (optional)" in problems["extra"][1]
    assert error_code(anonymous.value.result) == "REMEMBER_IDENTITY_REQUIRED"
    assert nothing["messages"] == []


async def test_tool_calls_and_results_are_kept_as_parts() -> None:
    turn = [
        {"role": "user", "content": "Weather in Lyon?"},
        {
            "role": "assistant",
            "content": [{"type": "tool_call", "id": "c1", "name": "weather", "arguments": {"city": "Lyon"}}],
        },
        {"role": "tool", "content": [{"type": "tool_result", "tool_call_id": "c1", "content": "21 C, sunny"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "It is 21 C and sunny in Lyon."}]},
    ]
    async with running(desk(HistoryPlugin.init(type="memory", tools=True))) as call_as:
        await call_as("nour").call("save_messages", {"conversation": "c", "messages": turn})
        loaded = await load(call_as, "nour", "c")
        found = await call_as("nour").call("search_history", {"query": "sunny", "conversation": "c"})

    assert [message["content"] for message in loaded["messages"]] == [message["content"] for message in turn]
    assert {hit["message"]["role"] for hit in found["results"]} == {"tool", "assistant"}


async def test_each_message_is_kept_ttl_seconds_and_clear_deletes_everything() -> None:
    clock = ManualClock()
    async with running(desk(HistoryPlugin.init(type="memory", tools=True)), clock=clock) as call_as:
        await save(call_as, "nour", "T-4", "Short-lived question", ttl_seconds=60)
        clock.advance(30)
        await save(call_as, "nour", "T-4", "Later answer")  # the conversation's ttl applies to it too
        clock.advance(40)
        after_70 = await load(call_as, "nour", "T-4")
        await save(call_as, "nour", "T-5", "Kept", "Also kept")
        cleared = await call_as("nour").call("clear_history", {"conversation": "T-5"})
        gone = await load(call_as, "nour", "T-5")
        searched = await call_as("nour").call("search_history", {"query": "kept"})
        again = await call_as("nour").call("clear_history", {"conversation": "T-5"})

    assert texts(after_70["messages"]) == ["Later answer"]
    assert cleared["deleted"] == 2
    assert gone["messages"] == []
    assert searched["results"] == []
    assert again["deleted"] == 0


async def test_a_conversation_started_again_after_a_clear_is_created_when_its_first_message_is_saved() -> None:
    clock = ManualClock(start=1_800_000_000)
    async with running(desk(HistoryPlugin.init(type="memory", tools=True)), clock=clock) as call_as:
        await save(call_as, "nour", "T-7", "The first conversation")
        clock.advance(100)
        await call_as("nour").call("clear_history", {"conversation": "T-7"})
        clock.advance(20)  # within the 60 s the cleared conversation's empty record is kept
        await save(call_as, "nour", "T-7", "A new conversation of the same name")
        [listed] = (await call_as("nour").call("list_conversations"))["conversations"]

    assert listed["created_at"] == listed["updated_at"] == "2027-01-15T08:02:00.000Z"  # 1_800_000_120
    assert listed["messages"] == 1


async def test_the_tools_give_times_in_iso_8601_utc_and_self_history_in_seconds() -> None:
    clock = ManualClock(start=1_800_000_000.25)
    async with running(desk(HistoryPlugin.init(type="memory", tools=True)), clock=clock) as call_as:
        await save(call_as, "nour", "T-8", "The kettle leaks.")
        clock.advance(60)
        await save(call_as, "nour", "T-8", "Since Monday.")
        loaded = await load(call_as, "nour", "T-8")
        found = await call_as("nour").call("search_history", {"query": "kettle"})
        [listed] = (await call_as("nour").call("list_conversations"))["conversations"]
        in_code = (await call_as("nour").call("original", {"conversation": "T-8"}))["result"]

    assert [m["created_at"] for m in loaded["messages"]] == ["2027-01-15T08:00:00.250Z", "2027-01-15T08:01:00.250Z"]
    assert found["results"][0]["message"]["created_at"] == "2027-01-15T08:00:00.250Z"
    assert (listed["created_at"], listed["updated_at"]) == ("2027-01-15T08:00:00.250Z", "2027-01-15T08:01:00.250Z")
    assert [m["created_at"] for m in in_code] == [1_800_000_000.25, 1_800_000_060.25]


async def test_a_cleared_conversation_counts_against_the_quota_until_its_record_goes(tmp_path: Path) -> None:
    clock = ManualClock()
    plugin = HistoryPlugin.init(
        type="sqlite", path=tmp_path / "history.db", secret=SECRET, tools=True, max_total_messages=3
    )
    refused: list[str] = []
    async with running(desk(plugin), clock=clock) as call_as:
        for number in range(6):  # save and clear: each cycle leaves the empty record of a cleared conversation
            try:
                await save(call_as, "nour", f"c-{number}", "to be cleared")
            except ToolCallError as error:
                refused.append(error.code)
                continue
            await call_as("nour").call("clear_history", {"conversation": f"c-{number}"})
        records = rows(tmp_path)
        clock.advance(61)  # the empty records have gone: new conversations are welcome again
        await save(call_as, "nour", "c-again", "kept")
        listed = await call_as("nour").call("list_conversations")

    assert refused == ["REMEMBER_QUOTA_EXCEEDED"] * 3
    assert records <= 3
    assert [item["conversation"] for item in listed["conversations"]] == ["c-again"]


def rows(directory: Path) -> int:
    """How many records the SQLite store holds, expired or not."""
    with contextlib.closing(sqlite3.connect(directory / "history.db")) as database:
        return int(database.execute("SELECT count(*) FROM remember_entries").fetchone()[0])


async def test_purge_of_a_user_reaches_their_history_and_nothing_else(tmp_path: Path) -> None:
    async with running(desk(sqlite(tmp_path))) as call_as:
        await save(call_as, "nour", "T-1", "Nour's secret plan")
        await save(call_as, "sam", "T-1", "Sam's plan")
        nour_id = await call_as("nour").call("whoami")

    store = SQLiteStore(str(tmp_path / "history.db"))
    await store.open()
    try:
        report = await purge_user(store, Keyring([SECRET]), nour_id)
    finally:
        await store.close()

    async with running(desk(sqlite(tmp_path))) as call_as:
        nours = await load(call_as, "nour", "T-1")
        searched = await call_as("nour").call("search_history", {"query": "plan"})
        listed = await call_as("nour").call("list_conversations")
        sams = await load(call_as, "sam", "T-1")

    assert report.deleted == 2  # the message and the conversation's tree
    assert nours["messages"] == []
    assert searched["results"] == []
    assert listed["conversations"] == []
    assert texts(sams["messages"]) == ["Sam's plan"]


async def test_nothing_is_readable_in_the_database_file(tmp_path: Path) -> None:
    async with running(desk(sqlite(tmp_path))) as call_as:
        await save(call_as, "nour", "codename-chat", "My project codename is Cedar.")

    raw = database_bytes(tmp_path)
    for word in (b"Cedar", b"codename", b"project", b"user", b"nour"):
        assert word not in raw


def database_bytes(directory: Path) -> bytes:
    """The SQLite database and its write-ahead log, as one byte string."""
    return b"".join(path.read_bytes() for path in directory.iterdir() if path.name.startswith("history.db"))


async def test_without_a_summary_the_clients_own_model_writes_it_or_the_agent_is_told_to() -> None:
    asked: list[str] = []

    async def model(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        asked.append(params.messages[0].content.text)  # type: ignore[union-attr]
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="Kettle refund agreed."), model="m"
        )

    asgi = desk(HistoryPlugin.init(type="memory", tools=True)).http_app()
    headers = {"Authorization": f"Bearer {KEYS['nour']}"}
    url = "http://127.0.0.1:8000/mcp"
    async with asgi.router.lifespan_context(asgi):
        http = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=asgi), headers=headers)
        async with http:
            async with Client(streamable_http_client(url, http_client=http), mode="2026-07-28") as plain:
                saved = await plain.call_tool(
                    "save_messages",
                    {"conversation": "T-8", "messages": [{"role": "user", "content": "Refund my kettle"}]},
                )
                through = saved.structured_content["ids"][0]  # type: ignore[index]
                refused = await plain.call_tool("compact_history", {"conversation": "T-8", "through_id": through})
            connecting = streamable_http_client(url, http_client=http)
            async with Client(connecting, mode="2026-07-28", sampling_callback=model) as sampling:
                compacted = await sampling.call_tool("compact_history", {"conversation": "T-8", "through_id": through})
                loaded = await sampling.call_tool("load_history", {"conversation": "T-8"})

    assert refused.is_error
    assert "Give summary: this client cannot be asked to write one" in str(refused.content)
    assert not compacted.is_error
    assert len(asked) == 1
    assert "user: Refund my kettle" in asked[0]
    [summary] = loaded.structured_content["messages"]  # type: ignore[index]
    assert summary["content"] == "Kettle refund agreed."
    assert summary["summary_of"] == through


async def test_a_message_whose_save_never_reached_the_tree_is_never_shown_nor_found() -> None:
    server = desk(HistoryPlugin.init(type="memory", tools=True))
    async with running(server) as call_as:
        await save(call_as, "nour", "T-1", "The refund was approved.")
        plugin = next(p for p in server._plugins if isinstance(p, HistoryPlugin))
        caller = SimpleNamespace(caller=await whoami_caller(call_as), kind="tool", name="t")
        history = plugin.history_for(caller)  # type: ignore[arg-type]
        _, place = history._places()
        now = server.clock.now()  # as a save that died between writing its message and changing the tree
        await plugin._backing.vault.write(
            place, "T-1/m_orphan", '{"role":"user","content":"refund orphan"}', None, now, None
        )
        found = await call_as("nour").call("search_history", {"query": "refund"})
        loaded = await load(call_as, "nour", "T-1")

    assert [hit["message"]["content"] for hit in found["results"]] == ["The refund was approved."]
    assert texts(loaded["messages"]) == ["The refund was approved."]


async def whoami_caller(call_as: CallAs) -> Caller:
    user_id = await call_as("nour").call("whoami")
    return Caller(user_id, "static", "nour", {}, None, "2026-07-28", "anon:nour")


async def test_a_message_kept_forever_outlives_a_later_shorter_ttl() -> None:
    clock = ManualClock()
    async with running(desk(HistoryPlugin.init(type="memory", tools=True)), clock=clock) as call_as:
        await save(call_as, "nour", "T-6", "Kept until forgotten")
        await save(call_as, "nour", "T-6", "Short-lived", ttl_seconds=60)
        clock.advance(61)
        loaded = await load(call_as, "nour", "T-6")
        cleared = await call_as("nour").call("clear_history", {"conversation": "T-6"})

    assert texts(loaded["messages"]) == ["Kept until forgotten"]  # the tree did not expire with the later message
    assert cleared["deleted"] == 2


async def test_a_save_past_the_quota_leaves_nothing_behind() -> None:
    plugin = HistoryPlugin.init(type="memory", tools=True, max_total_messages=5)
    async with running(desk(plugin)) as call_as:
        with pytest.raises(ToolCallError) as refused:
            await save(call_as, "nour", "T-1", *(f"message {number}" for number in range(6)))
        after = await save(call_as, "nour", "T-1", "one", "two", "three", "four", "five")  # the whole quota left
        searched = await call_as("nour").call("search_history", {"query": "message"})

    assert error_code(refused.value.result) == "REMEMBER_QUOTA_EXCEEDED"
    assert len(after) == 5
    assert searched["results"] == []


async def test_a_callers_id_cannot_take_a_summarys_place_and_a_resent_save_is_one_save() -> None:
    async with running(desk(HistoryPlugin.init(type="memory", tools=True))) as call_as:
        nour = call_as("nour")
        [first] = await save(call_as, "nour", "T-2", "The refund is approved.")
        summary = await nour.call("compact_history", {"conversation": "T-2", "through_id": first, "summary": "Ok."})
        with pytest.raises(ToolCallError) as taken:
            await nour.call(
                "save_messages",
                {"conversation": "T-2", "messages": [{"id": summary["summary_id"], "role": "user", "content": "x"}]},
            )
        mine = {"conversation": "T-2", "messages": [{"id": "turn-7", "role": "user", "content": "Thanks!"}]}
        await nour.call("save_messages", mine)
        await nour.call("save_messages", mine)  # the client resends after losing the answer
        with pytest.raises(ToolCallError) as changed:
            await nour.call(
                "save_messages", {"conversation": "T-2", "messages": [{"id": "turn-7", "role": "user", "content": "?"}]}
            )
        loaded = await load(call_as, "nour", "T-2")

    assert error_code(taken.value.result) == "HISTORY_INVALID"
    assert error_code(changed.value.result) == "HISTORY_INVALID"
    assert texts(loaded["messages"]) == ["Ok.", "Thanks!"]


async def test_a_sessions_conversation_lives_at_most_session_ttl() -> None:
    clock = ManualClock()
    plugin = HistoryPlugin.init(type="memory", tools=True, scope="session", session_ttl=60)
    async with running(desk(plugin), clock=clock, protocol="2025-11-25") as call_as:
        await save(call_as, "nour", "chat", "A session's message")
        kept = await load(call_as, "nour", "chat")
        clock.advance(61)
        gone = await load(call_as, "nour", "chat")

    assert texts(kept["messages"]) == ["A session's message"]
    assert gone["messages"] == []
