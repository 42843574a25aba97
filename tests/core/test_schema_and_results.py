"""Input schemas come from execute()'s signature and are enforced; return values become MCP results.

Everything goes through the real HTTP app with the official client, in both protocol eras.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from core._support import NOUR_KEY, text_of
from mcpkit import Server, StaticKeys, ToolContext, app, tool
from mcpkit.testing import CallAs, ToolCallError, error_code

SECRET_VALUE = "TOP-SECRET-INPUT-"


@tool(name="add_note", description="Add a note to a support ticket.")
class AddNote(ToolContext):
    async def execute(
        self,
        ticket_id: Annotated[str, Field(alias="ticketId")],
        note: Annotated[str, Field(max_length=80)],
        priority: int = 3,
    ) -> dict[str, Any]:
        return {"ticket_id": ticket_id, "note": note, "priority": priority}


class Reply(BaseModel):
    ticket_id: str = Field(alias="ticketId")
    text: str


class Summary(TypedDict):
    open: int
    closed: int


@dataclasses.dataclass
class Weather:
    city: str
    celsius: float


@tool(name="draft_reply", description="Draft a reply to a ticket.")
class DraftReply(ToolContext):
    async def execute(self, ticket_id: Annotated[str, Field(alias="ticketId")]) -> Reply:
        return Reply(ticketId=ticket_id, text=f"About {ticket_id}: we are on it.")


@tool(name="summary", description="Count the tickets.")
class TicketSummary(ToolContext):
    async def execute(self) -> Summary:
        return {"open": 2, "closed": 5}


@tool(name="weather", description="The weather in a city.")
class WeatherTool(ToolContext):
    async def execute(self, city: str) -> Weather:
        return Weather(city=city, celsius=21.5)


@tool(name="plain_dict", description="A dict without a declared shape.")
class PlainDict(ToolContext):
    async def execute(self) -> dict[str, Any]:
        return {"answer": 42, "items": ["a", "b"]}


@tool(name="greet", description="Greet someone.", read_only=True, idempotent=True, open_world=False)
class Greet(ToolContext):
    async def execute(self, name: str) -> str:
        return f"Hello, {name}!"


@tool(name="wrong_shape", description="Declares a Summary but returns something else.")
class WrongShape(ToolContext):
    async def execute(self) -> Summary:
        return {"open": "many"}  # type: ignore[typeddict-item]


@tool(name="replies_waiting", description="The replies waiting to be sent.")
class RepliesWaiting(ToolContext):
    async def execute(self) -> list[Reply]:
        return [Reply(ticketId="T-1", text="On it."), Reply(ticketId="T-2", text="Fixed.")]


@tool(name="open_count", description="How many tickets are open, or nothing when the count is unknown.")
class OpenCount(ToolContext):
    async def execute(self, known: bool = True) -> int | None:
        return 2 if known else None


@tool(name="wrong_count", description="Declares a number but returns a word.")
class WrongCount(ToolContext):
    async def execute(self) -> int:
        return "many"  # type: ignore[return-value]


@tool(name="maybe_reply", description="A reply, or nothing.")
class MaybeReply(ToolContext):
    async def execute(self, found: bool = True) -> Reply | None:
        return Reply(ticketId="T-1", text="On it.") if found else None


THREADS: dict[str, int] = {}


@tool(name="sync_thread", description="A blocking tool.")
class SyncThread(ToolContext):
    def execute(self) -> str:
        THREADS["sync"] = threading.get_ident()
        return "done"


@tool(name="async_thread", description="A non-blocking tool.")
class AsyncThread(ToolContext):
    async def execute(self) -> str:
        THREADS["async"] = threading.get_ident()
        return "done"


@app(
    id="desk",
    tools=[
        AddNote,
        DraftReply,
        TicketSummary,
        WeatherTool,
        PlainDict,
        Greet,
        WrongShape,
        SyncThread,
        AsyncThread,
        RepliesWaiting,
        OpenCount,
        WrongCount,
        MaybeReply,
    ],
)
class Desk:
    pass


@pytest.fixture
def mcpkit_server() -> Server:
    return Server([Desk], auth=StaticKeys({"nour": NOUR_KEY}))


async def tools_by_name(call_as: CallAs) -> dict[str, Any]:
    return {t.name: t for t in await call_as("nour").list_tools()}


async def test_an_alias_is_the_wire_name_in_the_input_schema(call_as: CallAs) -> None:
    schema = (await tools_by_name(call_as))["add_note"].input_schema

    assert set(schema["properties"]) == {"ticketId", "note", "priority"}
    assert schema["required"] == ["ticketId", "note"]


async def test_a_call_uses_the_alias_and_execute_gets_the_python_name(call_as: CallAs) -> None:
    result = await call_as("nour").call("add_note", {"ticketId": "T-1", "note": "Called back"})

    assert result == {"ticket_id": "T-1", "note": "Called back", "priority": 3}


async def test_the_python_name_is_not_accepted_on_the_wire(call_as: CallAs) -> None:
    with pytest.raises(ToolCallError) as raised:
        await call_as("nour").call("add_note", {"ticket_id": "T-1", "note": "x"})

    assert raised.value.code == "INVALID_INPUT"
    assert "ticketId" in raised.value.message


async def test_max_length_is_in_the_schema(call_as: CallAs) -> None:
    schema = (await tools_by_name(call_as))["add_note"].input_schema

    assert schema["properties"]["note"]["maxLength"] == 80


async def test_max_length_is_enforced_naming_field_and_rule_without_echoing_the_input(call_as: CallAs) -> None:
    too_long = SECRET_VALUE + "x" * 80

    result = await call_as("nour").call_tool("add_note", {"ticketId": "T-1", "note": too_long})

    assert result.is_error
    assert error_code(result) == "INVALID_INPUT"
    message = text_of(result)
    assert "note" in message
    assert "at most 80 characters" in message
    assert SECRET_VALUE not in message
    assert SECRET_VALUE not in json.dumps(result.meta)


async def test_a_wrong_type_is_invalid_input_without_echoing_the_input(call_as: CallAs) -> None:
    result = await call_as("nour").call_tool("add_note", {"ticketId": "T-1", "note": "x", "priority": SECRET_VALUE})

    assert error_code(result) == "INVALID_INPUT"
    assert "priority" in text_of(result)
    assert "integer" in text_of(result)
    assert SECRET_VALUE not in text_of(result)


async def test_extra_arguments_are_refused(call_as: CallAs) -> None:
    with pytest.raises(ToolCallError) as raised:
        await call_as("nour").call("add_note", {"ticketId": "T-1", "note": "x", "assignee": "sam"})

    assert raised.value.code == "INVALID_INPUT"
    assert "assignee" in raised.value.message
    assert "Extra inputs are not permitted" in raised.value.message


async def test_a_missing_required_argument_is_refused_naming_it(call_as: CallAs) -> None:
    with pytest.raises(ToolCallError) as raised:
        await call_as("nour").call("add_note", {"note": "x"})

    assert raised.value.code == "INVALID_INPUT"
    assert "ticketId: Field required" in raised.value.message


async def test_defaults_are_in_the_schema_and_used_when_the_argument_is_left_out(call_as: CallAs) -> None:
    schema = (await tools_by_name(call_as))["add_note"].input_schema

    assert schema["properties"]["priority"]["default"] == 3
    assert (await call_as("nour").call("add_note", {"ticketId": "T-1", "note": "x"}))["priority"] == 3
    assert (await call_as("nour").call("add_note", {"ticketId": "T-1", "note": "x", "priority": 1}))["priority"] == 1


async def test_a_pydantic_model_return_gives_output_schema_and_structured_content(call_as: CallAs) -> None:
    listed = (await tools_by_name(call_as))["draft_reply"]
    result = await call_as("nour").call_tool("draft_reply", {"ticketId": "T-9"})

    assert listed.output_schema is not None
    assert set(listed.output_schema["properties"]) == {"ticketId", "text"}
    assert result.structured_content == {"ticketId": "T-9", "text": "About T-9: we are on it."}
    assert json.loads(text_of(result)) == result.structured_content


async def test_a_typed_dict_return_gives_output_schema_and_structured_content(call_as: CallAs) -> None:
    listed = (await tools_by_name(call_as))["summary"]
    result = await call_as("nour").call_tool("summary")

    assert listed.output_schema is not None
    assert listed.output_schema["properties"]["open"]["type"] == "integer"
    assert result.structured_content == {"open": 2, "closed": 5}


async def test_a_dataclass_return_gives_output_schema_and_structured_content(call_as: CallAs) -> None:
    listed = (await tools_by_name(call_as))["weather"]
    result = await call_as("nour").call_tool("weather", {"city": "Lyon"})

    assert listed.output_schema is not None
    assert listed.output_schema["required"] == ["city", "celsius"]
    assert result.structured_content == {"city": "Lyon", "celsius": 21.5}


async def test_a_dict_return_gives_structured_content_and_a_json_text_block(call_as: CallAs) -> None:
    listed = (await tools_by_name(call_as))["plain_dict"]
    result = await call_as("nour").call_tool("plain_dict")

    assert listed.output_schema is None
    assert result.structured_content == {"answer": 42, "items": ["a", "b"]}
    assert len(result.content) == 1
    assert json.loads(text_of(result)) == {"answer": 42, "items": ["a", "b"]}


async def test_a_declared_list_travels_under_result_with_an_output_schema_the_client_checks(call_as: CallAs) -> None:
    listed = (await tools_by_name(call_as))["replies_waiting"]
    result = await call_as("nour").call_tool("replies_waiting")  # the official client validates it against the schema

    assert listed.output_schema is not None
    assert listed.output_schema["type"] == "object"
    assert listed.output_schema["required"] == ["result"]
    assert listed.output_schema["properties"]["result"] == {"type": "array", "items": {"$ref": "#/$defs/Reply"}}
    assert set(listed.output_schema["$defs"]["Reply"]["properties"]) == {"ticketId", "text"}
    waiting = [{"ticketId": "T-1", "text": "On it."}, {"ticketId": "T-2", "text": "Fixed."}]
    assert result.structured_content == {"result": waiting}
    assert json.loads(text_of(result)) == waiting


async def test_a_declared_number_or_none_travels_under_result(call_as: CallAs) -> None:
    listed = (await tools_by_name(call_as))["open_count"]
    known = await call_as("nour").call_tool("open_count")
    unknown = await call_as("nour").call_tool("open_count", {"known": False})

    assert listed.output_schema is not None
    assert listed.output_schema["properties"]["result"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert (known.structured_content, text_of(known)) == ({"result": 2}, "2")
    assert (unknown.structured_content, text_of(unknown)) == ({"result": None}, "null")


async def test_a_model_or_none_keeps_the_models_own_structured_content(call_as: CallAs) -> None:
    found = await call_as("nour").call_tool("maybe_reply")
    nothing = await call_as("nour").call_tool("maybe_reply", {"found": False})

    assert found.structured_content == {"ticketId": "T-1", "text": "On it."}
    assert nothing.structured_content is None
    assert nothing.content == []


async def test_a_value_that_breaks_a_declared_number_is_an_internal_error(call_as: CallAs) -> None:
    result = await call_as("nour").call_tool("wrong_count")

    assert error_code(result) == "INTERNAL_ERROR"
    assert "many" not in text_of(result)


async def test_a_str_return_is_a_text_block(call_as: CallAs) -> None:
    result = await call_as("nour").call_tool("greet", {"name": "Nour"})

    assert not result.is_error
    assert text_of(result) == "Hello, Nour!"
    assert result.structured_content is None


async def test_tool_hints_are_published_as_annotations(call_as: CallAs) -> None:
    listed = await tools_by_name(call_as)

    assert listed["greet"].annotations is not None
    assert listed["greet"].annotations.read_only_hint is True
    assert listed["greet"].annotations.idempotent_hint is True
    assert listed["greet"].annotations.open_world_hint is False
    assert listed["plain_dict"].annotations is None


async def test_a_return_value_that_breaks_the_declared_shape_is_an_internal_error(call_as: CallAs) -> None:
    result = await call_as("nour").call_tool("wrong_shape")

    assert error_code(result) == "INTERNAL_ERROR"
    assert "many" not in text_of(result)


async def test_a_sync_execute_runs_in_a_worker_thread(call_as: CallAs) -> None:
    THREADS.clear()
    loop_thread = threading.get_ident()

    await call_as("nour").call("sync_thread")
    await call_as("nour").call("async_thread")

    assert THREADS["async"] == loop_thread
    assert THREADS["sync"] != loop_thread
