"""Middleware over every MCP method (issue 12): it sees each request with its caller in both eras, can time it,
change the result (hide tools from anonymous callers), refuse it with a coded error, and runs in order; notifications
pass it by; a server without middleware has none on its path."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import MCPError

from mcpkit import (
    MethodCall,
    MethodRefused,
    PromptContext,
    Server,
    StaticKeys,
    ToolContext,
    app,
    prompt,
    tool,
)
from mcpkit.testing import running

KEYS = {"nour": "nour-key-0123456789abcdef"}


@tool(name="ping", description="Answer pong.")
class Ping(ToolContext):
    async def execute(self) -> str:
        return "pong"


@tool(name="close_ticket", description="Close a ticket (signed-in agents only).")
class CloseTicket(ToolContext):
    async def execute(self, ticket_id: str) -> str:
        return f"closed {ticket_id}"


@prompt(name="hello", description="Say hello.")
class Hello(PromptContext):
    async def render(self) -> str:
        return "Hello!"


@app(id="desk", tools=[Ping, CloseTicket], prompts=[Hello])
class DeskApp: ...


def make_server(*middleware: Any) -> Server:
    return Server([DeskApp], auth=StaticKeys(KEYS), allow_anonymous=True, middleware=list(middleware))


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
async def test_it_sees_every_request_with_its_caller_in_order(protocol: str) -> None:
    seen: list[tuple[str, str, str | None, str | None]] = []

    def recording(label: str) -> Any:
        async def middleware(call: MethodCall, call_next: Any) -> Any:
            seen.append((label, call.method, call.name, call.caller.user_id and call.caller.kind))
            return await call_next(call)

        return middleware

    async with running(make_server(recording("outer"), recording("inner")), protocol=protocol) as call_as:
        nour = call_as("nour")
        await nour.list_tools()
        await nour.call("ping")
        await nour.get_prompt("hello")
    methods = [(label, method, name, kind) for label, method, name, kind in seen if method != "initialize"]
    assert methods == [
        ("outer", "tools/list", None, "static"),
        ("inner", "tools/list", None, "static"),
        ("outer", "tools/call", "ping", "static"),
        ("inner", "tools/call", "ping", "static"),
        ("outer", "prompts/get", "hello", "static"),
        ("inner", "prompts/get", "hello", "static"),
    ]


async def hide_closing_from_anonymous(call: MethodCall, call_next: Any) -> Any:
    if call.caller.user_id is None and call.method == "tools/call" and call.name == "close_ticket":
        raise MethodRefused("SIGN_IN_REQUIRED", "Closing a ticket needs a signed-in agent: send your key.")
    result = await call_next(call)
    if call.caller.user_id is None and call.method == "tools/list":
        result = {**result, "tools": [t for t in result["tools"] if t["name"] != "close_ticket"]}
    return result


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
async def test_it_can_filter_a_list_per_caller_and_refuse_with_a_code(protocol: str) -> None:
    async with running(make_server(hide_closing_from_anonymous), protocol=protocol) as call_as:
        assert [t.name for t in await call_as("nour").list_tools()] == ["ping", "close_ticket"]
        assert [t.name for t in await call_as(None).list_tools()] == ["ping"]
        assert await call_as("nour").call("close_ticket", {"ticket_id": "T-1"}) == "closed T-1"
        with pytest.raises(Exception) as refused:  # noqa: PT011 (HTTPRefusedError on 2026-07-28, MCPError before)
            await call_as(None).call("close_ticket", {"ticket_id": "T-1"})
    error = refused.value
    code = getattr(error, "code", None) if not isinstance(error, MCPError) else error.error.code
    assert code == -32600
    assert "Closing a ticket needs a signed-in agent" in str(error)


async def test_a_timing_middleware_gets_the_wire_result() -> None:
    results: dict[str, Any] = {}

    async def keep(call: MethodCall, call_next: Any) -> Any:
        result = await call_next(call)
        results[call.method] = result
        return result

    async with running(make_server(keep)) as call_as:
        assert await call_as("nour").call("ping") == "pong"
    assert results["tools/call"]["content"] == [{"type": "text", "text": "pong"}]
    assert results["tools/call"]["isError"] is False


def test_a_middleware_that_is_not_callable_is_refused() -> None:
    from mcpkit import ConfigurationError

    with pytest.raises(ConfigurationError, match="is not an async function"):
        make_server("not a function")
    with pytest.raises(ValueError, match="UPPER_SNAKE_CASE"):
        MethodRefused("lower", "x")
