"""Reply drafts: per agent, kept for a day (the clock moves, nobody sleeps), forgotten once sent."""

from __future__ import annotations

from mcpkit import ManualClock
from mcpkit.testing import CallAs
from mcpkit_helpdesk import DRAFT_TTL

HOUR = 60 * 60
DRAFT = {"ticketId": "T-1", "text": "We have reset your password."}


def test_drafts_are_kept_for_a_day() -> None:
    assert DRAFT_TTL == 24 * HOUR


async def test_a_draft_is_there_23_hours_later_and_gone_after_25(call_as: CallAs, clock: ManualClock) -> None:
    nour = call_as("nour")
    assert await nour.call("save_draft", DRAFT) == {"saved": "T-1"}
    clock.advance(23 * HOUR)
    assert await call_as("nour", fresh=True).call("get_draft", {"ticketId": "T-1"}) == {"draft": DRAFT["text"]}
    clock.advance(2 * HOUR)
    assert await call_as("nour", fresh=True).call("get_draft", {"ticketId": "T-1"}) == {"draft": None}


async def test_send_reply_sends_once_and_then_finds_no_draft(call_as: CallAs) -> None:
    nour = call_as("nour")
    await nour.call("save_draft", DRAFT)
    assert await nour.call("send_reply", {"ticketId": "T-1"}) == {"sent": True, "text": DRAFT["text"]}
    assert await nour.call("send_reply", {"ticketId": "T-1"}) == {"sent": False}
    assert await nour.call("get_draft", {"ticketId": "T-1"}) == {"draft": None}


async def test_send_reply_without_a_draft_sends_nothing(call_as: CallAs) -> None:
    result = await call_as("nour").call_tool("send_reply", {"ticketId": "T-9"})
    assert result.structured_content == {"sent": False}  # no "text" key at all
    assert not result.is_error


async def test_an_expired_draft_is_not_sent(call_as: CallAs, clock: ManualClock) -> None:
    nour = call_as("nour")
    await nour.call("save_draft", DRAFT)
    clock.advance(25 * HOUR)
    assert await nour.call("send_reply", {"ticketId": "T-1"}) == {"sent": False}


async def test_drafts_are_each_agents_own(call_as: CallAs) -> None:
    await call_as("nour").call("save_draft", DRAFT)
    sam = call_as("sam")
    assert await sam.call("get_draft", {"ticketId": "T-1"}) == {"draft": None}
    assert await sam.call("send_reply", {"ticketId": "T-1"}) == {"sent": False}
    assert await call_as("nour").call("get_draft", {"ticketId": "T-1"}) == {"draft": DRAFT["text"]}


async def test_drafts_are_kept_per_ticket(call_as: CallAs) -> None:
    nour = call_as("nour")
    await nour.call("save_draft", DRAFT)
    await nour.call("save_draft", {"ticketId": "T-2", "text": "Other"})
    await nour.call("send_reply", {"ticketId": "T-2"})
    assert await nour.call("get_draft", {"ticketId": "T-1"}) == {"draft": DRAFT["text"]}
