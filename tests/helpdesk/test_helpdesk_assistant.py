"""The assistant app: the model's own memory tools, limited to user scope, optionally prefixed."""

from __future__ import annotations

import re

import pytest

from mcpkit.testing import CallAs, ToolCallError
from mcpkit_helpdesk import DEMO_KEYS, create_server

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


async def test_the_memory_tools_offer_only_user_scope_and_default_to_it(call_as: CallAs) -> None:
    tools = {t.name: t for t in await call_as("nour").list_tools()}
    for name in MEMORY_TOOLS:
        scope = tools[name].input_schema["properties"]["scope"]
        assert scope["enum"] == ["user"], name
        assert scope["default"] == "user", name


async def test_a_call_without_a_scope_keeps_nours_time_zone_in_user_scope(call_as: CallAs) -> None:
    nour = call_as("nour")
    remembered = await nour.call("remember_this", {"key": "timezone", "value": "Europe/Amsterdam"})
    assert remembered == {"key": "timezone", "scope": "user", "remembered": True}
    assert (await nour.call("recall", {"key": "timezone", "scope": "user"}))["value"] == "Europe/Amsterdam"


@pytest.mark.parametrize(
    ("tool_name", "arguments", "answer"),
    [
        ("recall", {"key": "timezone"}, {"found": True, "value": "Europe/Amsterdam"}),
        ("list_memories", {}, {"keys": ["timezone"], "nextCursor": None}),
        ("forget", {"key": "timezone"}, {"key": "timezone", "forgotten": True}),
    ],
)
async def test_every_memory_tool_works_without_a_scope(
    call_as: CallAs, tool_name: str, arguments: dict[str, str], answer: dict[str, object]
) -> None:
    nour = call_as("nour")
    await nour.call("remember_this", TIMEZONE)
    got = await nour.call(tool_name, arguments)
    assert {"scope": got.pop("scope"), **{key: got[key] for key in answer}} == {"scope": "user", **answer}


@pytest.mark.parametrize("scope", ["session", "tool", "global"])
async def test_another_scope_is_refused_naming_user(call_as: CallAs, scope: str) -> None:
    nour = call_as("nour")
    with pytest.raises(ToolCallError) as refused:
        await nour.call("remember_this", {"key": "timezone", "value": "Europe/Amsterdam", "scope": scope})
    assert refused.value.code == "REMEMBER_SCOPE_NOT_ALLOWED"
    assert "Allowed scopes: 'user'" in refused.value.message
    assert (await nour.call("recall", {"key": "timezone", "scope": "user"}))["found"] is False


async def test_an_anonymous_caller_has_no_user_memory_and_is_told_only_to_sign_in(call_as: CallAs) -> None:
    with pytest.raises(ToolCallError) as refused:
        await call_as(None).call("list_memories", {"scope": "user"})
    assert refused.value.code == "REMEMBER_IDENTITY_REQUIRED"
    assert refused.value.message == (
        "Cannot use user scope: the caller is anonymous. Authenticate the request (a bearer token or key)."
    )
    with pytest.raises(ToolCallError) as writing:
        await call_as(None).call("remember_this", {"key": "timezone", "value": "Europe/Amsterdam"})
    assert writing.value.code == "REMEMBER_IDENTITY_REQUIRED"
    assert "global" not in writing.value.message


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
