"""What a client sees in tools/list: the tutorial's tool names, input names and result shapes."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.testing import CallAs

HELP_DESK = {
    # tool: (input properties, required inputs, result properties, required results)
    "set_signature": ({"signature"}, ["signature"], {"signature"}, ["signature"]),
    "draft_reply": ({"ticketId", "text"}, ["ticketId", "text"], {"ticketId", "reply"}, ["ticketId", "reply"]),
    "set_banner": ({"text"}, ["text"], {"banner"}, ["banner"]),
    "get_banner": (set(), [], {"banner"}, ["banner"]),
    "work_on": ({"ticketId"}, ["ticketId"], {"ticketId"}, ["ticketId"]),
    "current_ticket": (set(), [], {"ticketId"}, ["ticketId"]),
    "next_ticket": (set(), [], {"ticketId"}, ["ticketId"]),
    "save_draft": ({"ticketId", "text"}, ["ticketId", "text"], {"saved"}, ["saved"]),
    "get_draft": ({"ticketId"}, ["ticketId"], {"draft"}, ["draft"]),
    "send_reply": ({"ticketId"}, ["ticketId"], {"sent", "text"}, ["sent"]),
}
ASSISTANT = {"remember_this", "recall", "forget", "list_memories", "search_memories"}
CONVERSATIONS = {
    "save_messages",
    "load_history",
    "search_history",
    "list_conversations",
    "compact_history",
    "clear_history",
    "set_context",
    "load_context",
}


@pytest.fixture
async def listed(call_as: CallAs) -> dict[str, Any]:
    return {tool.name: tool for tool in await call_as("nour").list_tools()}


async def test_the_server_lists_the_help_desk_assistant_and_conversation_tools(listed: dict[str, Any]) -> None:
    assert set(listed) == set(HELP_DESK) | ASSISTANT | CONVERSATIONS


@pytest.mark.parametrize("name", sorted(HELP_DESK))
async def test_each_tool_has_the_tutorials_input_and_result_shape(listed: dict[str, Any], name: str) -> None:
    inputs, required_inputs, results, required_results = HELP_DESK[name]
    tool = listed[name]
    assert set(tool.input_schema.get("properties", {})) == inputs
    assert sorted(tool.input_schema.get("required", [])) == sorted(required_inputs)
    assert tool.output_schema is not None
    assert set(tool.output_schema["properties"]) == results
    assert sorted(tool.output_schema.get("required", [])) == sorted(required_results)


@pytest.mark.parametrize("name", sorted(n for n, shape in HELP_DESK.items() if "ticketId" in shape[0]))
async def test_ticket_ids_are_described_like_t_1(listed: dict[str, Any], name: str) -> None:
    assert listed[name].input_schema["properties"]["ticketId"]["description"] == "Ticket id, like T-1"


async def test_signature_input_is_at_most_80_characters(listed: dict[str, Any]) -> None:
    assert listed["set_signature"].input_schema["properties"]["signature"]["maxLength"] == 80


async def test_results_that_may_be_missing_are_nullable(listed: dict[str, Any]) -> None:
    for name, field in [("get_banner", "banner"), ("current_ticket", "ticketId"), ("get_draft", "draft")]:
        types = {option.get("type") for option in listed[name].output_schema["properties"][field]["anyOf"]}
        assert types == {"string", "null"}, name
