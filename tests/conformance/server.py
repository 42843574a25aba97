"""The MCP conformance suite's "everything server", written as a mcpkit user would write it.

The official suite (``@modelcontextprotocol/conformance``) calls fixed tool names
(``test_simple_text``, ``test_image_content``, ...). This server offers every one
that mcpkit's public API can serve, and the resources and prompts they read;
``expected-failures.yaml`` beside it lists the scenarios that need what mcpkit does
not offer yet (messages sent while a tool runs, multi-round-trip results, resource
subscriptions, hand-written schemas). Run it with

    python -m mcpkit run tests/conformance/server.py:server --port 3001
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Annotated

import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import Field
from typing_extensions import TypedDict

from mcpkit import PromptContext, ResourceContext, Server, ToolContext, ToolError, app, prompt, resource, tool

#: A 1x1 PNG and a tiny WAV file, base64-encoded.
PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV_BASE64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="


def _content(*blocks: types.ContentBlock) -> types.CallToolResult:
    return types.CallToolResult(content=list(blocks))


def _image() -> types.ImageContent:
    return types.ImageContent(type="image", data=PNG_BASE64, mime_type="image/png")


@tool(name="test_simple_text", description="Tests simple text content response.")
class SimpleText(ToolContext):
    async def execute(self) -> str:
        return "This is a simple text response for testing."


@tool(name="test_image_content", description="Tests image content response.")
class ImageContent(ToolContext):
    async def execute(self) -> types.CallToolResult:
        return _content(_image())


@tool(name="test_audio_content", description="Tests audio content response.")
class AudioContent(ToolContext):
    async def execute(self) -> types.CallToolResult:
        return _content(types.AudioContent(type="audio", data=WAV_BASE64, mime_type="audio/wav"))


@tool(name="test_embedded_resource", description="Tests embedded resource content response.")
class EmbeddedResource(ToolContext):
    async def execute(self) -> types.CallToolResult:
        resource = types.TextResourceContents(
            uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."
        )
        return _content(types.EmbeddedResource(type="resource", resource=resource))


@tool(name="test_multiple_content_types", description="Tests a response with text, image and resource content.")
class MultipleContentTypes(ToolContext):
    async def execute(self) -> types.CallToolResult:
        resource = types.TextResourceContents(
            uri="test://mixed-content-resource", mime_type="application/json", text='{"test":"data","value":123}'
        )
        return _content(
            types.TextContent(type="text", text="Multiple content types test:"),
            _image(),
            types.EmbeddedResource(type="resource", resource=resource),
        )


@tool(name="test_error_handling", description="Tests error response handling: always fails.")
class ErrorHandling(ToolContext):
    async def execute(self) -> str:
        raise ToolError("This tool intentionally returns an error for testing")


#: The suite's JSON Schema 2020-12 document, kept verbatim: $schema, $defs, a composition and a conditional.
JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@tool(
    name="json_schema_2020_12_tool",
    description="Tool with JSON Schema 2020-12 features.",
    input_schema=JSON_SCHEMA_2020_12,
)
class JsonSchema202012(ToolContext):
    async def execute(self, **arguments: object) -> str:
        return "ok"


@tool(name="test_custom_headers", description="Echoes a region that clients also send as the Mcp-Param-Region header.")
class CustomHeaders(ToolContext):
    async def execute(
        self, region: Annotated[str, Field(description="Where to run.", json_schema_extra={"x-mcp-header": "Region"})]
    ) -> str:
        return f"region={region}"


@tool(name="test_tool_with_logging", description="Sends three log messages while it runs.")
class ToolWithLogging(ToolContext):
    async def execute(self) -> str:
        for step in ("Tool execution started", "Tool processing data", "Tool execution completed"):
            await self.log.info(step)
            await asyncio.sleep(0.05)
        return "Tool with logging executed successfully"


@tool(name="test_tool_with_progress", description="Reports progress three times while it runs.")
class ToolWithProgress(ToolContext):
    async def execute(self) -> str:
        for done in (0, 50, 100):
            await self.progress(done, 100, f"{done}% done")
            await asyncio.sleep(0.05)
        return "Tool with progress executed successfully"


@tool(name="test_missing_capability", description="Needs the client's sampling capability.", requires=["sampling"])
class MissingCapability(ToolContext):
    async def execute(self) -> str:
        return "the client declared sampling"


class _Name(TypedDict):
    name: str


class _Ok(TypedDict):
    ok: bool


class _Color(TypedDict):
    color: str


@tool(name="test_input_required_result_elicitation", description="Asks the user's name, then greets them.")
class InputRequiredElicitation(ToolContext):
    async def execute(self) -> str:
        answer = await self.elicit("What is your name?", _Name, key="user_name")
        return f"Hello, {answer.content['name']}!" if answer.accepted else f"No name given ({answer.action})."


@tool(name="test_input_required_result_sampling", description="Asks the client's model a question.")
class InputRequiredSampling(ToolContext):
    async def execute(self) -> str:
        answer = await self.sample("What is the capital of France?", max_tokens=100, key="capital_question")
        return getattr(answer.content, "text", str(answer.content))


@tool(name="test_input_required_result_list_roots", description="Lists the client's roots.")
class InputRequiredListRoots(ToolContext):
    async def execute(self) -> str:
        roots = await self.roots(key="client_roots")
        return "Roots: " + ", ".join(str(root.uri) for root in roots)


@tool(name="test_input_required_result_request_state", description="Asks for a confirmation, with request state.")
class InputRequiredRequestState(ToolContext):
    async def execute(self) -> str:
        answer = await self.elicit("Please confirm", _Ok, key="confirm")
        return f"state-ok: confirmed={answer.accepted and answer.content['ok']}"


@tool(name="test_input_required_result_multi_round", description="Asks two questions, one per round.")
class InputRequiredMultiRound(ToolContext):
    async def execute(self) -> str:
        name = await self.elicit("Step 1: What is your name?", _Name, key="step1")
        color = await self.elicit("Step 2: What is your favorite color?", _Color, key="step2")
        named = name.content["name"] if name.content else "?"
        return f"multi-round-complete: {named} likes {color.content['color'] if color.content else '?'}"


@tool(name="test_input_required_result_tampered_state", description="Asks a question with sealed request state.")
class InputRequiredTamperedState(ToolContext):
    async def execute(self) -> str:
        answer = await self.elicit("Please confirm", _Ok, key="confirm")
        return f"confirmed={answer.accepted}"


@tool(name="test_input_required_result_multiple_inputs", description="Asks the user, the model and the client at once.")
class InputRequiredMultipleInputs(ToolContext):
    async def execute(self) -> str:
        name, greeting, roots = await asyncio.gather(
            self.elicit("What is your name?", _Name, key="user_name"),
            self.sample("Generate a greeting", max_tokens=50, key="greeting"),
            self.roots(key="client_roots"),
        )
        return f"name={name.content and name.content['name']}, roots={len(roots)}, greeting={greeting.model}"


@tool(name="test_input_required_result_capabilities", description="Asks only in ways the client declared.")
class InputRequiredCapabilities(ToolContext):
    async def execute(self) -> str:
        if self.client_can("elicitation"):
            answer = await self.elicit("What is your name?", _Name, key="user_name")
            return f"elicited: {answer.action}"
        if self.client_can("sampling"):
            sampled = await self.sample("Say hello", max_tokens=20, key="greeting")
            return f"sampled: {getattr(sampled.content, 'text', '')}"
        return "the client declared neither elicitation nor sampling"


@tool(name="test_sampling", description="Asks the client's model to answer a prompt.")
class Sampling(ToolContext):
    async def execute(self, prompt: str) -> str:
        answer = await self.sample(prompt, max_tokens=100)
        return f"LLM response: {getattr(answer.content, 'text', '')}"


USER_SCHEMA = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}
DEFAULTS_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
    },
}
ENUMS_SCHEMA = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
}


@tool(name="test_elicitation", description="Asks the user for a username and an email.")
class Elicitation(ToolContext):
    async def execute(self, message: str) -> str:
        answer = await self.elicit(message, USER_SCHEMA)
        return f"User response: action={answer.action}, content={json.dumps(answer.content)}"


@tool(name="test_elicitation_sep1034_defaults", description="Asks with a schema whose fields have defaults.")
class ElicitationDefaults(ToolContext):
    async def execute(self) -> str:
        answer = await self.elicit("Please review your information", DEFAULTS_SCHEMA)
        return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}"


@tool(name="test_elicitation_sep1330_enums", description="Asks with every kind of enum field.")
class ElicitationEnums(ToolContext):
    async def execute(self) -> str:
        answer = await self.elicit("Please choose your options", ENUMS_SCHEMA)
        return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}"


@resource(uri="test://static-text", name="static-text", description="A static text resource.", mime_type="text/plain")
class StaticText(ResourceContext):
    async def read(self) -> str:
        return "This is the content of the static text resource."


@resource(
    uri="test://static-binary", name="static-binary", description="A static binary resource.", mime_type="image/png"
)
class StaticBinary(ResourceContext):
    async def read(self) -> bytes:
        return base64.b64decode(PNG_BASE64)


@resource(
    uri="test://template/{id}/data", name="template-data", description="Data for one id.", mime_type="application/json"
)
class TemplateData(ResourceContext):
    async def read(self, id: str) -> str:
        return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@resource(uri="test://watched-resource", name="watched-resource", description="A resource clients subscribe to.")
class WatchedResource(ResourceContext):
    async def read(self) -> str:
        return "Watched resource content."


@prompt(name="test_simple_prompt", description="A simple prompt without arguments.")
class SimplePrompt(PromptContext):
    async def render(self) -> str:
        return "This is a simple prompt for testing."


@prompt(name="test_prompt_with_arguments", description="A prompt with two required arguments.")
class PromptWithArguments(PromptContext):
    async def render(
        self,
        arg1: Annotated[str, Field(description="First test argument")],
        arg2: Annotated[str, Field(description="Second test argument")],
    ) -> str:
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    async def complete_arg1(self, value: str) -> list[str]:
        return [word for word in ("test", "testing", "tested") if word.startswith(value)]


@prompt(name="test_prompt_with_embedded_resource", description="A prompt that embeds a resource.")
class PromptWithEmbeddedResource(PromptContext):
    async def render(
        self, resourceUri: Annotated[str, Field(description="URI of the resource to embed")]
    ) -> list[object]:
        embedded = types.TextResourceContents(
            uri=resourceUri, mime_type="text/plain", text="Embedded resource content."
        )
        return [
            types.PromptMessage(role="user", content=types.EmbeddedResource(type="resource", resource=embedded)),
            "Please process the embedded resource above.",
        ]


@prompt(name="test_prompt_with_image", description="A prompt with an image.")
class PromptWithImage(PromptContext):
    async def render(self) -> list[object]:
        return [types.PromptMessage(role="user", content=_image()), "Please analyze the image above."]


class _Context(TypedDict):
    context: str


@prompt(name="test_input_required_result_prompt", description="A prompt that asks the user for context first.")
class InputRequiredPrompt(PromptContext):
    async def render(self) -> str:
        answer = await self.elicit("What context should the prompt use?", _Context, key="user_context")
        return f"Use this context: {answer.content['context'] if answer.content else '(none)'}"


@tool(name="test_reconnection", description="Closes its SSE stream mid-call; the result comes after the reconnect.")
class Reconnection(ToolContext):
    async def execute(self) -> str:
        await self.close_stream()  # the client reconnects with Last-Event-ID and gets what follows
        await asyncio.sleep(0.2)
        return "Reconnection test completed successfully"


@tool(
    name="test_dynamic_tool",
    description="A tool test_trigger_tool_change adds to the list and takes away.",
    enabled=False,
)
class DynamicTool(ToolContext):
    async def execute(self) -> str:
        return "The dynamic tool is here."


@prompt(
    name="test_dynamic_prompt", description="A prompt test_trigger_prompt_change adds and takes away.", enabled=False
)
class DynamicPrompt(PromptContext):
    async def render(self) -> str:
        return "The dynamic prompt is here."


@tool(name="test_trigger_tool_change", description="Adds test_dynamic_tool to the tool list, or takes it away.")
class TriggerToolChange(ToolContext):
    async def execute(self) -> str:
        listed = "test_dynamic_tool" in server.enabled("tools")
        if listed:
            await server.disable(tools=["test_dynamic_tool"])
        else:
            await server.enable(tools=["test_dynamic_tool"])
        return f"test_dynamic_tool {'taken away' if listed else 'added'}."


@tool(name="test_trigger_prompt_change", description="Adds test_dynamic_prompt to the prompt list, or takes it away.")
class TriggerPromptChange(ToolContext):
    async def execute(self) -> str:
        listed = "test_dynamic_prompt" in server.enabled("prompts")
        if listed:
            await server.disable(prompts=["test_dynamic_prompt"])
        else:
            await server.enable(prompts=["test_dynamic_prompt"])
        return f"test_dynamic_prompt {'taken away' if listed else 'added'}."


# -- the tasks extension's fixtures (SEP-2663: the tasks-* scenarios) --------------------------------------

_ANSWER = {"type": "object", "properties": {"name": {"type": "string"}, "confirm": {"type": "boolean"}}}


@tool(name="greet", description="Greets someone, in the request (never a task).")
class Greet(ToolContext):
    async def execute(self, name: str) -> str:
        return f"Hello, {name}!"


@tool(name="slow_compute", description="Works for some seconds, as a task.", task=True)
class SlowCompute(ToolContext):
    async def execute(self, seconds: Annotated[float, Field(ge=0, le=600)] = 1, label: str = "") -> str:
        for done in range(int(seconds * 10)):
            await self.progress(done, seconds * 10)
            await asyncio.sleep(0.1)
        return f"computed {label!r} in {seconds:g} s"


@tool(name="failing_job", description="Fails as a tool after a second; only as a task.", task="required")
class FailingJob(ToolContext):
    async def execute(self) -> str:
        await asyncio.sleep(1)
        raise ToolError("The job failed, as it always does.", code="JOB_FAILED")


@tool(name="protocol_error_job", description="Ends in a protocol error, as a task.", task=True)
class ProtocolErrorJob(ToolContext):
    async def execute(self) -> str:
        await asyncio.sleep(0.2)
        raise MCPError(types.INTERNAL_ERROR, "The job's backend answered with an internal error.")


@tool(name="confirm_delete", description="Asks before it deletes a file, as a task.", task=True)
class ConfirmDelete(ToolContext):
    async def execute(self, filename: str) -> str:
        answer = await self.elicit(f"Delete {filename}?", _ANSWER)
        confirmed = answer.accepted and bool(answer.content and answer.content.get("confirm"))
        return f"{'Deleted' if confirmed else 'Kept'} {filename}."


@tool(name="multi_input", description="Asks two questions at once, as a task.", task=True)
class MultiInput(ToolContext):
    async def execute(self) -> str:
        first, second = await asyncio.gather(
            self.elicit("Your name?", _ANSWER, key="first"), self.elicit("Confirm?", _ANSWER, key="second")
        )
        return f"first={first.action}, second={second.action}"


@tool(name="test_tool_with_task", description="Asks a name, then greets as a task.", task="required", ask_first=True)
class ToolWithTask(ToolContext):
    async def execute(self) -> str:
        answer = await self.elicit("What is your name?", _Name, key="user_name")
        await self.run_as_task()
        await asyncio.sleep(0.5)
        return f"Hello, {answer.content['name'] if answer.content else 'nobody'}!"


@app(
    id="everything",
    name="Conformance everything server",
    tools=[
        SimpleText,
        ImageContent,
        AudioContent,
        EmbeddedResource,
        MultipleContentTypes,
        ErrorHandling,
        JsonSchema202012,
        CustomHeaders,
        ToolWithLogging,
        ToolWithProgress,
        MissingCapability,
        InputRequiredElicitation,
        InputRequiredSampling,
        InputRequiredListRoots,
        InputRequiredRequestState,
        InputRequiredMultiRound,
        InputRequiredTamperedState,
        InputRequiredCapabilities,
        InputRequiredMultipleInputs,
        Sampling,
        Elicitation,
        ElicitationDefaults,
        ElicitationEnums,
        DynamicTool,
        Reconnection,
        TriggerToolChange,
        TriggerPromptChange,
        Greet,
        SlowCompute,
        FailingJob,
        ProtocolErrorJob,
        ConfirmDelete,
        MultiInput,
        ToolWithTask,
    ],
    resources=[StaticText, StaticBinary, TemplateData, WatchedResource],
    prompts=[
        SimplePrompt,
        PromptWithArguments,
        PromptWithEmbeddedResource,
        PromptWithImage,
        InputRequiredPrompt,
        DynamicPrompt,
    ],
)
class EverythingApp:
    """The tools the conformance scenarios call."""


server = Server([EverythingApp], name="mcpkit-conformance", allow_anonymous=True)
