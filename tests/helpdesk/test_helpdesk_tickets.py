"""The ticket an agent works on (session scope, the default) and next_ticket's suggestions (tool scope)."""

from __future__ import annotations

import asyncio

import pytest

from mcpkit.testing import CallAs, ToolCallError
from mcpkit_helpdesk import QUEUE

NEWEST = pytest.mark.parametrize("mcp_protocol", ["2026-07-28"])
SESSIONS = pytest.mark.parametrize("mcp_protocol", ["2025-11-25"])


async def test_the_ticket_lasts_for_nour_across_requests(call_as: CallAs) -> None:
    nour = call_as("nour")
    assert await nour.call("current_ticket") == {"ticketId": None}
    assert await nour.call("work_on", {"ticketId": "T-3"}) == {"ticketId": "T-3"}
    assert await nour.call("current_ticket") == {"ticketId": "T-3"}
    assert await nour.call("current_ticket") == {"ticketId": "T-3"}


async def test_sam_does_not_see_nours_ticket(call_as: CallAs) -> None:
    await call_as("nour").call("work_on", {"ticketId": "T-3"})
    assert await call_as("sam").call("current_ticket") == {"ticketId": None}
    await call_as("sam").call("work_on", {"ticketId": "T-4"})
    assert await call_as("nour").call("current_ticket") == {"ticketId": "T-3"}


@NEWEST
async def test_on_2026_07_28_nours_ticket_follows_her_to_a_new_connection(call_as: CallAs) -> None:
    await call_as("nour").call("work_on", {"ticketId": "T-3"})
    assert await call_as("nour", fresh=True).call("current_ticket") == {"ticketId": "T-3"}


@SESSIONS
async def test_on_2025_11_25_the_ticket_belongs_to_the_session(call_as: CallAs) -> None:
    await call_as("nour").call("work_on", {"ticketId": "T-3"})
    assert await call_as("nour", fresh=True).call("current_ticket") == {"ticketId": None}


@NEWEST
@pytest.mark.parametrize(("tool_name", "arguments"), [("work_on", {"ticketId": "T-1"}), ("current_ticket", {})])
async def test_anonymous_caller_is_refused_session_scope_on_2026_07_28(
    call_as: CallAs, tool_name: str, arguments: dict[str, str]
) -> None:
    with pytest.raises(ToolCallError) as refused:
        await call_as(None).call(tool_name, arguments)
    assert refused.value.code == "REMEMBER_IDENTITY_REQUIRED"
    assert "session scope" in refused.value.message


@SESSIONS
async def test_anonymous_caller_with_a_session_may_use_session_scope_on_2025_11_25(call_as: CallAs) -> None:
    visitor = call_as(None)
    assert await visitor.call("work_on", {"ticketId": "T-2"}) == {"ticketId": "T-2"}
    assert await visitor.call("current_ticket") == {"ticketId": "T-2"}
    assert await call_as(None, fresh=True).call("current_ticket") == {"ticketId": None}
    assert await call_as("nour").call("current_ticket") == {"ticketId": None}


async def test_next_ticket_never_suggests_the_same_ticket_twice_to_one_agent(call_as: CallAs) -> None:
    nour = call_as("nour")
    suggested = [(await nour.call("next_ticket"))["ticketId"] for _ in QUEUE]
    assert sorted(suggested) == sorted(QUEUE)
    assert await nour.call("next_ticket") == {"ticketId": None}
    assert await nour.call("next_ticket") == {"ticketId": None}


async def test_next_ticket_is_independent_per_agent(call_as: CallAs) -> None:
    nour, sam = call_as("nour"), call_as("sam")
    first = await nour.call("next_ticket")
    await nour.call("next_ticket")
    assert await sam.call("next_ticket") == first
    sams = [first["ticketId"]] + [(await sam.call("next_ticket"))["ticketId"] for _ in QUEUE[1:]]
    assert sorted(sams) == sorted(QUEUE)
    assert len({(await nour.call("next_ticket"))["ticketId"] for _ in QUEUE[2:]}) == len(QUEUE) - 2


@NEWEST
async def test_on_2026_07_28_next_ticket_remembers_across_connections(call_as: CallAs) -> None:
    first = await call_as("nour").call("next_ticket")
    assert await call_as("nour", fresh=True).call("next_ticket") != first


@SESSIONS
async def test_on_2025_11_25_next_ticket_starts_over_in_a_new_session(call_as: CallAs) -> None:
    first = await call_as("nour").call("next_ticket")
    assert await call_as("nour", fresh=True).call("next_ticket") == first


async def test_next_ticket_calls_at_once_get_different_tickets(call_as: CallAs) -> None:
    nour = call_as("nour")
    results = await asyncio.gather(*(nour.call("next_ticket") for _ in QUEUE))
    assert sorted(result["ticketId"] for result in results) == sorted(QUEUE)


async def test_next_tickets_bookkeeping_is_its_own(call_as: CallAs) -> None:
    nour = call_as("nour")
    await nour.call("work_on", {"ticketId": "T-1"})
    assert await nour.call("next_ticket") == {"ticketId": "T-1"}  # working on it does not skip it
    assert await nour.call("current_ticket") == {"ticketId": "T-1"}
