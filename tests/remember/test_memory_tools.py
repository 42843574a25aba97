"""The model-facing memory tools: remember_this, recall, forget, list_memories (names, scopes, descriptions, paging)."""

from __future__ import annotations

import base64
import re
from typing import Any

import pytest

from mcpkit import ConfigurationError, ManualClock, Server, iso_time
from mcpkit.testing import CallAs, CallerClient, ToolCallError, running
from mcpkit.tools import Finding, lint_tool
from mcpkit_remember import RememberPlugin
from remember.support import (
    NEW,
    OLD,
    SECRET,
    SECRET_B,
    build_server,
    mem,
    plugin_of,
    static_user_id,
    user_identity,
)
from remember.tools import MISSING, TOOLS

FIVE = ("remember_this", "recall", "forget", "list_memories", "search_memories")
APP_TOOLS = ("mem", "mem_twin", "set_unjsonable", "whoami", "ping")
ENDING = (
    "An anonymous caller cannot use user scope, nor session or tool scope without a session. "
    "Keeping or forgetting values needs a signed-in caller."
)


def memory_server(
    store_options: dict[str, Any], tools: dict[str, Any], *, with_app_tools: bool = False, secret: str = SECRET
) -> Server:
    plugin = RememberPlugin.init(**store_options, secret=secret, tools={"enabled": True, **tools})
    return build_server(plugin, TOOLS if with_app_tools else ())


def flip_first(text: str) -> str:
    """``text`` with its first base64 character changed (all six bits of it carry data)."""
    return ("B" if text[0] == "A" else "A") + text[1:]


async def refusal(client: CallerClient, name: str, arguments: dict[str, Any]) -> ToolCallError:
    with pytest.raises(ToolCallError) as refused:
        await client.call(name, arguments)
    return refused.value


@pytest.fixture
def store_kind() -> str:
    """The tools sit on self.remember, which runs on every store elsewhere; memory keeps these fast."""
    return "memory"


def test_the_strict_lint_flags_a_value_of_any_type_and_a_type_array() -> None:
    untyped = {"type": "object", "properties": {"value": {"title": "Value"}}}  # what `value: Any` once made
    assert lint_tool(untyped, None) == [Finding("untyped-schema", "warning", "inputSchema.properties.value")]
    nullable = {"$defs": {"Note": {"type": ["string", "null"]}}, "type": "object"}
    assert lint_tool(None, nullable) == [Finding("type-union", "warning", "outputSchema.$defs.Note")]


class TestEnabled:
    @pytest.fixture
    def mcpkit_server(self, store_options: dict[str, Any]) -> Server:
        return memory_server(store_options, {}, with_app_tools=True)

    async def test_the_plugin_adds_the_five_tools_beside_the_apps_own(self, call_as: CallAs) -> None:
        names = [listed.name for listed in await call_as("nour").list_tools()]
        assert sorted(names) == sorted([*FIVE, *APP_TOOLS])

    async def test_remember_recall_forget_round_trip_for_nour_and_not_for_sam(
        self, call_as: CallAs, mcp_protocol: str
    ) -> None:
        nour, sam = call_as("nour"), call_as("sam")
        stored = await nour.call("remember_this", {"key": "timezone", "value": {"tz": "Europe/Paris"}, "scope": "user"})
        assert stored == {"key": "timezone", "scope": "user", "remembered": True}
        assert await nour.call("recall", {"key": "timezone", "scope": "user"}) == {
            "key": "timezone",
            "scope": "user",
            "found": True,
            "value": {"tz": "Europe/Paris"},
        }
        assert (await sam.call("recall", {"key": "timezone", "scope": "user"}))["found"] is False
        assert (await sam.call("forget", {"key": "timezone", "scope": "user"}))["forgotten"] is False
        assert (await nour.call("forget", {"key": "timezone", "scope": "user"}))["forgotten"] is True
        assert (await nour.call("recall", {"key": "timezone", "scope": "user"}))["found"] is False

    async def test_their_schemas_pass_a_strict_clients_lint(self, call_as: CallAs) -> None:
        listed = {tool.name: tool for tool in await call_as("nour").list_tools()}
        for name in FIVE:
            assert lint_tool(listed[name].input_schema, listed[name].output_schema) == [], name

    async def test_every_kind_of_json_value_is_kept_and_comes_back_unchanged(self, call_as: CallAs) -> None:
        nour = call_as("nour")
        values = {
            "text": "Takes tea",
            "empty": "",
            "whole": 42,
            "fraction": 2.5,
            "yes": True,
            "nothing": None,
            "list": [1, "two", None, [3.5]],
            "object": {"tea": {"sugar": False, "cups": [1, 2]}},
        }
        for key, value in values.items():
            await nour.call("remember_this", {"key": key, "value": value, "scope": "user"})
        for key, value in values.items():  # the client checks each result against the tool's output schema
            recalled = await nour.call("recall", {"key": key, "scope": "user"})
            assert (recalled["value"], type(recalled["value"])) == (value, type(value))
        found = await nour.call("search_memories", {"query": "tea sugar", "scope": "user"})
        assert {result["key"]: result["value"] for result in found["results"]} == {
            "text": "Takes tea",
            "object": {"tea": {"sugar": False, "cups": [1, 2]}},
        }

    async def test_search_memories_finds_the_callers_notes_by_their_words(self, call_as: CallAs) -> None:
        nour, sam = call_as("nour"), call_as("sam")
        await nour.call("remember_this", {"key": "style", "value": "Prefers short replies", "scope": "user"})
        await nour.call("remember_this", {"key": "city", "value": {"lives": "Lyon"}, "scope": "user"})
        await sam.call("remember_this", {"key": "style", "value": "Prefers long replies", "scope": "user"})
        found = await nour.call("search_memories", {"query": "preferred reply", "scope": "user"})
        assert [r["key"] for r in found["results"]] == ["style"]
        assert found["results"][0]["value"] == "Prefers short replies"
        assert found["results"][0]["score"] > 0
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", found["results"][0]["updated_at"])
        assert (await nour.call("search_memories", {"query": "lyon", "scope": "user"}))["results"][0]["key"] == "city"
        assert (await nour.call("search_memories", {"query": "replies"}))["results"] == []  # session scope: none

    async def test_search_memories_keeps_the_window_asked_and_prefers_the_querys_dates(
        self, call_as: CallAs, clock: ManualClock
    ) -> None:
        nour = call_as("nour")
        await nour.call("remember_this", {"key": "trip:old", "value": "Trip to Rome", "scope": "user"})
        clock.advance(86_400)
        await nour.call("remember_this", {"key": "trip:new", "value": "Trip to Oslo", "scope": "user"})
        today = iso_time(clock.now())[:10]
        found = await nour.call("search_memories", {"query": "trip", "scope": "user", "since": today})
        assert [r["key"] for r in found["results"]] == ["trip:new"]
        assert found["window"] == {"since": f"{today}T00:00:00.000Z", "until": None}
        assert found["results"][0]["happened_at"] == iso_time(clock.now())
        asked = await nour.call("search_memories", {"query": "trip yesterday", "scope": "user"})
        assert [r["key"] for r in asked["results"]] == ["trip:old", "trip:new"]  # yesterday's first, none left out
        yesterday = iso_time(clock.now() - 86_400)[:10]
        assert asked["preferred"] == {"since": f"{yesterday}T00:00:00.000Z", "until": f"{today}T00:00:00.000Z"}
        assert "window" not in asked

    async def test_the_scope_defaults_to_session(self, call_as: CallAs) -> None:
        nour = call_as("nour")
        assert (await nour.call("remember_this", {"key": "ticket", "value": "T-1"}))["scope"] == "session"
        assert (await nour.call("recall", {"key": "ticket", "scope": "session"}))["value"] == "T-1"
        assert (await nour.call("recall", {"key": "ticket", "scope": "user"}))["found"] is False
        assert (await nour.call("list_memories", {}))["keys"] == ["ticket"]

    async def test_the_five_tools_share_one_tool_scope(self, call_as: CallAs) -> None:
        nour = call_as("nour")
        await nour.call("remember_this", {"key": "k", "value": 1, "scope": "tool"})
        assert (await nour.call("recall", {"key": "k", "scope": "tool"}))["value"] == 1
        assert (await nour.call("list_memories", {"scope": "tool"}))["keys"] == ["k"]
        assert [r["key"] for r in (await nour.call("search_memories", {"query": "k", "scope": "tool"}))["results"]] == [
            "k"
        ]
        assert (await nour.call("forget", {"key": "k", "scope": "tool"}))["forgotten"] is True

    async def test_the_models_notes_never_touch_the_values_the_servers_tools_keep(self, call_as: CallAs) -> None:
        nour = call_as("nour")
        for scope in ("user", "session", "tool", "global"):
            await mem(nour, "set", key="signature", value=f"setting {scope}", scope=scope)
            await nour.call("remember_this", {"key": "signature", "value": f"note {scope}", "scope": scope})
            assert await mem(nour, "get", key="signature", scope=scope) == f"setting {scope}"
            assert (await nour.call("recall", {"key": "signature", "scope": scope}))["value"] == f"note {scope}"
            await nour.call("forget", {"key": "signature", "scope": scope})
            assert await mem(nour, "get", key="signature", scope=scope) == f"setting {scope}"

    async def test_global_notes_are_shared_and_anonymous_callers_keep_none(
        self, call_as: CallAs, mcp_protocol: str
    ) -> None:
        await call_as("nour").call("remember_this", {"key": "banner", "value": "Outage", "scope": "global"})
        assert (await call_as(None).call("recall", {"key": "banner", "scope": "global"}))["value"] == "Outage"
        anonymous = call_as(None)
        error = await refusal(anonymous, "remember_this", {"key": "k", "value": 1})  # even with a session
        assert error.code == "REMEMBER_IDENTITY_REQUIRED"
        if mcp_protocol == OLD:
            assert "only signed-in callers keep or forget values" in error.message
        assert (await refusal(anonymous, "recall", {"key": "k", "scope": "user"})).code == "REMEMBER_IDENTITY_REQUIRED"

    async def test_bad_arguments_are_refused(self, call_as: CallAs) -> None:
        nour = call_as("nour")
        assert (await refusal(nour, "remember_this", {"key": "", "value": 1})).code == "INVALID_INPUT"
        assert (await refusal(nour, "remember_this", {"key": "k", "value": 1, "scope": "planet"})).code == (
            "INVALID_INPUT"
        )
        assert (await refusal(nour, "remember_this", {"key": "k", "value": 1, "ttl": 0})).code == "INVALID_INPUT"
        error = await refusal(nour, "remember_this", {"key": "a\nb", "value": 1})
        assert error.code == "REMEMBER_INVALID"
        error = await refusal(nour, "remember_this", {"key": "k", "value": "x" * 70000})
        assert error.code == "REMEMBER_INVALID"
        assert "max_value_bytes" in error.message

    @pytest.mark.parametrize("mcp_protocol", [NEW])
    async def test_a_note_expires_after_its_ttl(self, call_as: CallAs, clock: Any) -> None:
        nour = call_as("nour")
        await nour.call("remember_this", {"key": "k", "value": 1, "scope": "user", "ttl": 60})
        clock.advance(60)
        assert (await nour.call("recall", {"key": "k", "scope": "user"}))["found"] is False
        assert (await nour.call("list_memories", {"scope": "user"}))["keys"] == []


class TestDescriptions:
    @pytest.fixture
    def mcpkit_server(self, store_options: dict[str, Any]) -> Server:
        return memory_server(store_options, {"prefix": "memory_"})

    @pytest.mark.parametrize("mcp_protocol", [NEW])
    async def test_descriptions_say_what_each_scope_keeps_and_end_with_the_anonymous_rule(
        self, call_as: CallAs
    ) -> None:
        listed = {tool.name: tool.description or "" for tool in await call_as("nour").list_tools()}
        assert sorted(listed) == sorted(f"memory_{base}" for base in FIVE)
        for name, description in listed.items():
            assert description.endswith(ENDING), name
            assert "2026-07-28" in description
            for scope in ("user keeps", "session keeps", "tool is like session", "global is shared"):
                assert scope in description, (name, scope)
            others = [f"memory_{base}" for base in FIVE if f"memory_{base}" != name]
            for other in others:
                assert other in description, (name, other)
            # every mention of another tool uses its prefixed name
            unprefixed = r"(?<![\w.])(remember_this|recall|forget|list_memories|search_memories)\b"
            assert re.findall(unprefixed, description) == [], name

    @pytest.mark.parametrize("mcp_protocol", [NEW])
    async def test_prefixed_tools_work_under_their_new_names(self, call_as: CallAs) -> None:
        nour = call_as("nour")
        await nour.call("memory_remember_this", {"key": "k", "value": "v", "scope": "user"})
        assert (await nour.call("memory_recall", {"key": "k", "scope": "user"}))["value"] == "v"
        assert (await nour.call("memory_list_memories", {"scope": "user"}))["keys"] == ["k"]
        assert (await nour.call("memory_forget", {"key": "k", "scope": "user"}))["forgotten"] is True
        with pytest.raises(ToolCallError) as unknown:
            await nour.call("recall", {"key": "k", "scope": "user"})
        assert unknown.value.code == "UNKNOWN_TOOL"


class TestAllowedScopes:
    @pytest.fixture
    def mcpkit_server(self, store_options: dict[str, Any]) -> Server:
        return memory_server(store_options, {"allowed_scopes": ["user", "global"]})

    @pytest.mark.parametrize("mcp_protocol", [NEW])
    async def test_the_schemas_offer_only_the_allowed_scopes_and_default_to_user(self, call_as: CallAs) -> None:
        for tool in await call_as("nour").list_tools():
            scope = tool.input_schema["properties"]["scope"]
            assert scope["enum"] == ["user", "global"], tool.name
            assert scope["default"] == "user", tool.name
            assert "scope" not in tool.input_schema.get("required", []), tool.name

    async def test_a_call_without_a_scope_keeps_and_reads_in_the_default_scope(self, call_as: CallAs) -> None:
        nour = call_as("nour")
        assert (await nour.call("remember_this", {"key": "k", "value": 1}))["scope"] == "user"
        assert (await nour.call("recall", {"key": "k"}))["value"] == 1
        assert (await nour.call("recall", {"key": "k", "scope": "user"}))["value"] == 1
        assert (await nour.call("recall", {"key": "k", "scope": None}))["value"] == 1  # null: the default too
        assert (await nour.call("list_memories", {}))["keys"] == ["k"]
        assert [found["key"] for found in (await nour.call("search_memories", {"query": "k"}))["results"]] == ["k"]
        assert (await nour.call("forget", {"key": "k"}))["forgotten"] is True

    async def test_other_scopes_are_refused_naming_the_allowed_ones(self, call_as: CallAs) -> None:
        nour = call_as("nour")
        for name, arguments in [
            ("remember_this", {"key": "k", "value": 1}),
            ("recall", {"key": "k"}),
            ("forget", {"key": "k"}),
            ("list_memories", {}),
            ("search_memories", {"query": "k"}),
        ]:
            for scope in ("session", "tool"):
                error = await refusal(nour, name, {**arguments, "scope": scope})
                assert error.code == "REMEMBER_SCOPE_NOT_ALLOWED"
                assert error.message == (
                    f"This server does not allow scope {scope!r} for memory tools. Allowed scopes: 'user', 'global'. "
                    "Call again with scope set to one of them, for example scope='user'."
                )
        assert (await nour.call("remember_this", {"key": "k", "value": 1, "scope": "user"}))["remembered"]
        assert (await nour.call("recall", {"key": "k", "scope": "user"}))["value"] == 1

    @pytest.mark.parametrize("mcp_protocol", [NEW])
    async def test_descriptions_name_only_the_allowed_scopes_and_the_default(self, call_as: CallAs) -> None:
        for tool in await call_as("nour").list_tools():
            description = tool.description or ""
            assert "allows only: user, global. The scope defaults to user." in description
            assert "user keeps" in description
            assert "global is shared" in description
            assert "session keeps" not in description
            assert "tool is like session" not in description
            assert description.endswith(
                "An anonymous caller cannot use user scope. Keeping or forgetting values needs a signed-in caller."
            )

    async def test_an_anonymous_caller_may_read_global_values_but_not_change_them(self, call_as: CallAs) -> None:
        await call_as("nour").call("remember_this", {"key": "banner", "value": "Outage", "scope": "global"})
        anonymous = call_as(None)
        assert (await anonymous.call("recall", {"key": "banner", "scope": "global"}))["value"] == "Outage"
        assert (await anonymous.call("list_memories", {"scope": "global"}))["keys"] == ["banner"]
        for name, arguments in [
            ("remember_this", {"key": "banner", "value": "pwned", "scope": "global"}),
            ("remember_this", {"key": "spam", "value": "x" * 1000, "scope": "global"}),
            ("forget", {"key": "banner", "scope": "global"}),
        ]:
            error = await refusal(anonymous, name, arguments)
            assert error.code == "REMEMBER_IDENTITY_REQUIRED"
            assert "only signed-in callers keep or forget values" in error.message
        assert (await anonymous.call("list_memories", {"scope": "global"}))["keys"] == ["banner"]
        assert (await refusal(anonymous, "recall", {"key": "k", "scope": "user"})).code == "REMEMBER_IDENTITY_REQUIRED"


class TestAnonymousGlobalWrites:
    @pytest.fixture
    def mcpkit_server(self, store_options: dict[str, Any]) -> Server:
        return memory_server(store_options, {"anonymous_writes": True})

    async def test_a_server_can_let_anonymous_callers_keep_values(self, call_as: CallAs, mcp_protocol: str) -> None:
        anonymous = call_as(None)
        if mcp_protocol == OLD:  # a session of its own
            assert (await anonymous.call("remember_this", {"key": "k", "value": 2}))["remembered"]
            assert (await anonymous.call("recall", {"key": "k"}))["value"] == 2
        assert (await anonymous.call("remember_this", {"key": "k", "value": 1, "scope": "global"}))["remembered"]
        assert (await call_as("nour").call("recall", {"key": "k", "scope": "global"}))["value"] == 1
        assert (await anonymous.call("forget", {"key": "k", "scope": "global"}))["forgotten"]
        description = (await call_as("nour").list_tools())[0].description or ""
        assert "needs a signed-in caller" not in description


class TestUserOnly:
    @pytest.fixture
    def mcpkit_server(self, store_options: dict[str, Any]) -> Server:
        return memory_server(store_options, {"allowed_scopes": ["user"]})

    async def test_an_anonymous_caller_is_told_to_authenticate_and_nothing_else(self, call_as: CallAs) -> None:
        for name in FIVE:
            arguments = {"key": "k", "value": 1} if name == "remember_this" else {"key": "k"}
            arguments = {"query": "k"} if name == "search_memories" else arguments
            for given in ({}, {"scope": "user"}, {"scope": "global"}):
                error = await refusal(call_as(None), name, {**({} if name == "list_memories" else arguments), **given})
                assert error.code == "REMEMBER_IDENTITY_REQUIRED"
                assert "Authenticate the request (a bearer token or key)." in error.message, error.message
                assert ", or use" not in error.message

    async def test_the_message_of_an_anonymous_read_names_the_one_scope_allowed(self, call_as: CallAs) -> None:
        error = await refusal(call_as(None), "recall", {"key": "k"})
        assert error.message == (
            "Cannot use user scope: the caller is anonymous. Authenticate the request (a bearer token or key)."
        )

    async def test_a_signed_in_caller_needs_no_scope(self, call_as: CallAs) -> None:
        nour = call_as("nour")
        assert await nour.call("remember_this", {"key": "k", "value": 1}) == {
            "key": "k",
            "scope": "user",
            "remembered": True,
        }
        assert (await nour.call("recall", {"key": "k", "scope": "user"}))["value"] == 1

    @pytest.mark.parametrize("mcp_protocol", [NEW])
    async def test_the_schemas_offer_user_alone_as_the_default(self, call_as: CallAs) -> None:
        for tool in await call_as("nour").list_tools():
            scope = tool.input_schema["properties"]["scope"]
            assert (scope["enum"], scope["default"]) == (["user"], "user"), tool.name
            assert lint_tool(tool.input_schema, tool.output_schema) == [], tool.name
            assert (tool.description or "").endswith(
                "An anonymous caller cannot use user scope. Keeping or forgetting values needs a signed-in caller."
            )


class TestSessionAndGlobal:
    """Anonymous callers on 2025-11-25 have a session: they are pointed at the scopes that would work for them."""

    @pytest.fixture
    def mcpkit_server(self, store_options: dict[str, Any]) -> Server:
        return memory_server(store_options, {"allowed_scopes": ["user", "session"], "anonymous_writes": True})

    async def test_an_anonymous_caller_is_pointed_only_at_allowed_scopes_that_work(
        self, call_as: CallAs, mcp_protocol: str
    ) -> None:
        error = await refusal(call_as(None), "recall", {"key": "k", "scope": "user"})
        assert error.code == "REMEMBER_IDENTITY_REQUIRED"
        assert "global" not in error.message
        assert error.message.endswith(
            "Authenticate the request (a bearer token or key), or use session scope."
            if mcp_protocol == OLD
            else "Authenticate the request (a bearer token or key)."
        )


@pytest.mark.parametrize(
    ("tools", "default"),
    [
        ({}, "session"),
        ({"allowed_scopes": ["global", "tool"]}, "tool"),
        ({"allowed_scopes": ["global"]}, "global"),
        ({"allowed_scopes": ["user", "session"], "default_scope": "user"}, "user"),
        ({"allowedScopes": ["user", "global"], "defaultScope": "global"}, "global"),
    ],
)
def test_the_default_scope_is_an_allowed_one(tools: dict[str, Any], default: str) -> None:
    server = memory_server({"type": "memory"}, tools)
    for name in FIVE:
        scope = server.tools[name].input_schema["properties"]["scope"]
        assert scope["default"] == default, name
        assert default in scope["enum"], name


def test_a_default_scope_that_is_not_allowed_is_refused_when_the_plugin_is_built() -> None:
    with pytest.raises(ConfigurationError, match=r"default_scope 'session' is not one of allowed_scopes \['user'\]"):
        RememberPlugin.init(
            type="memory", tools={"enabled": True, "allowed_scopes": ["user"], "default_scope": "session"}
        )


class TestPaging:
    @pytest.fixture
    def mcpkit_server(self, store_options: dict[str, Any]) -> Server:
        return memory_server(store_options, {})

    @pytest.mark.parametrize("mcp_protocol", [NEW])
    async def test_an_app_that_lists_no_tools_gets_exactly_the_five(self, call_as: CallAs) -> None:
        assert [listed.name for listed in await call_as("nour").list_tools()] == list(FIVE)

    async def test_list_memories_pages_with_an_opaque_cursor(self, call_as: CallAs) -> None:
        nour = call_as("nour")
        keys = [f"office:{city}" for city in ("berlin", "lagos", "lima", "oslo", "paris")]
        for key in [*keys, "other"]:
            await nour.call("remember_this", {"key": key, "value": True, "scope": "user"})

        pages, cursor = [], None
        while True:
            arguments: dict[str, Any] = {"scope": "user", "pattern": "office:*", "limit": 2}
            if cursor is not None:
                arguments["cursor"] = cursor
            page = await nour.call("list_memories", arguments)
            pages.append(page["keys"])
            cursor = page["nextCursor"]
            if cursor is None:
                break
        assert pages == [keys[0:2], keys[2:4], keys[4:]]
        everything = await nour.call("list_memories", {"scope": "user", "limit": 200})
        assert everything == {"scope": "user", "keys": [*keys, "other"], "nextCursor": None}

    async def first_cursor(self, nour: CallerClient, scope: str = "user") -> str:
        for number in range(3):
            await nour.call("remember_this", {"key": f"k{number}", "value": number, "scope": scope})
        page = await nour.call("list_memories", {"scope": scope, "limit": 1})
        assert page["keys"] == ["k0"]
        cursor: str = page["nextCursor"]
        return cursor

    async def test_a_tampered_cursor_is_refused(self, call_as: CallAs) -> None:
        nour = call_as("nour")
        cursor = await self.first_cursor(nour)
        sealed = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))

        def flipped(at: int) -> str:
            changed = bytearray(sealed)
            changed[at] ^= 1
            return base64.urlsafe_b64encode(bytes(changed)).decode().rstrip("=")

        for tampered in (
            flipped(0),  # the nonce changed
            flipped(20),  # the sealed data changed
            flipped(len(sealed) - 1),  # the tag changed
            cursor[1:],
            cursor[:-4],
            "not-a-cursor",
            "é" * 40,
        ):
            error = await refusal(nour, "list_memories", {"scope": "user", "cursor": tampered})
            assert error.code == "REMEMBER_INVALID"
            assert "cursor" in error.message

    async def test_a_cursor_shows_neither_the_key_it_continues_after_nor_the_owner(
        self, call_as: CallAs, mcpkit_server: Server
    ) -> None:
        nour = call_as("nour")
        for number in range(3):
            await nour.call("remember_this", {"key": f"draft:T-{number}-saffron", "value": number, "scope": "user"})
        cursor = (await nour.call("list_memories", {"scope": "user", "limit": 1}))["nextCursor"]
        decoded = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        owner = plugin_of(mcpkit_server).keyring.owner_for(user_identity(static_user_id("nour")))
        for needle in (b"saffron", b"draft", owner.encode(), bytes.fromhex(owner)):
            assert needle not in decoded
            assert needle not in cursor.encode()

    async def test_sam_cannot_use_nours_cursor(self, call_as: CallAs) -> None:
        cursor = await self.first_cursor(call_as("nour"))
        await call_as("sam").call("remember_this", {"key": "k9", "value": 9, "scope": "user"})
        error = await refusal(call_as("sam"), "list_memories", {"scope": "user", "cursor": cursor})
        assert error.code == "REMEMBER_INVALID"
        assert "another caller or scope" in error.message

    async def test_a_cursor_from_another_scope_is_refused(self, call_as: CallAs) -> None:
        nour = call_as("nour")
        cursor = await self.first_cursor(nour, scope="user")
        for scope in ("session", "tool", "global"):
            error = await refusal(nour, "list_memories", {"scope": scope, "cursor": cursor})
            assert error.code == "REMEMBER_INVALID"
        assert (await nour.call("list_memories", {"scope": "user", "cursor": cursor}))["keys"] == ["k1", "k2"]

    async def test_a_cursor_from_a_server_with_another_secret_is_refused(self, call_as: CallAs) -> None:
        cursor = await self.first_cursor(call_as("nour"))
        other = memory_server({"type": "memory"}, {}, secret=SECRET_B)
        async with running(other, protocol=call_as.protocol) as elsewhere:
            await self.first_cursor(elsewhere("nour"))
            error = await refusal(elsewhere("nour"), "list_memories", {"scope": "user", "cursor": cursor})
        assert error.code == "REMEMBER_INVALID"


@pytest.mark.parametrize("store_kind", ["memory", "sqlite", "redis", "redis-cluster"])
@pytest.mark.parametrize("mcp_protocol", [NEW])
async def test_memory_tools_on_every_store(store_options: dict[str, Any], call_as: CallAs) -> None:
    nour = call_as("nour")
    await nour.call("remember_this", {"key": "timezone", "value": "Europe/Paris", "scope": "user"})
    assert (await nour.call("recall", {"key": "timezone", "scope": "user"}))["value"] == "Europe/Paris"
    assert await mem(nour, "get", key="timezone", scope="user") == MISSING


@pytest.fixture
def mcpkit_server(store_options: dict[str, Any]) -> Server:
    return memory_server(store_options, {}, with_app_tools=True)
