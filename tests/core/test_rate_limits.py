"""Rate limits per caller: a token bucket per caller for the server's calls and per tool; RATE_LIMITED with when
to retry; signed-in callers by user id, anonymous ones by address; time from the framework clock."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit import ConfigurationError, ManualClock, Server, StaticKeys, ToolContext, app, tool
from mcpkit.testing import ToolCallError, running

KEYS = {"nour": "nour-key-0123456789abcdef", "sam": "sam-key-0123456789abcdef"}


@tool(name="ping", description="Answer pong.")
class Ping(ToolContext):
    async def execute(self) -> str:
        return "pong"


@tool(name="send_email", description="Send an email (expensive).", rate_limit="2/minute")
class SendEmail(ToolContext):
    async def execute(self, to: str) -> dict[str, str]:
        return {"sent": to}


@app(id="desk", tools=[Ping, SendEmail])
class DeskApp: ...


def make_server(**options: Any) -> Server:
    return Server([DeskApp], auth=StaticKeys(KEYS), allow_anonymous=True, **options)


async def refusal(call: Any) -> ToolCallError:
    with pytest.raises(ToolCallError) as caught:
        await call
    return caught.value


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
async def test_a_tools_own_limit_refuses_the_call_over_it_and_refills_with_time(protocol: str) -> None:
    clock = ManualClock()
    async with running(make_server(), protocol=protocol, clock=clock) as call_as:
        nour = call_as("nour")
        for _ in range(2):
            assert await nour.call("send_email", {"to": "a@example.com"}) == {"sent": "a@example.com"}
        refused = await refusal(nour.call("send_email", {"to": "a@example.com"}))
        assert refused.code == "RATE_LIMITED"
        assert "at most 2/minute" in refused.message
        assert "retry in 30 s" in refused.message  # one call back every 30 s
        assert refused.result.meta is not None
        assert refused.result.meta["mcpkit/error"]["retry_after_seconds"] == 30
        assert await nour.call("ping", {}) == "pong"  # other tools are not this tool's limit
        assert await call_as("sam").call("send_email", {"to": "b@example.com"}) == {"sent": "b@example.com"}
        clock.advance(30)
        assert await nour.call("send_email", {"to": "a@example.com"}) == {"sent": "a@example.com"}
        assert (await refusal(nour.call("send_email", {"to": "a@example.com"}))).code == "RATE_LIMITED"


async def test_the_servers_limit_counts_every_tool_and_anonymous_callers_by_address() -> None:
    clock = ManualClock()
    async with running(make_server(rate_limit="3/second"), clock=clock) as call_as:
        nour = call_as("nour")
        assert await nour.call("ping", {}) == "pong"
        assert await nour.call("send_email", {"to": "a@example.com"}) == {"sent": "a@example.com"}
        assert await nour.call("ping", {}) == "pong"
        refused = await refusal(nour.call("ping", {}))
        assert refused.code == "RATE_LIMITED"
        assert "calls to this server" in refused.message
        first, second = call_as.anonymous(fresh=True), call_as.anonymous(fresh=True)  # one address: one bucket
        for _ in range(3):
            assert await first.call("ping", {}) == "pong"
        assert (await refusal(second.call("ping", {}))).code == "RATE_LIMITED"
        clock.advance(1)
        assert await second.call("ping", {}) == "pong"


@pytest.mark.parametrize("limit", ["10 per minute", "0/minute", "5/day", 5])
def test_a_limit_that_is_not_one_is_refused_when_the_server_is_built(limit: Any) -> None:
    with pytest.raises(ConfigurationError, match="written like '60/minute'"):
        make_server(rate_limit=limit)

    @tool(name="bad", description="Bad.", rate_limit=limit)
    class Bad(ToolContext):
        async def execute(self) -> str:
            return "x"

    @app(id="bad", tools=[Bad])
    class BadApp: ...

    with pytest.raises(ConfigurationError, match="written like '60/minute'"):
        Server([BadApp], allow_anonymous=True)


async def test_a_call_one_limit_refuses_does_not_use_up_the_other() -> None:
    clock = ManualClock()
    async with running(make_server(rate_limit="4/minute"), clock=clock) as call_as:
        nour = call_as("nour")
        for _ in range(2):
            await nour.call("send_email", {"to": "a@example.com"})
        for _ in range(5):  # refused by the tool's own limit: the server's budget is not spent
            assert (await refusal(nour.call("send_email", {"to": "a@example.com"}))).code == "RATE_LIMITED"
        assert await nour.call("ping", {}) == "pong"
        assert await nour.call("ping", {}) == "pong"  # 2 + 2 = the server's 4
        refused = await refusal(nour.call("ping", {}))
        assert "calls to this server" in refused.message
