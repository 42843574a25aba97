"""Scopes and identities through the real HTTP stack, as named callers, in both protocol eras, on every store."""

from __future__ import annotations

import pytest

from mcpkit import Server
from mcpkit.testing import CallAs
from remember.support import KEYS, NEW, OLD, jwt_token, mem, post_tool_call, refused, static_user_id, store_of
from remember.tools import MISSING

SCOPED = ("user", "session", "tool")


def assert_identity_required(error: Exception) -> None:
    """The refusal the seed describes: code, and a message saying what to do instead."""
    assert getattr(error, "code", None) == "REMEMBER_IDENTITY_REQUIRED"
    message = str(error)
    assert "Authenticate the request" in message
    assert "global scope" in message


# -- user ----------------------------------------------------------------------------------------------------------


async def test_user_scope_follows_nour_across_connections_and_sam_gets_nothing(call_as: CallAs) -> None:
    await mem(call_as("nour"), "set", key="signature", value="Nour, Help Desk", scope="user")

    assert await mem(call_as("nour"), "get", key="signature", scope="user") == "Nour, Help Desk"
    assert await mem(call_as("nour", fresh=True), "get", key="signature", scope="user") == "Nour, Help Desk"
    assert await mem(call_as("sam"), "get", key="signature", scope="user") == MISSING


async def test_user_scope_of_a_jwt_caller_is_keyed_by_sub_not_by_token(call_as: CallAs) -> None:
    first = call_as.token(jwt_token("nour@example.org", name="Nour"))
    again = call_as.token(jwt_token("nour@example.org", name="Nour A."), fresh=True)  # another token, same sub
    other = call_as.token(jwt_token("sam@example.org"))

    await mem(first, "set", key="timezone", value="Europe/Paris", scope="user")

    assert await mem(again, "get", key="timezone", scope="user") == "Europe/Paris"
    assert await mem(other, "get", key="timezone", scope="user") == MISSING
    assert await mem(call_as("nour"), "get", key="timezone", scope="user") == MISSING  # her static key is another id


@pytest.mark.parametrize("store_kind", ["memory"])  # refused before any store is touched
async def test_an_anonymous_caller_is_refused_user_scope_with_what_to_do(call_as: CallAs) -> None:
    for op in ("set", "get", "knows", "forget", "list", "increment", "append", "forget_all"):
        error = await refused(call_as(None), op, key="signature", value="x", item="x", scope="user")
        assert_identity_required(error)


@pytest.mark.parametrize("store_kind", ["memory"])
async def test_the_user_scope_refusal_reaches_the_client_as_an_error_result_with_its_code(call_as: CallAs) -> None:
    result = await call_as(None).call_tool("mem", {"op": "get", "key": "signature", "scope": "user"})
    assert result.is_error
    assert result.meta is not None
    assert result.meta["mcpkit/error"]["code"] == "REMEMBER_IDENTITY_REQUIRED"
    assert "Traceback" not in result.content[0].text  # type: ignore[union-attr]


# -- session -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mcp_protocol", [OLD])
async def test_session_scope_on_2025_11_25_is_kept_for_the_session(call_as: CallAs) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="ticket", value="T-1", scope="session")

    assert await mem(nour, "get", key="ticket", scope="session") == "T-1"
    assert await mem(call_as("nour", fresh=True), "get", key="ticket", scope="session") == MISSING
    assert await mem(call_as("sam"), "get", key="ticket", scope="session") == MISSING


@pytest.mark.parametrize("mcp_protocol", [OLD])
async def test_an_anonymous_caller_with_a_session_may_use_session_and_tool_scope(call_as: CallAs) -> None:
    anonymous = call_as(None)
    for scope in ("session", "tool"):
        await mem(anonymous, "set", key="ticket", value=f"T-{scope}", scope=scope)
        assert await mem(anonymous, "get", key="ticket", scope=scope) == f"T-{scope}"
        assert await mem(anonymous, "list", scope=scope) == ["ticket"]
        assert await mem(call_as(None, fresh=True), "get", key="ticket", scope=scope) == MISSING


@pytest.mark.parametrize("mcp_protocol", [NEW])
async def test_session_scope_on_2026_07_28_follows_the_signed_in_caller_across_requests(call_as: CallAs) -> None:
    await mem(call_as("nour"), "set", key="ticket", value="T-2", scope="session")

    assert await mem(call_as("nour", fresh=True), "get", key="ticket", scope="session") == "T-2"
    assert await mem(call_as("sam"), "get", key="ticket", scope="session") == MISSING


@pytest.mark.parametrize("mcp_protocol", [NEW])
@pytest.mark.parametrize("store_kind", ["memory"])
async def test_an_anonymous_caller_is_refused_session_and_tool_scope_on_2026_07_28(call_as: CallAs) -> None:
    for scope in ("session", "tool"):
        for op in ("set", "get", "knows", "list", "increment", "forget_all"):
            assert_identity_required(await refused(call_as(None), op, key="ticket", value="T-3", scope=scope))


@pytest.mark.parametrize("mcp_protocol", [NEW])
@pytest.mark.parametrize("store_kind", ["memory"])
async def test_the_defaulted_scope_is_refused_for_an_anonymous_caller_on_2026_07_28(call_as: CallAs) -> None:
    assert_identity_required(await refused(call_as(None), "set_default_scope", key="ticket", value="T-4"))


async def test_the_default_scope_is_session(call_as: CallAs) -> None:
    nour = call_as("nour")
    assert await mem(nour, "set_default_scope", key="ticket", value="T-5") == "T-5"
    assert await mem(nour, "get", key="ticket", scope="session") == "T-5"
    assert await mem(nour, "get", key="ticket", scope="user") == MISSING
    assert await mem(nour, "get", key="ticket", scope="tool") == MISSING


@pytest.mark.parametrize("mcp_protocol", [NEW])
@pytest.mark.parametrize("store_kind", ["memory"])
async def test_requests_on_2026_07_28_leave_no_entry_per_request(call_as: CallAs, mcpkit_server: Server) -> None:
    """The peer keyed session state by a per-request session id: nothing persisted, one orphan per call."""
    for number in range(10):
        await mem(call_as("nour", fresh=True), "set", key="ticket", value=f"T-{number}", scope="session")
        await mem(call_as("nour", fresh=True), "increment", key="n", scope="tool")
    assert await mem(call_as("nour"), "get", key="ticket", scope="session") == "T-9"
    assert await mem(call_as("nour"), "get", key="n", scope="tool") == 10
    # Two keys, each with its change history (the default): four entries, however many requests wrote them.
    assert len([record async for record in store_of(mcpkit_server).scan()]) == 4


# -- tool ----------------------------------------------------------------------------------------------------------


async def test_tool_scope_keeps_two_tools_apart(call_as: CallAs) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="suggested", value=["T-1"], scope="tool")
    await mem(nour, "set", key="suggested", value=["T-9"], scope="tool", tool="mem_twin")

    assert await mem(nour, "get", key="suggested", scope="tool") == ["T-1"]
    assert await mem(nour, "get", key="suggested", scope="tool", tool="mem_twin") == ["T-9"]
    assert await mem(nour, "forget", key="suggested", scope="tool", tool="mem_twin") is True
    assert await mem(nour, "get", key="suggested", scope="tool") == ["T-1"]
    assert await mem(nour, "knows", key="suggested", scope="tool", tool="mem_twin") is False


async def test_tool_scope_is_neither_session_nor_user_scope(call_as: CallAs) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="k", value="tool", scope="tool")
    assert await mem(nour, "get", key="k", scope="session") == MISSING
    assert await mem(nour, "get", key="k", scope="user") == MISSING
    await mem(nour, "set", key="k", value="session", scope="session")
    assert await mem(nour, "get", key="k", scope="tool") == "tool"


@pytest.mark.parametrize("mcp_protocol", [OLD])
async def test_tool_scope_on_2025_11_25_is_kept_for_the_session(call_as: CallAs) -> None:
    await mem(call_as("nour"), "set", key="suggested", value=["T-1"], scope="tool")
    assert await mem(call_as("nour"), "get", key="suggested", scope="tool") == ["T-1"]
    assert await mem(call_as("nour", fresh=True), "get", key="suggested", scope="tool") == MISSING


@pytest.mark.parametrize("mcp_protocol", [NEW])
async def test_tool_scope_on_2026_07_28_follows_the_signed_in_caller(call_as: CallAs) -> None:
    await mem(call_as("nour"), "set", key="suggested", value=["T-1"], scope="tool")
    assert await mem(call_as("nour", fresh=True), "get", key="suggested", scope="tool") == ["T-1"]
    assert await mem(call_as("sam"), "get", key="suggested", scope="tool") == MISSING


# -- global --------------------------------------------------------------------------------------------------------


async def test_global_scope_is_shared_by_everyone_including_anonymous(call_as: CallAs) -> None:
    await mem(call_as("nour"), "set", key="banner", value="Outage on EU-1", scope="global")
    assert await mem(call_as("sam"), "get", key="banner", scope="global") == "Outage on EU-1"
    assert await mem(call_as(None), "get", key="banner", scope="global") == "Outage on EU-1"
    assert await mem(call_as.token(jwt_token("sam@example.org")), "list", scope="global") == ["banner"]

    await mem(call_as(None), "set", key="banner", value="Resolved", scope="global")
    assert await mem(call_as("nour", fresh=True), "get", key="banner", scope="global") == "Resolved"


# -- isolation -----------------------------------------------------------------------------------------------------


async def test_sam_never_sees_nours_values_in_any_scope(call_as: CallAs) -> None:
    nour, sam = call_as("nour"), call_as("sam")
    for scope in SCOPED:
        await mem(nour, "set", key="draft:T-1", value=f"nour's {scope} draft", scope=scope)
        await mem(nour, "set", key="count", value=10, scope=scope)

    for scope in SCOPED:
        assert await mem(sam, "get", key="draft:T-1", scope=scope) == MISSING
        assert await mem(sam, "knows", key="draft:T-1", scope=scope) is False
        assert await mem(sam, "list", scope=scope) == []
        assert await mem(sam, "list", scope=scope, pattern="draft:*") == []
        assert await mem(sam, "increment", key="count", scope=scope) == 1
        assert await mem(sam, "append", key="draft:T-1", item="sam", scope=scope) == ["sam"]
        assert await mem(sam, "forget", key="draft:T-1", scope=scope) is True  # his own, just made
        assert await mem(sam, "forget_all", scope=scope) == 1
        for tool in ("mem", "mem_twin"):
            assert await mem(sam, "get", key="draft:T-1", scope=scope, tool=tool) == MISSING

    for scope in SCOPED:  # nothing Sam did touched Nour's values
        assert await mem(nour, "get", key="draft:T-1", scope=scope) == f"nour's {scope} draft"
        assert await mem(nour, "get", key="count", scope=scope) == 10
        assert await mem(nour, "list", scope=scope) == ["count", "draft:T-1"]


async def test_a_jwt_caller_and_a_static_key_caller_never_share_values(call_as: CallAs) -> None:
    nour_jwt = call_as.token(jwt_token("nour@example.org"))
    for scope in SCOPED:
        await mem(call_as("nour"), "set", key="k", value="static", scope=scope)
        assert await mem(nour_jwt, "get", key="k", scope=scope) == MISSING


@pytest.mark.parametrize("mcp_protocol", [OLD])
@pytest.mark.parametrize("store_kind", ["memory"])
@pytest.mark.parametrize("intruder", ["sam", None])
async def test_nobody_else_can_ride_nours_session_to_her_session_values(
    call_as: CallAs, mcpkit_app: object, intruder: str | None
) -> None:
    nour = call_as("nour")
    await mem(nour, "set", key="ticket", value="T-NOUR-ONLY", scope="session")
    session_id = (await nour.call("whoami"))["session_id"]
    assert session_id

    token = None if intruder is None else KEYS[intruder]
    arguments = {"op": "get", "key": "ticket", "scope": "session"}
    response = await post_tool_call(mcpkit_app, token, OLD, arguments, session_id=session_id)
    assert response.status_code == 404
    assert "T-NOUR-ONLY" not in response.text


# -- identity encoding ---------------------------------------------------------------------------------------------


async def assert_near_collision_stays_apart(call_as: CallAs, scope: str) -> None:
    """sub "a:b" + key "c" and sub "a" + key "b:c" would both be "a:b:c" if joined with ':'."""
    a_b = call_as.token(jwt_token("a:b"))
    a = call_as.token(jwt_token("a"))
    await mem(a_b, "set", key="c", value="belongs to a:b", scope=scope)

    assert await mem(a, "get", key="b:c", scope=scope) == MISSING
    assert await mem(a, "knows", key="b:c", scope=scope) is False
    assert await mem(a, "list", scope=scope) == []
    await mem(a, "set", key="b:c", value="belongs to a", scope=scope)
    assert await mem(a_b, "get", key="c", scope=scope) == "belongs to a:b"
    assert await mem(a_b, "list", scope=scope) == ["c"]
    assert await mem(a, "list", scope=scope) == ["b:c"]


async def test_a_colon_in_a_sub_or_a_key_cannot_reach_another_callers_user_entry(call_as: CallAs) -> None:
    await assert_near_collision_stays_apart(call_as, "user")


@pytest.mark.parametrize("mcp_protocol", [NEW])  # on 2025-11-25 these scopes are keyed by the session, not the sub
@pytest.mark.parametrize("scope", ["session", "tool"])
async def test_a_colon_in_a_sub_or_a_key_cannot_reach_another_callers_session_or_tool_entry(
    call_as: CallAs, scope: str
) -> None:
    await assert_near_collision_stays_apart(call_as, scope)


@pytest.mark.parametrize("mcp_protocol", [NEW])
async def test_subs_that_look_like_encoded_identities_stay_apart(call_as: CallAs) -> None:
    subs = ['a","b', "a", 'a"]', "a\\", "u", '["u","a"]', "a b", "A"]
    for sub in subs:
        await mem(call_as.token(jwt_token(sub)), "set", key="who", value=sub, scope="user")
    for sub in subs:
        assert await mem(call_as.token(jwt_token(sub)), "get", key="who", scope="user") == sub
        assert await mem(call_as.token(jwt_token(sub)), "list", scope="user") == ["who"]


@pytest.mark.parametrize("mcp_protocol", [NEW])
@pytest.mark.parametrize("store_kind", ["memory"])
async def test_a_jwt_cannot_claim_nours_static_user_id(call_as: CallAs, mcpkit_app: object) -> None:
    await mem(call_as("nour"), "set", key="signature", value="Nour", scope="user")
    arguments = {"op": "get", "key": "signature", "scope": "user"}
    genuine = await post_tool_call(mcpkit_app, KEYS["nour"], NEW, arguments)
    assert genuine.status_code == 200
    assert '"result":"Nour"' in genuine.text  # the raw request reaches her value with her key...
    response = await post_tool_call(mcpkit_app, jwt_token(static_user_id("nour")), NEW, arguments)
    assert response.status_code == 401
    assert "Nour" not in response.text


# -- self.remember.user_id -----------------------------------------------------------------------------------------


async def test_self_remember_user_id_is_the_resolved_identity(call_as: CallAs) -> None:
    nour = await call_as("nour").call("whoami")
    assert nour["remember_user_id"] == nour["user_id"] == static_user_id("nour")

    jwt_caller = await call_as.token(jwt_token("nour@example.org")).call("whoami")
    assert jwt_caller["remember_user_id"] == "nour@example.org"

    anonymous = await call_as(None).call("whoami")
    assert anonymous["remember_user_id"] is None
