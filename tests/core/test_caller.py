"""``self.caller`` in both protocol eras: sessions, anonymous ids and the negotiated protocol version."""

from __future__ import annotations

import pytest

from core._support import (
    LEGACY,
    MODERN,
    NOUR_KEY,
    IdentityApp,
    call_legacy,
    call_modern,
    open_legacy_session,
    post_modern,
    running,
    static_user_id,
    structured,
)
from mcpkit import Server, StaticKeys
from mcpkit.testing import CallAs


@pytest.fixture
def mcpkit_server() -> Server:
    return Server([IdentityApp], auth=StaticKeys({"nour": NOUR_KEY}), allow_anonymous=True)


async def test_the_caller_reports_the_protocol_era_of_the_request(call_as: CallAs, mcp_protocol: str) -> None:
    caller = await call_as("nour").call("whoami")

    assert caller["protocol_version"] == mcp_protocol


async def test_a_signed_in_caller_has_user_id_kind_and_label_in_both_eras(call_as: CallAs) -> None:
    caller = await call_as("nour").call("whoami")

    assert caller["user_id"] == static_user_id(NOUR_KEY)
    assert caller["kind"] == "static"
    assert caller["label"] == "nour"


@pytest.mark.parametrize("mcp_protocol", [MODERN])
async def test_on_2026_07_28_there_is_no_session_and_the_anonymous_id_is_fresh_per_request(call_as: CallAs) -> None:
    anonymous = call_as(None)
    first = await anonymous.call("whoami")
    second = await anonymous.call("whoami")

    assert first["session_id"] is None
    assert second["session_id"] is None
    assert first["user_id"] is None
    assert first["kind"] == "anonymous"
    assert first["anonymous_id"].startswith("anon:")
    assert second["anonymous_id"].startswith("anon:")
    assert first["anonymous_id"] != second["anonymous_id"]


@pytest.mark.parametrize("mcp_protocol", [LEGACY])
async def test_on_2025_11_25_the_anonymous_id_is_stable_within_a_session_and_differs_across_sessions(
    call_as: CallAs,
) -> None:
    one = call_as(None)
    other = call_as(None, fresh=True)
    first = await one.call("whoami")
    again = await one.call("whoami")
    elsewhere = await other.call("whoami")

    assert first["session_id"] is not None
    assert first["session_id"] == again["session_id"]
    assert first["anonymous_id"].startswith("anon:")
    assert first["anonymous_id"] == again["anonymous_id"]
    assert elsewhere["session_id"] != first["session_id"]
    assert elsewhere["anonymous_id"] != first["anonymous_id"]


async def test_on_2025_11_25_the_session_id_is_the_mcp_session_id_header() -> None:
    async with running(Server([IdentityApp], allow_anonymous=True).http_app()) as http:
        session = await open_legacy_session(http)
        caller = structured(await call_legacy(http, session, "whoami"))

    assert caller["session_id"] == session
    assert caller["protocol_version"] == LEGACY


async def test_on_2026_07_28_a_client_sent_mcp_session_id_is_ignored() -> None:
    async with running(Server([IdentityApp], allow_anonymous=True).http_app()) as http:
        response = await post_modern(
            http,
            "tools/call",
            {"name": "whoami", "arguments": {}},
            name="whoami",
            headers={"Mcp-Session-Id": "chosen-by-the-client"},
        )
        plain = structured(await call_modern(http, "whoami"))

    caller = structured(response)
    assert caller["session_id"] is None
    assert caller["protocol_version"] == MODERN
    assert plain["session_id"] is None


async def test_the_same_key_in_two_sessions_is_the_same_user_in_different_sessions() -> None:
    server = Server([IdentityApp], auth=StaticKeys({"nour": NOUR_KEY}))
    async with running(server.http_app()) as http:
        first_session = await open_legacy_session(http, token=NOUR_KEY)
        second_session = await open_legacy_session(http, token=NOUR_KEY)
        first = structured(await call_legacy(http, first_session, "whoami", token=NOUR_KEY))
        second = structured(await call_legacy(http, second_session, "whoami", token=NOUR_KEY))

    assert first["user_id"] == second["user_id"] == static_user_id(NOUR_KEY)
    assert first["session_id"] != second["session_id"]
    assert first["anonymous_id"] != second["anonymous_id"]
