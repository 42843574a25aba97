"""History messages carry their own event time (issue 41, item 1): ``at`` given with a message (or to
``append(at=...)``) is kept, returned, and what search's since/until and the query's own dates keep messages by,
across conversations and within one; through the real HTTP stack, both eras, on the memory store and SQLite."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from history.test_history import KEYS, PROTOCOLS, desk, sqlite
from mcpkit import ManualClock, Server, StaticKeys, ToolContext, app, iso_time, tool
from mcpkit.testing import ToolCallError, running
from mcpkit_history import HistoryPlugin

#: When the log being imported was said: 14 March 2023, long before the server's clock.
MARCH = datetime(2023, 3, 14, 9, 30, tzinfo=UTC).timestamp()
JUNE = datetime(2023, 6, 2, 18, 0, tzinfo=UTC).timestamp()


@tool(name="replay", description="Save a chat log said at one time, with self.history.append(at=...).")
class Replay(ToolContext):
    async def execute(self, conversation: str, texts: list[str], at: str) -> list[str]:
        messages = [{"role": "user", "content": text} for text in texts]
        return await self.history.append(conversation, messages, at=at)


def plugin(kind: str, tmp_path: Path) -> HistoryPlugin:
    return sqlite(tmp_path) if kind == "sqlite" else HistoryPlugin.init(type="memory", tools=True)


def contents(found: dict[str, Any]) -> list[str]:
    return [hit["message"]["content"] for hit in found["results"]]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_a_message_said_earlier_is_found_by_when_it_was_said_not_when_saved(
    protocol: str, kind: str, tmp_path: Path
) -> None:
    clock = ManualClock(start=datetime(2024, 1, 10, tzinfo=UTC).timestamp())
    server = desk(plugin(kind, tmp_path))
    async with running(server, protocol=protocol, clock=clock) as call_as:
        nour = call_as("nour")
        old = [
            {"role": "user", "content": "The boiler broke down.", "at": iso_time(MARCH)},
            {"role": "assistant", "content": "A technician comes Friday.", "at": MARCH + 60},
        ]
        await nour.call("save_messages", {"conversation": "T-1", "messages": old})
        await nour.call(
            "save_messages", {"conversation": "T-1", "messages": [{"role": "user", "content": "Boiler fine."}]}
        )
        await nour.call(
            "save_messages", {"conversation": "T-2", "messages": [{"role": "user", "content": "Boiler again."}]}
        )
        loaded = await nour.call("load_history", {"conversation": "T-1"})
        in_march = await nour.call("search_history", {"query": "boiler", "since": "2023-03-01", "until": "2023-03-31"})
        asked = await nour.call("search_history", {"query": "what about the boiler in March 2023?"})
        within = await nour.call("search_history", {"query": "boiler in March 2023", "conversation": "T-1"})
        this_year = await nour.call("search_history", {"query": "boiler this year"})
        with pytest.raises(ToolCallError) as refused:
            await nour.call(
                "save_messages", {"conversation": "T-1", "messages": [{"role": "user", "content": "x", "at": "soon"}]}
            )
    said = [(message["content"], message["at"]) for message in loaded["messages"]]
    saved_at = iso_time(clock.now())
    assert said == [
        ("The boiler broke down.", iso_time(MARCH)),
        ("A technician comes Friday.", iso_time(MARCH + 60)),
        ("Boiler fine.", saved_at),  # no at of its own: said when it was saved
    ]
    assert all(message["created_at"] == saved_at for message in loaded["messages"])  # all saved today
    assert contents(in_march) == ["The boiler broke down."]
    # The query's own date ranks what was said then first, though the text holds none; it leaves nothing out.
    assert contents(asked)[0] == "The boiler broke down."
    assert sorted(contents(asked)) == ["Boiler again.", "Boiler fine.", "The boiler broke down."]
    assert contents(within) == ["The boiler broke down.", "Boiler fine."]
    assert sorted(contents(this_year)[:2]) == ["Boiler again.", "Boiler fine."]
    assert contents(this_year)[2] == "The boiler broke down."
    assert "messages[0]: at is an ISO 8601 date or time" in refused.value.message


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_append_at_dates_each_message_without_its_own(kind: str, tmp_path: Path) -> None:
    @app(id="desk", tools=[Replay], plugins=[plugin(kind, tmp_path)])
    class Desk: ...

    clock = ManualClock(start=datetime(2024, 1, 10, tzinfo=UTC).timestamp())
    async with running(Server([Desk], auth=StaticKeys(KEYS)), clock=clock) as call_as:
        nour = call_as("nour")
        await nour.call(
            "replay",
            {"conversation": "T-5", "texts": ["Kettle ordered.", "Kettle paid."], "at": "2023-06-02T18:00:00Z"},
        )
        loaded = await nour.call("load_history", {"conversation": "T-5"})
        june = await nour.call("search_history", {"query": "kettle", "since": "2023-06-02", "until": "2023-06-02"})
        may = await nour.call("search_history", {"query": "kettle", "until": "2023-05-31"})
        with pytest.raises(ToolCallError) as refused:
            await nour.call("replay", {"conversation": "T-5", "texts": ["x"], "at": "10000-01-01"})
    assert [message["at"] for message in loaded["messages"]] == [iso_time(JUNE)] * 2
    assert sorted(contents(june)) == ["Kettle ordered.", "Kettle paid."]
    assert contents(may) == []
    assert refused.value.message.startswith("append(at=...): at is an ISO 8601 date")
