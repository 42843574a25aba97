"""docs/plugins.md: its example plugins run as written, and do what the page says through real HTTP."""

from __future__ import annotations

import ast
import asyncio
import inspect
import logging
import re
from pathlib import Path
from typing import Any

import pytest

from core._support import NOUR_KEY, SAM_KEY, static_user_id
from mcpkit import ConfigurationError, ManualClock, Server, StaticKeys, ToolContext, app, tool
from mcpkit.testing import CallAs, ToolCallError, running

PAGE = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"
_FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)


def compiled_blocks() -> list[Any]:
    text = PAGE.read_text()
    return [
        compile(
            m.group(1), f"plugins.md:{text.count(chr(10), 0, m.start()) + 2}", "exec", ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        )
        for m in _FENCE.finditer(text)
    ]


def is_script(code: Any) -> bool:
    """A block with top-level ``await``: meant to be run as a whole with asyncio."""
    return bool(code.co_flags & inspect.CO_COROUTINE)


def definitions() -> dict[str, Any]:
    """The page's definitions (every block without top-level await), in order, in one namespace."""
    namespace: dict[str, Any] = {"__name__": "docs_plugins"}
    for code in compiled_blocks():
        if not is_script(code):
            exec(code, namespace)
    return namespace


def test_the_page_has_the_audit_log_example_and_a_script_using_it() -> None:
    blocks = compiled_blocks()

    assert len(blocks) >= 3
    assert any(is_script(code) for code in blocks)
    assert "class AuditLog(Plugin)" in PAGE.read_text()


def test_every_block_runs_in_order_in_one_namespace(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="audit")
    namespace: dict[str, Any] = {"__name__": "docs_plugins"}

    for code in compiled_blocks():
        if is_script(code):
            asyncio.run(eval(code, namespace))
        else:
            exec(code, namespace)

    assert len(namespace["audit_records"]) == 3
    messages = [r.getMessage() for r in caplog.records if r.name == "audit"]
    assert messages[0] == "audit log open for mcpkit-server"
    assert messages[-1] == "audit log closed for mcpkit-server after 3 calls"


# -- the example through the pytest fixtures, in both protocol eras ---------------------------------


@pytest.fixture
def docs() -> dict[str, Any]:
    return definitions()


@pytest.fixture
def mcpkit_server(docs: dict[str, Any]) -> Server:
    @tool(name="crash", description="Fails unexpectedly.")
    class Crash(ToolContext):
        async def execute(self) -> str:
            raise RuntimeError("disk full")

    @app(id="ops", tools=[Crash])
    class Ops:
        pass

    return Server(
        [docs["HelpDeskApp"], Ops],
        auth=StaticKeys({"nour": NOUR_KEY, "sam": SAM_KEY}),
        plugins=[docs["AuditLog"](docs["audit_records"])],
    )


async def test_the_audit_log_records_tool_caller_and_outcome_across_apps(
    call_as: CallAs, docs: dict[str, Any], clock: ManualClock
) -> None:
    start = clock.now()
    await call_as("nour").call("close_ticket", {"ticketId": "T-1"})
    clock.advance(60)
    with pytest.raises(ToolCallError):
        await call_as("sam").call("close_ticket", {"ticketId": "42"})
    clock.advance(60)
    with pytest.raises(ToolCallError):
        await call_as("sam").call("crash")

    assert docs["audit_records"] == [
        {"at": start, "tool": "close_ticket", "user_id": static_user_id(NOUR_KEY), "outcome": "ok"},
        {"at": start + 60, "tool": "close_ticket", "user_id": static_user_id(SAM_KEY), "outcome": "TICKET_NOT_FOUND"},
        {"at": start + 120, "tool": "crash", "user_id": static_user_id(SAM_KEY), "outcome": "INTERNAL_ERROR"},
    ]


async def test_invalid_input_never_reaches_the_audit_log(call_as: CallAs, docs: dict[str, Any]) -> None:
    with pytest.raises(ToolCallError) as raised:
        await call_as("nour").call("close_ticket", {"ticket_id": "T-1"})

    assert raised.value.code == "INVALID_INPUT"
    assert docs["audit_records"] == []


async def test_my_recent_calls_lists_only_the_callers_own_calls_newest_first(call_as: CallAs) -> None:
    await call_as("nour").call("close_ticket", {"ticketId": "T-1"})
    await call_as("sam").call("close_ticket", {"ticketId": "T-2"})
    await call_as("nour").call("close_ticket", {"ticketId": "T-3"})
    await call_as("nour").call("my_recent_calls", {"limit": 1})

    recent = await call_as("nour").call("my_recent_calls")

    assert [(c["tool"], c["outcome"]) for c in recent["calls"]] == [
        ("my_recent_calls", "ok"),
        ("close_ticket", "ok"),
        ("close_ticket", "ok"),
    ]
    assert {c["user_id"] for c in recent["calls"]} == {static_user_id(NOUR_KEY)}


async def test_the_maintenance_plugin_refuses_and_the_audit_log_records_the_refusal(docs: dict[str, Any]) -> None:
    async with running(docs["maintained"]) as call_as:
        with pytest.raises(ToolCallError) as raised:
            await call_as("nour").call("close_ticket", {"ticketId": "T-1"})

    assert raised.value.code == "MAINTENANCE"
    assert [(r["tool"], r["outcome"]) for r in docs["audit_records"]] == [("close_ticket", "MAINTENANCE")]


async def test_two_servers_share_the_records_list_but_not_their_setup(docs: dict[str, Any]) -> None:
    template = docs["AuditLog"](docs["audit_records"])
    one = Server([docs["HelpDeskApp"]], name="one", auth=StaticKeys({"nour": NOUR_KEY}), plugins=[template])
    two = Server([docs["HelpDeskApp"]], name="two", auth=StaticKeys({"nour": NOUR_KEY}), plugins=[template])
    async with running(one) as on_one, running(two) as on_two:
        await on_one("nour").call("close_ticket", {"ticketId": "T-1"})
        await on_two("nour").call("close_ticket", {"ticketId": "T-2"})
        trail_on_two = await on_two("nour").call("my_recent_calls")

    assert len(docs["audit_records"]) == 3
    assert len(trail_on_two["calls"]) == 2
    assert not hasattr(template, "server_name")


def test_a_plugin_that_contributes_tools_cannot_be_given_twice_in_one_server(docs: dict[str, Any]) -> None:
    @app(id="audited", tools=[], plugins=[docs["AuditLog"]([])])
    class Audited:
        pass

    with pytest.raises(ConfigurationError, match="AuditLog and AuditLog both add the attribute 'audit_trail'"):
        Server([Audited], allow_anonymous=True, plugins=[docs["AuditLog"]([])])
