"""The help desk's ticket conversations (issue 13): each ticket's exchange with its customer is kept per agent
and comes back after a restart on SQLite; each agent's notes block is their own; the runbooks load whole."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

from mcpkit import Server
from mcpkit.testing import CallAs, ToolCallError, error_code
from mcpkit_helpdesk import DEMO_KEYS, NOTES_TOKENS, RUNBOOKS, create_server

Serve = Callable[[Server], AbstractAsyncContextManager[CallAs]]


async def test_a_tickets_conversation_survives_a_restart_and_stays_the_agents_own(serve: Serve, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'desk.db'}"
    exchange = [
        {"role": "user", "content": "My kettle arrived broken."},
        {"role": "assistant", "content": "Sorry to hear that. Could you send a photo?"},
    ]
    async with serve(create_server(store, keys=DEMO_KEYS)) as call_as:
        await call_as("nour").call("save_messages", {"conversation": "T-1", "messages": exchange})

    async with serve(create_server(store, keys=DEMO_KEYS)) as call_as:
        nours = await call_as("nour").call("load_history", {"conversation": "T-1"})
        sams = await call_as("sam").call("load_history", {"conversation": "T-1"})
        found = await call_as("nour").call("search_history", {"query": "broken kettles"})

    assert [message["content"] for message in nours["messages"]] == [message["content"] for message in exchange]
    assert sams["messages"] == []
    assert found["results"][0]["conversation"] == "T-1"


async def test_each_agent_has_a_notes_block_and_the_runbooks_load(call_as: CallAs) -> None:
    nour, sam = call_as("nour"), call_as("sam")
    written = await nour.call("set_context", {"block": "notes", "content": "T-1's customer prefers email."})
    runbook = await nour.call("load_context", {"block": "runbooks", "key": "refunds"})
    nours = (await nour.get_prompt("system_prompt")).messages[0].content.text  # type: ignore[union-attr]
    sams = (await sam.get_prompt("system_prompt")).messages[0].content.text  # type: ignore[union-attr]
    try:
        await sam.call("set_context", {"block": "notes", "content": "word " * 2 * NOTES_TOKENS})
        code = None
    except ToolCallError as error:
        code = error_code(error.result)

    assert written["max_tokens"] == NOTES_TOKENS
    assert runbook["content"] == RUNBOOKS["refunds"].content
    assert "T-1's customer prefers email." in nours
    assert "prefers email" not in sams
    assert "- outage: Outage — What to tell customers while the service is down" in sams
    assert code == "CONTEXT_OVER_BUDGET"
