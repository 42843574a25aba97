"""Asking the client while a tool runs (issue 12): ``self.elicit``, ``self.sample`` and ``self.roots`` through the
official client in both eras — 2026-07-28 as sealed multi-round calls (round one on one instance, round two on
another sharing the secret; a tampered or foreign state refused), 2025-11-25 as live requests on a real SSE server —
and a client that cannot be asked getting a coded error, or a tool that checks first and goes on without asking."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from _support import URL, body_of, post_modern
from _support import running as serving_asgi
from elicitation_server import KEYS, make_server
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from reliability.processes import serving

HERE = Path(__file__).resolve().parent
ASKED = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
NAME_THEN_YES = {"Who is sending this?": {"name": "Nour"}}


class User:
    """Answers elicitations (the person), sampling (the model) and roots (the client), and counts them."""

    def __init__(self, action: str = "accept", confirm: bool = True) -> None:
        self.action = action
        self.confirm = confirm
        self.asked: list[str] = []

    async def elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params.message)
        if self.action != "accept":
            return types.ElicitResult(action=self.action)  # type: ignore[arg-type]
        if params.message.startswith("Who "):
            return types.ElicitResult(action="accept", content={"name": "Nour"})
        return types.ElicitResult(action="accept", content={"confirm": self.confirm})

    async def sample(self, context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        self.asked.append(f"sample: {params.messages[0].content.text} / {params.system_prompt}")  # type: ignore[union-attr]
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="short"), model="m"
        )

    async def roots(self, context: Any) -> types.ListRootsResult:
        self.asked.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri="file:///work/desk", name="desk")])


@contextlib.asynccontextmanager
async def client(http: httpx2.AsyncClient, url: str, mode: str, user: User | None) -> AsyncIterator[Client]:
    callbacks = (
        {"elicitation_callback": user.elicit, "sampling_callback": user.sample, "list_roots_callback": user.roots}
        if user is not None
        else {}
    )
    async with Client(streamable_http_client(url, http_client=http), mode=mode, **callbacks) as connected:
        yield connected


@contextlib.asynccontextmanager
async def in_process(mode: str, user: User | None, **app_options: Any) -> AsyncIterator[Client]:
    asgi = make_server().http_app(**app_options)
    async with asgi.router.lifespan_context(asgi):
        http = httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=asgi), headers={"Authorization": f"Bearer {KEYS['nour']}"}
        )
        async with http, client(http, URL, mode, user) as connected:
            yield connected


@pytest.fixture(scope="module", params=[[], ["--sse"]], ids=["default", "sse"])
def sse_server(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[str]:
    """``mcpkit run elicitation_server.py:server``, by default (the call's answer becomes a stream when it asks)
    and with ``--sse``: 2025-11-25 questions are live requests, on the call's own stream (an in-process ASGI
    transport holds the response back until the call ends, so it cannot)."""
    with serving(
        f"{HERE / 'elicitation_server.py'}:server", cwd=tmp_path_factory.mktemp("sse"), args=request.param
    ) as server:
        yield server.url


async def test_2026_07_28_questions_are_rounds_and_the_tool_runs_again_each_time() -> None:
    user = User()
    async with in_process("2026-07-28", user) as c:
        result = await c.call_tool("send_greeting", {"text": "hi"})
    assert result.structured_content == {"sent": True, "by": "Nour"}
    assert user.asked == ["Who is sending this?", "Send 'hi' as Nour?"]


async def test_2025_11_25_questions_are_live_requests(sse_server: str) -> None:
    user = User()
    headers = {"Authorization": f"Bearer {KEYS['nour']}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http, client(http, sse_server, "legacy", user) as c:
        greeting = await c.call_tool("send_greeting", {"text": "hi"})
        summary = await c.call_tool("summarise", {"text": "a long thread"})
        roots = await c.call_tool("where_am_i", {})
    assert greeting.structured_content == {"sent": True, "by": "Nour"}
    assert summary.content == [types.TextContent(type="text", text="short")]
    assert roots.content == [types.TextContent(type="text", text='["file:///work/desk"]')]
    assert user.asked == [
        "Who is sending this?",
        "Send 'hi' as Nour?",
        "sample: Summarise: a long thread / Be brief.",
        "roots",
    ]


@pytest.mark.parametrize(
    ("action", "confirm", "expected"),
    [
        ("decline", True, {"sent": False, "why": "decline"}),
        ("cancel", True, {"sent": False, "why": "cancel"}),
        ("accept", False, {"sent": False, "why": "not confirmed"}),
    ],
)
async def test_a_declined_or_cancelled_question_is_the_tools_to_handle(
    action: str, confirm: bool, expected: dict[str, Any]
) -> None:
    async with in_process("2026-07-28", User(action, confirm)) as c:
        assert (await c.call_tool("send_greeting", {"text": "hi"})).structured_content == expected


async def test_a_broad_except_in_the_tool_does_not_swallow_the_round() -> None:
    async with in_process("2026-07-28", User()) as c:
        result = await c.call_tool("ask_carelessly", {})
    assert result.content == [types.TextContent(type="text", text="went ahead")]


async def test_sampling_and_roots_as_2026_07_28_rounds() -> None:
    user = User()
    async with in_process("2026-07-28", user) as c:
        summary = await c.call_tool("summarise", {"text": "a long thread"})
        roots = await c.call_tool("where_am_i", {})
    assert summary.content == [types.TextContent(type="text", text="short")]
    assert roots.content == [types.TextContent(type="text", text='["file:///work/desk"]')]


@pytest.mark.parametrize(
    ("mode", "options"), [("2026-07-28", {}), ("legacy", {}), ("legacy", {"json_response": False})]
)
async def test_a_client_that_cannot_be_asked_gets_a_coded_error_or_a_tool_that_checked(
    mode: str, options: dict[str, Any]
) -> None:
    async with in_process(mode, None, **options) as c:  # declares no elicitation capability
        refused = await c.call_tool("send_greeting", {"text": "hi"})
        polite = await c.call_tool("polite_send", {})
    assert refused.is_error
    assert refused.meta is not None
    assert refused.meta["mcpkit/error"]["code"] == "INPUT_UNAVAILABLE"
    assert "the client did not declare the 'elicitation' capability" in refused.content[0].text  # type: ignore[union-attr]
    assert polite.content == [types.TextContent(type="text", text="sent without asking")]


async def _round_one(http: httpx2.AsyncClient) -> dict[str, Any]:
    params = {"name": "send_greeting", "arguments": {"text": "hi"}, "_meta": ASKED}
    first = body_of(await post_modern(http, "tools/call", params, token=KEYS["nour"], name="send_greeting"))
    return dict(first["result"])


async def _round_two(
    http: httpx2.AsyncClient, state: str, token: str = KEYS["nour"], text: str = "hi"
) -> httpx2.Response:
    params = {
        "name": "send_greeting",
        "arguments": {"text": text},
        "inputResponses": {"who": {"action": "accept", "content": {"name": "Nour"}}},
        "requestState": state,
        "_meta": ASKED,
    }
    return await post_modern(http, "tools/call", params, token=token, name="send_greeting")


async def test_a_round_can_land_on_another_instance_with_the_same_secret_and_on_no_other() -> None:
    async with serving_asgi(make_server().http_app()) as first, serving_asgi(make_server().http_app()) as second:
        round_one = await _round_one(first)
        assert round_one["resultType"] == "input_required"
        assert list(round_one["inputRequests"]) == ["who"]
        assert round_one["inputRequests"]["who"]["params"]["requestedSchema"]["required"] == ["name"]
        state = round_one["requestState"]
        assert "answers" not in state  # sealed: the client cannot read or change it
        round_two = body_of(await _round_two(second, state))["result"]
        assert round_two["resultType"] == "input_required"
        assert list(round_two["inputRequests"]) == ["sure"]  # the next question, answers so far carried along
    async with serving_asgi(make_server("another-secret-of-another-deployment-0123456789").http_app()) as foreign:
        refused = await _round_two(foreign, state)
        assert body_of(refused)["error"]["code"] == -32602


@pytest.mark.parametrize("change", ["tamper", "other_caller", "other_arguments"])
async def test_a_tampered_or_misused_state_is_refused(change: str) -> None:
    async with serving_asgi(make_server().http_app()) as http:
        state = (await _round_one(http))["requestState"]
        if change == "tamper":
            response = await _round_two(http, state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB"))
        elif change == "other_caller":
            response = await _round_two(http, state, token=KEYS["sam"])
        else:
            response = await _round_two(http, state, text="something else")
    error = body_of(response)["error"]
    assert error["code"] == -32602
    assert error["message"] == "Invalid or expired requestState"
    assert json.dumps(error).count("Nour") == 0


async def test_questions_asked_together_come_in_one_round_and_prompts_can_ask(sse_server: str) -> None:
    user = User()
    async with in_process("2026-07-28", user) as c:
        together = await c.call_tool("ask_together", {})
        briefing = await c.get_prompt("briefing")
    assert together.content == [types.TextContent(type="text", text="Nour in 1 root(s)")]
    assert briefing.messages[0].content == types.TextContent(type="text", text="Brief Nour on today's tickets.")
    live = User()
    headers = {"Authorization": f"Bearer {KEYS['nour']}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http, client(http, sse_server, "legacy", live) as c:
        assert (await c.call_tool("ask_together", {})).content == together.content
        assert (await c.get_prompt("briefing")).messages == briefing.messages


async def test_2026_07_28_questions_asked_together_are_one_input_required_result() -> None:
    async with serving_asgi(make_server().http_app()) as http:
        meta = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "roots": {}}}
        params = {"name": "ask_together", "arguments": {}, "_meta": meta}
        result = body_of(await post_modern(http, "tools/call", params, token=KEYS["nour"], name="ask_together"))[
            "result"
        ]
    assert result["resultType"] == "input_required"
    assert {key: request["method"] for key, request in result["inputRequests"].items()} == {
        "ask-1": "elicitation/create",
        "ask-2": "roots/list",
    }


def test_a_state_secret_too_short_or_not_a_list_is_refused_when_the_server_is_built() -> None:
    from elicitation_server import AskApp

    from mcpkit import ConfigurationError, Server, StaticKeys
    from mcpkit.elicitation._request_state import MIN_SECRET_BYTES

    with pytest.raises(ConfigurationError, match=f"too short; use at least {MIN_SECRET_BYTES} random bytes"):
        Server([AskApp], auth=StaticKeys(KEYS), state_secrets=["short"])
    with pytest.raises(ConfigurationError, match="is a list of secrets"):
        Server([AskApp], auth=StaticKeys(KEYS), state_secrets="x" * 40)  # type: ignore[arg-type]


async def test_instances_share_the_secrets_in_mcpkit_state_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    from elicitation_server import AskApp

    from mcpkit import Server, StaticKeys

    def instance() -> Any:
        return Server([AskApp], auth=StaticKeys(KEYS), name="elicitation-tests").http_app()

    monkeypatch.setenv("MCPKIT_STATE_SECRETS", "a-new-secret-that-seals-from-now-on-0123456789, " + "o" * 40)
    async with serving_asgi(instance()) as first, serving_asgi(instance()) as second:
        state = (await _round_one(first))["requestState"]
        assert body_of(await _round_two(second, state))["result"]["resultType"] == "input_required"
    monkeypatch.setenv("MCPKIT_STATE_SECRETS", "o" * 40)  # the new secret dropped: what it sealed no longer opens
    async with serving_asgi(instance()) as third:
        assert body_of(await _round_two(third, state))["error"]["code"] == -32602
