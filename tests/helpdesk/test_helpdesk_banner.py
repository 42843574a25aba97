"""The banner is global: whoever sets it, every caller of that server reads it, and only that server."""

from __future__ import annotations

from mcpkit.testing import CallAs
from mcpkit_helpdesk import DEMO_KEYS, create_server

OUTAGE = "Email is down; we are on it."


async def test_there_is_no_banner_at_first(call_as: CallAs) -> None:
    assert await call_as("sam").call("get_banner") == {"banner": None}


async def test_banner_set_by_nour_is_read_by_sam_and_by_an_anonymous_caller(call_as: CallAs) -> None:
    assert await call_as("nour").call("set_banner", {"text": OUTAGE}) == {"banner": OUTAGE}
    assert await call_as("sam").call("get_banner") == {"banner": OUTAGE}
    assert await call_as(None).call("get_banner") == {"banner": OUTAGE}
    assert await call_as(None, fresh=True).call("get_banner") == {"banner": OUTAGE}


async def test_anonymous_caller_can_set_the_banner_too(call_as: CallAs) -> None:
    assert await call_as(None).call("set_banner", {"text": OUTAGE}) == {"banner": OUTAGE}
    assert await call_as("nour").call("get_banner") == {"banner": OUTAGE}


async def test_banner_on_one_server_is_not_seen_by_another_with_its_own_memory(call_as: CallAs, serve) -> None:
    await call_as("nour").call("set_banner", {"text": OUTAGE})
    async with serve(create_server(keys=DEMO_KEYS)) as other:
        assert await other("sam").call("get_banner") == {"banner": None}
        assert await other(None).call("get_banner") == {"banner": None}
        await other(None).call("set_banner", {"text": "All systems normal."})
        assert await other("nour").call("get_banner") == {"banner": "All systems normal."}
    assert await call_as("sam").call("get_banner") == {"banner": OUTAGE}
