"""One caller's long conversation never stalls the others (issue 29, point 1): ``load_history`` pages by bytes with a
sealed cursor, a search within one conversation reads a bounded amount, messages are opened and analysed in a worker
thread, and one caller's heavy reads take turns. At small scale here (pages of a few KiB); ``bench/hardening.py``
measures the others' latency while a caller hammers a 60 MB conversation.
"""

from __future__ import annotations

import asyncio
import base64
import threading
import time
from collections import Counter
from typing import Any

import pytest

from history.test_history import PROTOCOLS, desk
from mcpkit.testing import CallAs, ToolCallError, running
from mcpkit_history import HistoryPlugin
from mcpkit_search import Analyzer
from mcpkit_storage import Keyring

KIB = 1024


def plugin(**options: Any) -> HistoryPlugin:
    return HistoryPlugin.init(type="memory", tools=True, **options)


async def save_turns(call_as: CallAs, who: str, conversation: str, texts: list[str]) -> None:
    for text in texts:
        await call_as(who).call(
            "save_messages", {"conversation": conversation, "messages": [{"role": "user", "content": text}]}
        )


def turns(count: int) -> list[str]:
    return [f"turn {number} " + "x" * KIB for number in range(count)]


def first_words(messages: list[dict[str, Any]]) -> list[str]:
    return [" ".join(message["content"].split()[:2]) for message in messages]


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_load_history_pages_a_long_conversation_by_bytes_newest_first(protocol: str) -> None:
    async with running(desk(plugin(max_load_bytes=4 * KIB)), protocol=protocol) as call_as:
        await save_turns(call_as, "nour", "long", turns(10))
        pages = [await call_as("nour").call("load_history", {"conversation": "long"})]
        while pages[-1]["nextCursor"] is not None:
            cursor = pages[-1]["nextCursor"]
            pages.append(await call_as("nour").call("load_history", {"conversation": "long", "cursor": cursor}))

    assert [len(page["messages"]) for page in pages] == [3, 3, 3, 1]  # 1 KiB and a little each: 3 in 4 KiB
    assert first_words(pages[0]["messages"]) == ["turn 7", "turn 8", "turn 9"]
    every = [message for page in reversed(pages) for message in page["messages"]]
    assert first_words(every) == [f"turn {number}" for number in range(10)]


async def test_a_load_history_cursor_is_sealed_and_bound_to_its_caller_and_conversation() -> None:
    async with running(desk(plugin(max_load_bytes=2 * KIB))) as call_as:
        await save_turns(call_as, "nour", "long", turns(4))
        await save_turns(call_as, "sam", "long", turns(4))
        cursor = (await call_as("nour").call("load_history", {"conversation": "long"}))["nextCursor"]
        sealed = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        flipped = base64.urlsafe_b64encode(sealed[:-1] + bytes([sealed[-1] ^ 1])).decode().rstrip("=")
        await save_turns(call_as, "nour", "other", turns(1))
        refusals = []
        for who, conversation, candidate in (
            ("sam", "long", cursor),  # another caller
            ("nour", "other", cursor),  # another conversation
            ("nour", "long", flipped),
            ("nour", "long", cursor[:-5]),
        ):
            with pytest.raises(ToolCallError) as refused:
                await call_as(who).call("load_history", {"conversation": conversation, "cursor": candidate})
            refusals.append(refused.value)
        older = await call_as("nour").call("load_history", {"conversation": "long", "cursor": cursor})
    assert b"turn" not in sealed
    assert {refusal.code for refusal in refusals} == {"HISTORY_INVALID"}
    assert "load it again without a cursor" in refusals[0].message
    assert older["messages"]


async def test_a_search_within_one_conversation_reads_its_newest_max_search_bytes_and_says_so() -> None:
    async with running(desk(plugin(max_search_bytes=4 * KIB))) as call_as:
        await save_turns(call_as, "nour", "long", ["the zebra crossed " + "y" * KIB, *turns(6)])
        within = await call_as("nour").call("search_history", {"query": "zebra", "conversation": "long"})
        recent = await call_as("nour").call("search_history", {"query": "turn", "conversation": "long"})
        everywhere = await call_as("nour").call("search_history", {"query": "zebra"})
    assert within["results"] == []
    assert "Searched the newest 3 messages" in within["note"]
    assert "max_search_bytes" in within["note"]
    assert "Search without a conversation" in within["note"]
    assert len(recent["results"]) == 3
    assert [hit["message"]["content"][:9] for hit in everywhere["results"]] == ["the zebra"]


async def test_messages_are_opened_and_analysed_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    loop_thread = threading.get_ident()
    opened: Counter[bool] = Counter()
    analysed: Counter[bool] = Counter()
    open_sealed, value_counts = Keyring.open, Analyzer.value_counts

    def watched_open(self: Keyring, *args: Any) -> Any:
        opened[threading.get_ident() == loop_thread] += 1
        return open_sealed(self, *args)

    def watched_counts(self: Analyzer, *args: Any) -> Any:
        analysed[threading.get_ident() == loop_thread] += 1
        return value_counts(self, *args)

    async with running(desk(plugin())) as call_as:
        await save_turns(call_as, "nour", "long", turns(40))
        monkeypatch.setattr(Keyring, "open", watched_open)
        monkeypatch.setattr(Analyzer, "value_counts", watched_counts)
        await call_as("nour").call("load_history", {"conversation": "long"})
        await call_as("nour").call("search_history", {"query": "turn", "conversation": "long"})
    assert opened[False] >= 80  # every message, twice
    assert opened[True] <= 4  # the conversation's tree, read once per call (and the leaves)
    assert analysed == Counter({False: 40})


async def test_one_callers_searches_sent_at_once_take_turns(monkeypatch: pytest.MonkeyPatch) -> None:
    running_now: list[int] = [0]
    most: list[int] = [0]
    lock = threading.Lock()
    value_counts = Analyzer.value_counts

    def one_at_a_time(self: Analyzer, *args: Any) -> Any:
        with lock:
            running_now[0] += 1
            most[0] = max(most[0], running_now[0])
        time.sleep(0.002)  # long enough for another search's thread to start analysing, if it could
        try:
            return value_counts(self, *args)
        finally:
            with lock:
                running_now[0] -= 1

    async with running(desk(plugin())) as call_as:
        await save_turns(call_as, "nour", "long", turns(8))
        monkeypatch.setattr(Analyzer, "value_counts", one_at_a_time)
        query = {"query": "turn", "conversation": "long"}
        results = await asyncio.gather(*(call_as("nour").call("search_history", query) for _ in range(4)))
    assert [len(result["results"]) for result in results] == [8] * 4
    assert most[0] == 1


async def test_a_read_queued_past_turn_timeout_behind_the_callers_own_ends_with_history_busy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    analysing, let_go, first = threading.Event(), threading.Event(), [True]
    value_counts = Analyzer.value_counts

    def first_one_stalls(self: Analyzer, *args: Any) -> Any:
        if first[0]:  # Nour's first search: a heavy read that holds her turn until the test lets it go
            first[0] = False
            analysing.set()
            let_go.wait(30)
        return value_counts(self, *args)

    query = {"query": "turn", "conversation": "long"}
    async with running(desk(plugin(), turn_timeout=0.2)) as call_as:
        await save_turns(call_as, "nour", "long", turns(2))
        await save_turns(call_as, "sam", "long", turns(2))
        monkeypatch.setattr(Analyzer, "value_counts", first_one_stalls)
        heavy = asyncio.create_task(call_as("nour").call("search_history", query))
        assert await asyncio.to_thread(analysing.wait, 30)
        with pytest.raises(ToolCallError) as busy:
            await call_as("nour").call("search_history", query)
        sams = await call_as("sam").call("search_history", query)
        let_go.set()
        first_result = await heavy
    assert busy.value.code == "HISTORY_BUSY"
    assert "waited 0.2 seconds for its turn" in busy.value.message
    assert len(sams["results"]) == 2  # another caller's reads never queue behind Nour's
    assert len(first_result["results"]) == 2
