"""Hand-written input schemas (issue 12): ``@tool(input_schema=...)`` is advertised verbatim ($schema, $defs,
allOf/anyOf, if/then/else), every call is checked against it with jsonschema (INVALID_INPUT naming the path and
the rule), the arguments arrive as sent, and a schema execute() could not honour is refused at build time."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mcpkit import ConfigurationError, Server, StaticKeys, ToolContext, app, tool
from mcpkit.testing import ToolCallError, running

KEYS = {"nour": "nour-key-0123456789abcdef"}
CONTACT = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"address": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string", "format": "email"},
    },
    "required": ["name"],
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@tool(name="add_contact", description="Add a customer contact.", input_schema=CONTACT)
class AddContact(ToolContext):
    async def execute(self, **arguments: Any) -> dict[str, Any]:
        return {"received": arguments}


@tool(
    name="greet",
    description="Greet someone.",
    input_schema={
        "type": "object",
        "properties": {"who": {"type": "string"}, "times": {"type": "integer", "minimum": 1}},
        "required": ["who"],
        "additionalProperties": False,
    },
)
class Greet(ToolContext):
    async def execute(self, who: str, times: int = 1) -> str:
        return " ".join([f"Hello {who}."] * times)


@app(id="contacts", tools=[AddContact, Greet])
class ContactsApp: ...


def make_server() -> Server:
    return Server([ContactsApp], auth=StaticKeys(KEYS))


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
async def test_the_schema_is_advertised_verbatim_and_enforced(protocol: str) -> None:
    async with running(make_server(), protocol=protocol) as call_as:
        nour = call_as("nour")
        listed = {t.name: t for t in await nour.list_tools()}
        assert listed["add_contact"].input_schema == CONTACT
        sent = {"name": "Ada", "contactMethod": "email", "email": "ada@example.com", "address": {"city": "Oslo"}}
        assert await nour.call("add_contact", sent) == {"received": sent}
        assert await nour.call("greet", {"who": "Sam", "times": 2}) == "Hello Sam. Hello Sam."
        with pytest.raises(ToolCallError) as refused:
            await nour.call("add_contact", {"name": "", "contactMethod": "phone", "address": {}, "fax": "1"})
    error = refused.value
    assert error.code == "INVALID_INPUT"
    assert error.message.startswith("Invalid input for tool 'add_contact': ")
    for problem in (
        "(arguments): 'phone' is a required property (rule: required)",
        "(arguments): Additional properties are not allowed ('fax' was unexpected) (rule: additionalProperties)",
        "address: 'city' is a required property (rule: required)",
        "name: '' should be non-empty (rule: minLength)",
    ):
        assert problem in error.message


async def test_formats_are_checked_and_values_arrive_unconverted() -> None:
    async with running(make_server()) as call_as:
        nour = call_as("nour")
        with pytest.raises(ToolCallError) as bad_email:
            await nour.call("add_contact", {"name": "Ada", "email": "not an address"})
        assert "email: 'not an address' is not a 'email' (rule: format)" in bad_email.value.message
        with pytest.raises(ToolCallError) as bad_times:
            await nour.call("greet", {"who": "Sam", "times": "2"})  # JSON Schema does not convert "2" to 2
        assert "times: '2' is not of type 'integer' (rule: type)" in bad_times.value.message


def test_the_advertised_schema_is_a_copy() -> None:
    schema = copy.deepcopy(CONTACT)

    @tool(name="copy_check", description="Checks the copy.", input_schema=schema)
    class CopyCheck(ToolContext):
        async def execute(self, **arguments: Any) -> str:
            return "ok"

    @app(id="copy", tools=[CopyCheck])
    class CopyApp: ...

    server = Server([CopyApp], auth=StaticKeys(KEYS))
    schema["properties"]["name"]["minLength"] = 99  # changing the caller's dict afterwards changes nothing
    assert server.tools["copy_check"].input_schema == CONTACT


def _build(schema: Any, execute_takes: str) -> None:
    namespace: dict[str, Any] = {}
    exec(f"async def execute(self, {execute_takes}): return 'ok'", namespace)
    cls = type("Handwritten", (ToolContext,), {"execute": namespace["execute"]})
    tool(name="handwritten", description="Hand-written.", input_schema=schema)(cls)
    server_app = app(id="h", tools=[cls])(type("HApp", (), {}))
    Server([server_app], auth=StaticKeys(KEYS))


@pytest.mark.parametrize(
    ("schema", "execute_takes", "message"),
    [
        ({"type": "array"}, "**a", 'input_schema is a JSON Schema object with "type": "object"'),
        ([1, 2], "**a", 'input_schema is a JSON Schema object with "type": "object"'),
        ({"type": "object", "properties": {"a": {"type": "nonsense"}}}, "**a", "is not a valid JSON Schema 2020-12"),
        ({"type": "object", "properties": {"a": {}}, "additionalProperties": False}, "a, b", "takes b, which"),
        ({"type": "object", "properties": {"a": {}, "b": {}}, "additionalProperties": False}, "a", "properties b"),
        ({"type": "object", "properties": {"a": {}}}, "a", "allows properties it does not list"),
    ],
)
def test_a_schema_execute_could_not_honour_is_refused(schema: Any, execute_takes: str, message: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        _build(schema, execute_takes)
    assert message in str(refused.value)
    assert "'handwritten'" in str(refused.value)
