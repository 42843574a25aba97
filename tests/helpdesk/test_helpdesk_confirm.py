"""``send_reply`` asks the agent to confirm when the client can be asked (issue 12), and sends as the tutorial did
when it cannot; the draft goes only once the agent said yes, and stays when they said no."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from helpdesk import DEMO_KEYS, create_server


class Agent:
    def __init__(self, confirm: bool | None) -> None:
        self.confirm = confirm  # None: dismisses the question
        self.asked: list[str] = []

    async def answer(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params.message)
        if self.confirm is None:
            return types.ElicitResult(action="cancel")
        return types.ElicitResult(action="accept", content={"confirm": self.confirm})


@contextlib.asynccontextmanager
async def desk(agent: Agent | None) -> AsyncIterator[Client]:
    asgi = create_server(keys=DEMO_KEYS).http_app()
    options = {"elicitation_callback": agent.answer} if agent is not None else {}
    async with asgi.router.lifespan_context(asgi):
        transport = httpx2.ASGITransport(app=asgi)
        headers = {"Authorization": f"Bearer {DEMO_KEYS['nour']}"}
        async with (
            httpx2.AsyncClient(transport=transport, headers=headers) as http,
            Client(
                streamable_http_client("http://127.0.0.1:8000/mcp", http_client=http), mode="2026-07-28", **options
            ) as client,
        ):
            yield client


async def save_and_send(client: Client) -> tuple[Any, Any]:
    await client.call_tool("save_draft", {"ticketId": "T-4", "text": "Your refund is on its way."})
    sent = (await client.call_tool("send_reply", {"ticketId": "T-4"})).structured_content
    left = (await client.call_tool("get_draft", {"ticketId": "T-4"})).structured_content
    return sent, left


async def test_the_agent_confirms_and_the_reply_is_sent_once() -> None:
    agent = Agent(confirm=True)
    async with desk(agent) as client:
        sent, left = await save_and_send(client)
    assert sent == {"sent": True, "text": "Your refund is on its way."}
    assert left == {"draft": None}
    assert agent.asked == ["Send this reply to T-4?\n\nYour refund is on its way."]


@pytest.mark.parametrize("confirm", [False, None])
async def test_a_no_or_a_dismissal_keeps_the_draft(confirm: bool | None) -> None:
    async with desk(Agent(confirm)) as client:
        sent, left = await save_and_send(client)
    assert sent == {"sent": False}
    assert left == {"draft": "Your refund is on its way."}


async def test_a_client_that_cannot_be_asked_sends_as_the_tutorial_did() -> None:
    async with desk(None) as client:
        sent, left = await save_and_send(client)
    assert sent == {"sent": True, "text": "Your refund is on its way."}
    assert left == {"draft": None}
