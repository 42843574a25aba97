"""Failures become isError results with a machine-readable code; internals never reach the client."""

from __future__ import annotations

import logging
import re
from typing import Annotated, Any

import pytest
from pydantic import AfterValidator

from core._support import NOUR_KEY, call_legacy, open_legacy_session, running, text_of
from mcpkit import Server, StaticKeys, ToolContext, ToolError, app, tool
from mcpkit.testing import CallAs, error_code

INTERNALS = "password=hunter2 at db.internal:5432"


@tool(name="find_ticket", description="Find a ticket by id.")
class FindTicket(ToolContext):
    async def execute(self, ticket_id: str) -> str:
        raise ToolError(f"No ticket {ticket_id}; ids look like T-123.", code="TICKET_NOT_FOUND")


@tool(name="refuse", description="Refuses without a code.")
class Refuse(ToolContext):
    async def execute(self) -> str:
        raise ToolError("Not today.")


@tool(name="crash", description="Crashes.")
class Crash(ToolContext):
    async def execute(self) -> str:
        raise RuntimeError(INTERNALS)


@tool(name="crash_sync", description="Crashes in a worker thread.")
class CrashSync(ToolContext):
    def execute(self) -> str:
        raise KeyError(INTERNALS)


def lookup_customer(customer_id: str) -> str:
    raise ConnectionError(INTERNALS)


@tool(name="validator_crash", description="Its argument validator fails unexpectedly.")
class ValidatorCrash(ToolContext):
    async def execute(self, customer_id: Annotated[str, AfterValidator(lookup_customer)]) -> str:
        return customer_id


@tool(name="init_crash", description="Its constructor fails.")
class InitCrash(ToolContext):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        raise RuntimeError(INTERNALS)

    async def execute(self) -> str:
        return ""


@app(id="desk", tools=[FindTicket, Refuse, Crash, CrashSync, ValidatorCrash, InitCrash])
class Desk:
    pass


@pytest.fixture
def mcpkit_server() -> Server:
    return Server([Desk], auth=StaticKeys({"nour": NOUR_KEY}))


async def test_a_tool_error_is_an_is_error_result_with_code_and_message_in_meta(call_as: CallAs) -> None:
    result = await call_as("nour").call_tool("find_ticket", {"ticket_id": "X"})

    assert result.is_error
    assert text_of(result) == "No ticket X; ids look like T-123."
    assert result.meta is not None
    assert result.meta["mcpkit/error"] == {"code": "TICKET_NOT_FOUND", "message": "No ticket X; ids look like T-123."}


async def test_a_tool_error_without_a_code_has_code_tool_error(call_as: CallAs) -> None:
    result = await call_as("nour").call_tool("refuse")

    assert error_code(result) == "TOOL_ERROR"
    assert text_of(result) == "Not today."


@pytest.mark.parametrize("tool_name", ["crash", "crash_sync"])
async def test_an_unexpected_exception_is_internal_error_with_an_error_id_and_no_exception_text(
    call_as: CallAs, caplog: pytest.LogCaptureFixture, tool_name: str
) -> None:
    caplog.set_level(logging.ERROR, logger="mcpkit")

    result = await call_as("nour").call_tool(tool_name)

    assert result.is_error
    assert error_code(result) == "INTERNAL_ERROR"
    message = text_of(result)
    found = re.search(r"error id ([0-9a-f]{12})", message)
    assert found is not None, message
    assert "hunter2" not in message
    assert "hunter2" not in str(result.meta)
    assert "RuntimeError" not in message
    assert "KeyError" not in message
    error_id = found.group(1)
    logged = [r for r in caplog.records if error_id in r.getMessage()]
    assert len(logged) == 1
    assert logged[0].exc_info is not None
    assert INTERNALS in str(logged[0].exc_info[1])
    assert "Traceback" in caplog.text


async def test_each_internal_error_gets_its_own_error_id(call_as: CallAs) -> None:
    first = text_of(await call_as("nour").call_tool("crash"))
    second = text_of(await call_as("nour").call_tool("crash"))

    assert first != second


async def test_an_unknown_tool_is_unknown_tool(call_as: CallAs) -> None:
    result = await call_as("nour").call_tool("no_such_tool")

    assert result.is_error
    assert error_code(result) == "UNKNOWN_TOOL"
    assert "no_such_tool" in text_of(result)


@pytest.mark.parametrize(("tool_name", "arguments"), [("validator_crash", {"customer_id": "C-1"}), ("init_crash", {})])
async def test_an_exception_before_execute_is_a_masked_internal_error(
    call_as: CallAs, tool_name: str, arguments: dict[str, Any]
) -> None:
    result = await call_as("nour").call_tool(tool_name, arguments)

    assert error_code(result) == "INTERNAL_ERROR"
    assert "hunter2" not in text_of(result)


@pytest.mark.parametrize(("tool_name", "arguments"), [("validator_crash", {"customer_id": "C-1"}), ("init_crash", {})])
async def test_on_2025_11_25_exception_text_from_before_execute_never_reaches_the_client(
    mcpkit_server: Server, tool_name: str, arguments: dict[str, Any]
) -> None:
    async with running(mcpkit_server.http_app()) as http:
        session = await open_legacy_session(http, token=NOUR_KEY)
        response = await call_legacy(http, session, tool_name, arguments, token=NOUR_KEY)

    assert response.status_code == 200
    assert "hunter2" not in response.text
