"""Limits on keys, values, scopes and ttls: REMEMBER_INVALID with a message naming the limit."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit import ConfigurationError, Server, StaticKeys, ToolContext, app, tool
from mcpkit.testing import CallAs, HTTPRefusedError, ToolCallError, running
from mcpkit_remember import RememberPlugin
from mcpkit_storage import RememberInvalidError
from mcpkit_storage.base._values import MAX_DEPTH, MAX_TTL, encode_value
from remember.support import KEYS, NEW, mem, post_tool_call, refused
from remember.tools import MISSING


@pytest.fixture
def store_kind() -> str:
    """Limits are checked before any store is touched: the memory store is enough here."""
    return "memory"


def assert_invalid(error: Any, *fragments: str) -> None:
    assert error.code == "REMEMBER_INVALID", error
    for fragment in fragments:
        assert fragment in error.message, (fragment, error.message)


async def test_a_value_over_max_value_bytes_is_refused_naming_the_limit(call_as: CallAs) -> None:
    nour = call_as("nour")
    limit = 65536
    fits = "x" * (limit - 2)  # the JSON text adds two quotes
    await mem(nour, "set", key="big", value=fits, scope="user")
    assert await mem(nour, "get", key="big", scope="user") == fits

    error = await refused(nour, "set", key="big", value=fits + "x", scope="user")
    assert_invalid(error, "65,536", "max_value_bytes")
    assert await mem(nour, "get", key="big", scope="user") == fits

    error = await refused(nour, "set", key="wide", value="é" * (limit // 2), scope="user")  # bytes, not characters
    assert_invalid(error, "max_value_bytes")


async def test_an_update_that_grows_a_value_over_the_limit_is_refused(call_as: CallAs) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="list", value=["x" * 65000], scope="user")
    error = await refused(nour, "append", key="list", item="y" * 1000, scope="user")
    assert_invalid(error, "max_value_bytes")
    assert await mem(nour, "get", key="list", scope="user") == ["x" * 65000]


async def test_bad_keys_are_refused_naming_the_rule(call_as: CallAs) -> None:
    nour = call_as("nour")
    cases = {
        "": "empty",
        "k" * 257: "256",
        "line\nbreak": "control characters",
        "tab\there": "control characters",
        "nul\x00": "control characters",
        "esc\x1b[0m": "control characters",
        "del\x7f": "control characters",
    }
    for key, fragment in cases.items():
        for op in ("set", "get", "knows", "forget", "increment", "append"):
            assert_invalid(await refused(nour, op, key=key, value=1, item=1, scope="user"), fragment)
        assert await mem(nour, "list", scope="user") == []
    error = await refused(nour, "set", key=42, value=1, scope="user")
    assert_invalid(error, "string")
    await mem(nour, "set", key="k" * 256, value="ok", scope="user")  # 256 is allowed


async def test_a_value_that_is_not_json_is_refused(call_as: CallAs) -> None:
    nour = call_as("nour")
    for kind in ("nan", "inf", "nested_nan", "set", "object", "bytes"):
        with pytest.raises(ToolCallError) as refusal:
            await nour.call("set_unjsonable", {"kind": kind})
        assert_invalid(refusal.value, "not JSON")
    assert await mem(nour, "get", key="weird", scope="global") == MISSING


async def test_an_unknown_scope_is_refused_naming_the_scopes(call_as: CallAs) -> None:
    nour = call_as("nour")
    for scope in ("Global", "users", "", "tool.mem", None, 1):
        for op in ("set", "get", "list", "forget_all"):
            error = await refused(nour, op, key="k", value=1, scope=scope)
            assert_invalid(error, "scope", "user, session, tool, global")


async def test_a_bad_ttl_is_refused(call_as: CallAs) -> None:
    nour = call_as("nour")
    for ttl in (0, -1, -0.5, "60", True, [60], {"seconds": 60}, MAX_TTL + 1, 1e17, 10**400):
        for op in ("set", "increment", "append"):
            error = await refused(nour, op, key="k", value=1, item=1, scope="user", ttl=ttl)
            assert_invalid(error, "ttl", "above 0 and at most 3,155,760,000 (100 years)")
    assert await mem(nour, "knows", key="k", scope="user") is False


async def test_a_bad_list_pattern_is_refused(call_as: CallAs) -> None:
    assert_invalid(await refused(call_as("nour"), "list", scope="user", pattern=["*"]), "pattern")


@pytest.mark.parametrize("mcp_protocol", [NEW])
async def test_a_value_with_a_lone_surrogate_sent_by_a_client_is_refused(call_as: CallAs, mcpkit_app: object) -> None:
    await mem(call_as("nour"), "knows", key="k", scope="user")  # the server is up
    arguments = {"op": "set", "key": "k", "value": "half \ud800 a pair", "scope": "user"}
    response = await post_tool_call(mcpkit_app, KEYS["nour"], NEW, arguments)
    assert response.status_code == 200
    assert '"code":"INVALID_INPUT"' in response.text  # refused at the HTTP boundary, before the tool runs
    assert "value: holds a lone surrogate" in response.text


async def test_a_value_nested_deeper_than_the_limit_is_refused(call_as: CallAs) -> None:
    nour = call_as("nour")
    value: Any = "bottom"
    for _ in range(MAX_DEPTH):
        value = [value]
    await mem(nour, "set", key="deep", value=value, scope="user")
    assert await mem(nour, "get", key="deep", scope="user") == value
    assert_invalid(await refused(nour, "set", key="deeper", value=[value], scope="user"), f"{MAX_DEPTH} levels deep")
    assert_invalid(await refused(nour, "append", key="deep", item=value, scope="user"), "levels deep")


async def test_larger_values_raise_the_servers_body_limit_so_they_can_still_be_sent() -> None:
    @tool(name="keep_big", description="Keep a large value sent as an argument.")
    class KeepBig(ToolContext):
        async def execute(self, text: str) -> dict[str, int]:
            await self.remember.set("big", text, scope="user")
            return {"kept": len(text)}

    def server(max_value_bytes: int) -> Server:
        plugin = RememberPlugin.init(type="memory", max_value_bytes=max_value_bytes, max_bytes=None)
        big_app = app(id="big", tools=[KeepBig], plugins=[plugin])(type("BigApp", (), {}))
        return Server([big_app], auth=StaticKeys({"nour": "nour-big-key-0123"}))

    text = "é" * 400_000  # 800,000 bytes as JSON; the default body limit is 256 KiB
    async with running(server(1_000_000)) as call_as:
        assert await call_as("nour").call("keep_big", {"text": text}) == {"kept": 400_000}
    async with running(server(65_536)) as call_as:
        with pytest.raises(HTTPRefusedError) as refused_body:
            await call_as("nour").call("keep_big", {"text": text})
    assert refused_body.value.status == 413


def test_a_byte_quota_too_small_for_one_sealed_value_is_refused_when_the_plugin_is_made() -> None:
    with pytest.raises(ConfigurationError, match="leaves no room for a value of max_value_bytes"):
        RememberPlugin.init(type="memory", max_value_bytes=65536, max_bytes=65536)
    RememberPlugin.init(type="memory", max_value_bytes=65536, max_bytes=65536 + 2048)


def test_an_integer_too_long_for_json_text_is_refused_saying_what_to_do() -> None:
    with pytest.raises(RememberInvalidError, match=r"'big' is an integer of more than [\d,]+ digits.*as a string"):
        encode_value("big", 10**5000, 1 << 20)
    with pytest.raises(RememberInvalidError, match=r"'big' is 41 bytes as JSON.*max_value_bytes"):
        encode_value("big", 10**40, 16)
    written = [encode_value("n", value, 64) for value in (0, -7, 2**63, True, 1.5)]
    assert written == ["0", "-7", "9223372036854775808", "true", "1.5"]
