"""The assistant app: the model's own memory tools, limited to user scope, optionally prefixed."""

from __future__ import annotations

import re

import pytest

from helpdesk import DEMO_KEYS, create_server
from mcpkit.testing import CallAs, ToolCallError

MEMORY_TOOLS = ("remember_this", "recall", "forget", "list_memories")
TIMEZONE = {"key": "timezone", "value": "Europe/Amsterdam", "scope": "user"}


async def test_remember_this_stores_nours_time_zone_in_user_scope(call_as: CallAs) -> None:
    assert await call_as("nour").call("remember_this", TIMEZONE) == {
        "key": "timezone",
        "scope": "user",
        "remembered": True,
    }


async def test_recall_finds_nours_time_zone_for_her_and_not_for_sam(call_as: CallAs) -> None:
    await call_as("nour").call("remember_this", TIMEZONE)
    recall = {"key": "timezone", "scope": "user"}
    assert await call_as("nour", fresh=True).call("recall", recall) == {
        "key": "timezone",
        "scope": "user",
        "found": True,
        "value": "Europe/Amsterdam",
    }
    assert await call_as("sam").call("recall", recall) == {
        "key": "timezone",
        "scope": "user",
        "found": False,
        "value": None,
    }


async def test_nour_lists_and_forgets_her_memories(call_as: CallAs) -> None:
    nour = call_as("nour")
    await nour.call("remember_this", TIMEZONE)
    assert (await nour.call("list_memories", {"scope": "user"}))["keys"] == ["timezone"]
    assert (await call_as("sam").call("list_memories", {"scope": "user"}))["keys"] == []
    assert (await nour.call("forget", {"key": "timezone", "scope": "user"}))["forgotten"] is True
    assert (await nour.call("recall", {"key": "timezone", "scope": "user"}))["found"] is False


@pytest.mark.parametrize("scope", [None, "session", "tool", "global"], ids=lambda s: f"scope={s}")
async def test_a_call_without_scope_or_with_another_scope_is_refused(call_as: CallAs, scope: str | None) -> None:
    nour = call_as("nour")
    arguments = {"key": "timezone", "value": "Europe/Amsterdam"} | ({} if scope is None else {"scope": scope})
    with pytest.raises(ToolCallError) as refused:
        await nour.call("remember_this", arguments)
    assert refused.value.code == "REMEMBER_SCOPE_NOT_ALLOWED"
    assert "'user'" in refused.value.message
    assert (await nour.call("recall", {"key": "timezone", "scope": "user"}))["found"] is False


@pytest.mark.parametrize("tool_name", ["recall", "forget", "list_memories"])
async def test_every_memory_tool_refuses_the_default_scope(call_as: CallAs, tool_name: str) -> None:
    arguments = {} if tool_name == "list_memories" else {"key": "timezone"}
    with pytest.raises(ToolCallError) as refused:
        await call_as("nour").call(tool_name, arguments)
    assert refused.value.code == "REMEMBER_SCOPE_NOT_ALLOWED"
    assert "'user'" in refused.value.message


async def test_an_anonymous_caller_has_no_user_memory(call_as: CallAs) -> None:
    with pytest.raises(ToolCallError) as refused:
        await call_as(None).call("list_memories", {"scope": "user"})
    assert refused.value.code == "REMEMBER_IDENTITY_REQUIRED"


async def test_the_memory_tools_are_listed_without_a_prefix_by_default(call_as: CallAs) -> None:
    names = {t.name for t in await call_as("nour").list_tools()}
    assert set(MEMORY_TOOLS) <= names
    assert not any(name.startswith("memory_") for name in names)


async def test_prefixed_variant_names_its_tools_memory_star(serve) -> None:
    async with serve(create_server(keys=DEMO_KEYS, memory_prefix="memory_")) as prefixed:
        nour = prefixed("nour")
        tools = {t.name: t for t in await nour.list_tools()}
        assert {f"memory_{name}" for name in MEMORY_TOOLS} <= set(tools)
        assert not set(MEMORY_TOOLS) & set(tools)
        assert {"set_signature", "draft_reply", "next_ticket"} <= set(tools)  # the help desk's own are unchanged
        for name in MEMORY_TOOLS:
            description = tools[f"memory_{name}"].description or ""
            for other in MEMORY_TOOLS:
                if other != name:
                    assert f"memory_{other}" in description, (name, other)
            unprefixed = re.findall(r"(?<![\w])(?:remember_this|recall|forget|list_memories)\b", description)
            assert unprefixed == [], (name, unprefixed)
        await nour.call("memory_remember_this", TIMEZONE)
        assert (await nour.call("memory_recall", {"key": "timezone", "scope": "user"}))["value"] == "Europe/Amsterdam"
