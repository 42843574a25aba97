"""``self.remember``'s methods and limits, through HTTP on every store (unit level where HTTP adds nothing)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from mcpkit import Caller, ManualClock
from mcpkit.testing import CallAs
from mcpkit_remember import RememberInvalidError
from mcpkit_remember._remember import Remember, RememberPolicy
from mcpkit_storage.base._values import MAX_DEPTH, MAX_TTL
from mcpkit_storage.sealing._keyring import Keyring
from mcpkit_storage.stores.memory._memory_store import MemoryStore
from mcpkit_storage.vault._vault import Vault
from remember.support import NEW, mem, refused
from remember.tools import MISSING

# Every kind of JSON value, with the corners a store or an encoder might bend.
JSON_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -7,
    2**53 + 1,
    -(2**63),
    3.5,
    -0.25,
    1e300,
    "",
    "plain",
    "unicode: é ✓ 日本 😀",
    'quotes " and \\ and \n newlines and \x00 nul',
    [],
    {},
    [1, "two", None, [3.0, {"four": [False]}]],
    {"nested": {"deeper": {"list": [1, 2, {"x": None}]}}, "emoji 😀": "ok", "": "empty key"},
]

# Keys a store could mishandle: separators, glob and Redis hash-tag characters, SQL wildcards, non-ASCII.
ODD_KEYS = ["a:b", "a:b:c", "*", "?", "[x]", "{tag}", "}", "100%", "_", "a b", "ünï", "😀", "x" * 256, "'; DROP TABLE"]


@pytest.fixture
def mcp_protocol() -> str:
    """The API does not depend on the era (the scopes do: test_scopes runs both eras); user and tool scope
    here behave the same in both, so one era keeps this module fast."""
    return NEW


# -- set / get / forget / knows ------------------------------------------------------------------------------------


async def test_get_returns_what_set_stored_and_the_default_otherwise(call_as: CallAs) -> None:
    nour = call_as("nour")
    assert await mem(nour, "get", key="signature", scope="user") == MISSING
    await mem(nour, "set", key="signature", value="Nour", scope="user")
    assert await mem(nour, "get", key="signature", scope="user") == "Nour"
    await mem(nour, "set", key="signature", value="Nour B.", scope="user")
    assert await mem(nour, "get", key="signature", scope="user") == "Nour B."


async def test_json_values_of_every_kind_round_trip(call_as: CallAs) -> None:
    nour = call_as("nour")
    for index, value in enumerate(JSON_VALUES):
        await mem(nour, "set", key=f"v{index}", value=value, scope="user")
    for index, value in enumerate(JSON_VALUES):
        got = await mem(nour, "get", key=f"v{index}", scope="user")
        assert got == value
        assert type(got) is type(value)
    assert await mem(nour, "knows", key="v0", scope="user") is True  # a stored null is still a value


async def test_odd_keys_are_kept_exactly_and_listed(call_as: CallAs) -> None:
    nour = call_as("nour")
    for key in ODD_KEYS:
        await mem(nour, "set", key=key, value=f"value of {key}", scope="user")
    assert await mem(nour, "list", scope="user") == sorted(ODD_KEYS)
    for key in ODD_KEYS:
        assert await mem(nour, "get", key=key, scope="user") == f"value of {key}"
    assert await mem(nour, "get", key="a", scope="user") == MISSING  # no prefix match on "a:b"
    assert await mem(nour, "get", key="A:B", scope="user") == MISSING  # exact case


async def test_forget_says_whether_a_value_existed(call_as: CallAs) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="draft:T-1", value="hello", scope="user")
    assert await mem(nour, "forget", key="draft:T-1", scope="user") is True
    assert await mem(nour, "forget", key="draft:T-1", scope="user") is False
    assert await mem(nour, "forget", key="never-set", scope="user") is False
    assert await mem(nour, "get", key="draft:T-1", scope="user") == MISSING


async def test_knows_says_whether_a_value_is_kept(call_as: CallAs) -> None:
    nour = call_as("nour")
    assert await mem(nour, "knows", key="k", scope="session") is False
    await mem(nour, "set", key="k", value=False, scope="session")
    assert await mem(nour, "knows", key="k", scope="session") is True
    assert await mem(nour, "knows", key="k", scope="user") is False
    await mem(nour, "forget", key="k", scope="session")
    assert await mem(nour, "knows", key="k", scope="session") is False


# -- list ----------------------------------------------------------------------------------------------------------


async def test_list_matches_a_glob_pattern_with_exact_case(call_as: CallAs) -> None:
    nour = call_as("nour")
    for key in ("draft:T-1", "draft:T-2", "draft:T-10", "Draft:T-3", "note", "drafts"):
        await mem(nour, "set", key=key, value=1, scope="user")

    assert await mem(nour, "list", scope="user") == sorted(
        ["draft:T-1", "draft:T-2", "draft:T-10", "Draft:T-3", "note", "drafts"]
    )
    assert await mem(nour, "list", scope="user", pattern="draft:*") == ["draft:T-1", "draft:T-10", "draft:T-2"]
    assert await mem(nour, "list", scope="user", pattern="draft:T-?") == ["draft:T-1", "draft:T-2"]
    assert await mem(nour, "list", scope="user", pattern="[Dd]raft:T-[13]") == ["Draft:T-3", "draft:T-1"]
    assert await mem(nour, "list", scope="user", pattern="DRAFT*") == []
    assert await mem(nour, "list", scope="user", pattern="note") == ["note"]
    assert await mem(nour, "list", scope="session") == []


# -- increment / update --------------------------------------------------------------------------------------------


async def test_increment_counts_from_zero_and_by_any_number(call_as: CallAs) -> None:
    nour = call_as("nour")
    assert await mem(nour, "increment", key="n", scope="user") == 1
    assert await mem(nour, "increment", key="n", scope="user", by=41) == 42
    assert await mem(nour, "increment", key="n", scope="user", by=-2) == 40
    assert await mem(nour, "increment", key="f", scope="user", by=0.5) == 0.5
    assert await mem(nour, "increment", key="f", scope="user", by=0.25) == 0.75
    assert await mem(nour, "get", key="n", scope="user") == 40


async def test_increment_of_a_value_that_is_not_a_number_is_refused(call_as: CallAs) -> None:
    nour = call_as("nour")
    for value in ("12", True, None, [1], {"n": 1}):
        await mem(nour, "set", key="k", value=value, scope="user")
        error = await refused(nour, "increment", key="k", scope="user")
        assert error.code == "REMEMBER_INVALID"
        assert "not a number" in error.message
        assert await mem(nour, "get", key="k", scope="user") == value  # left alone
    for by in ("1", True, None, [1]):
        error = await refused(nour, "increment", key="n", scope="user", by=by)
        assert error.code == "REMEMBER_INVALID"


async def test_update_applies_fn_to_the_current_value_or_the_default(call_as: CallAs) -> None:
    nour = call_as("nour")
    assert await mem(nour, "append", key="seen", item="T-1", scope="tool") == ["T-1"]
    assert await mem(nour, "append", key="seen", item="T-2", scope="tool") == ["T-1", "T-2"]
    assert await mem(nour, "get", key="seen", scope="tool") == ["T-1", "T-2"]


# -- forget_all ----------------------------------------------------------------------------------------------------


async def test_forget_all_deletes_only_that_callers_values_in_that_scope(call_as: CallAs) -> None:
    nour, sam = call_as("nour"), call_as("sam")
    for key in ("a", "b", "c"):
        await mem(nour, "set", key=key, value=key, scope="user")
    await mem(nour, "set", key="a", value="session a", scope="session")
    await mem(nour, "set", key="a", value="tool a", scope="tool")
    await mem(nour, "set", key="a", value="twin a", scope="tool", tool="mem_twin")
    await mem(nour, "set", key="a", value="global a", scope="global")
    await mem(sam, "set", key="a", value="sam a", scope="user")

    assert await mem(nour, "forget_all", scope="user") == 3
    assert await mem(nour, "list", scope="user") == []
    assert await mem(nour, "forget_all", scope="user") == 0
    assert await mem(nour, "get", key="a", scope="session") == "session a"
    assert await mem(nour, "get", key="a", scope="tool") == "tool a"
    assert await mem(nour, "get", key="a", scope="global") == "global a"
    assert await mem(sam, "get", key="a", scope="user") == "sam a"

    assert await mem(nour, "forget_all", scope="tool") == 1
    assert await mem(nour, "get", key="a", scope="tool", tool="mem_twin") == "twin a"


# -- unit level: what HTTP cannot carry ----------------------------------------------------------------------------


def unit_remember(max_value_bytes: int = 65536) -> Remember:
    clock = ManualClock()
    policy = RememberPolicy(
        Vault(MemoryStore(), Keyring(["unit-secret-0123456789"])), lambda: clock, None, max_value_bytes
    )
    nour = Caller("nour@example.org", "user", "Nour", {}, None, NEW, "anon:x")
    return Remember(policy, nour, "unit_tool")


async def test_update_may_use_an_async_fn() -> None:
    remember = unit_remember()

    async def double(current: int) -> int:
        return current * 2

    await remember.set("n", 21, scope="user")
    assert await remember.update("n", double, scope="user") == 42
    assert await remember.get("n", scope="user") == 42


async def test_an_update_whose_fn_returns_something_unjsonable_is_refused_and_keeps_the_value() -> None:
    remember = unit_remember()
    await remember.set("n", 1, scope="user")
    with pytest.raises(RememberInvalidError, match="not JSON"):
        await remember.update("n", lambda current: {current}, scope="user")
    assert await remember.get("n", scope="user") == 1


async def test_an_exception_in_an_update_fn_propagates_and_changes_nothing() -> None:
    remember = unit_remember()
    await remember.set("n", 1, scope="user")

    def boom(current: int) -> int:
        raise LookupError("fn failed")

    with pytest.raises(LookupError):
        await remember.update("n", boom, scope="user")
    assert await remember.get("n", scope="user") == 1
    assert await remember.increment("n", scope="user") == 2  # nothing stayed locked


async def test_max_value_bytes_is_the_plugins_setting() -> None:
    remember = unit_remember(max_value_bytes=10)
    await remember.set("k", "12345678", scope="user")  # 10 bytes of JSON
    with pytest.raises(RememberInvalidError, match=r"11 bytes as JSON; the limit is 10 bytes \(max_value_bytes\)"):
        await remember.set("k", "123456789", scope="user")


async def test_a_string_with_a_lone_surrogate_is_refused() -> None:
    remember = unit_remember()
    with pytest.raises(RememberInvalidError, match="lone surrogate"):
        await remember.set("k", "half \ud800 a pair", scope="user")
    with pytest.raises(RememberInvalidError, match="lone surrogate"):
        await remember.update("k", lambda current: ["\udfff"], scope="user", default=[])
    assert await remember.knows("k", scope="user") is False


@pytest.mark.parametrize("ttl", [math.inf, -math.inf, math.nan, 0, -1, "60", True, 10**400, MAX_TTL + 1])
async def test_a_ttl_json_cannot_carry_is_refused_too(ttl: Any) -> None:
    remember = unit_remember()
    with pytest.raises(RememberInvalidError, match="ttl is a number of seconds above 0 and at most"):
        await remember.set("k", 1, scope="user", ttl=ttl)
    with pytest.raises(RememberInvalidError, match=r"\(100 years\)"):
        await remember.increment("k", scope="user", ttl=ttl)
    assert await remember.knows("k", scope="user") is False


def nested(depth: int) -> Any:
    """A list nested ``depth`` levels deep."""
    value: Any = "bottom"
    for _ in range(depth):
        value = [value]
    return value


async def test_values_nest_up_to_max_depth_and_no_deeper() -> None:
    remember = unit_remember()
    await remember.set("deep", nested(MAX_DEPTH), scope="user")
    assert await remember.get("deep", scope="user") == nested(MAX_DEPTH)
    with pytest.raises(RememberInvalidError, match=f"more than {MAX_DEPTH} levels deep"):
        await remember.set("deeper", nested(MAX_DEPTH + 1), scope="user")
    with pytest.raises(RememberInvalidError, match=f"more than {MAX_DEPTH} levels deep"):
        await remember.update("deep", lambda current: [current], scope="user")  # an update cannot grow past it
    with pytest.raises(RememberInvalidError, match="levels deep"):
        await remember.set("deeper", {"a": nested(MAX_DEPTH)}, scope="user")
    assert await remember.get("deep", scope="user") == nested(MAX_DEPTH)
    assert await remember.knows("deeper", scope="user") is False
    await remember.set("wide", [[1]] * 10_000, scope="user")  # many brackets, shallow: fine
