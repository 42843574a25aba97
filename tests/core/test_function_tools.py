"""``@tool`` on a plain function: served as a class tool is (schema from its signature, plugins, errors, tasks), its
context given to a first parameter annotated ``ToolContext``, and its mistakes refused when the server is built,
naming the function."""

from __future__ import annotations

import functools
import threading
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

import pytest
from pydantic import Field

from mcpkit import ConfigurationError, Context, Server, StaticKeys, ToolContext, ToolError, app, tool
from mcpkit.testing import CallAs, ToolCallError
from mcpkit_remember import RememberPlugin
from tasks.support import ALICE, Caller, serving

KEYS = {"nour": "nour-key-0123456789abcdef", "sam": "sam-key-fedcba9876543210"}


@tool(name="echo", description="Echo the text back.")
async def echo(text: Annotated[str, Field(max_length=20)], times: int = 1) -> str:
    return " ".join([text] * times)


@tool(name="echo_class", description="Echo the text back.")
class EchoClass(ToolContext):
    async def execute(self, text: Annotated[str, Field(max_length=20)], times: int = 1) -> str:
        return " ".join([text] * times)


@tool(name="keep_note")
async def keep_note(ctx: ToolContext, text: str) -> dict[str, Any]:
    """Keep a note for the caller, and say whose it is."""
    await ctx.remember.set("note", text, scope="user")
    return {"note": await ctx.remember.get("note", scope="user"), "for": ctx.caller.label, "tool": ctx.tool_name}


@tool(name="read_note", description="Read the caller's note.", read_only=True)
async def read_note(ctx: ToolContext) -> str:
    return str(await ctx.remember.get("note", scope="user", default="(no note)"))


@tool(name="off_the_loop", description="Say whether it ran in a worker thread.")
def off_the_loop() -> str:
    return "worker" if threading.current_thread() is not threading.main_thread() else "main"


@tool(name="refuse", description="Refuse, as a tool does on purpose.")
async def refuse(reason: Literal["closed", "busy"]) -> str:
    raise ToolError(f"The desk is {reason}.", code="DESK_CLOSED")


@tool(name="report", description="Build the report, as a task where the client can poll one.", task=True)
async def report(ctx: ToolContext, month: str) -> str:
    await ctx.progress(1, 1, "Added up")
    return f"Report for {month}, task {ctx.task_id is not None}"


FUNCTIONS = [echo, keep_note, read_note, off_the_loop, refuse, report]


@pytest.fixture
def mcpkit_server() -> Server:
    @app(id="desk", tools=[*FUNCTIONS, EchoClass], plugins=[RememberPlugin.init(type="memory")])
    class Desk: ...

    return Server([Desk], auth=StaticKeys(KEYS))


@pytest.fixture(autouse=True)
def _no_remember_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REMEMBER_STORE", raising=False)
    monkeypatch.delenv("REMEMBER_SECRET", raising=False)


async def test_a_function_tool_is_called_like_a_class_tool(call_as: CallAs) -> None:
    nour = call_as("nour")
    assert await nour.call("echo", {"text": "hi", "times": 2}) == "hi hi"
    assert await nour.call("echo", {"text": "hi"}) == await nour.call("echo_class", {"text": "hi"})


async def test_its_schema_comes_from_its_signature_exactly_as_executes_does(call_as: CallAs) -> None:
    listed = {tool.name: tool for tool in await call_as("nour").list_tools()}
    function, cls = listed["echo"], listed["echo_class"]
    assert {**function.input_schema, "title": None} == {**cls.input_schema, "title": None}
    assert function.input_schema["properties"]["text"]["maxLength"] == 20
    assert function.output_schema == cls.output_schema
    assert listed["read_note"].annotations is not None
    assert listed["read_note"].annotations.read_only_hint is True
    assert listed["keep_note"].description == "Keep a note for the caller, and say whose it is."  # the docstring
    assert "ctx" not in listed["keep_note"].input_schema["properties"]  # the context is not an input
    assert listed["keep_note"].input_schema["required"] == ["text"]


async def test_its_arguments_are_checked_as_a_class_tools_are(call_as: CallAs) -> None:
    with pytest.raises(ToolCallError) as refused:
        await call_as("nour").call("echo", {"text": "x" * 21, "loud": True})
    assert refused.value.code == "INVALID_INPUT"
    assert refused.value.message == (
        "Invalid input for tool 'echo': text: String should have at most 20 characters; loud: Extra inputs are not "
        "permitted. Fix the arguments and call again."
    )


async def test_the_context_parameter_reaches_the_caller_and_the_plugins(call_as: CallAs) -> None:
    kept = await call_as("nour").call("keep_note", {"text": "call Ada back"})
    assert kept == {"note": "call Ada back", "for": "nour", "tool": "keep_note"}
    assert await call_as("nour", fresh=True).call("read_note") == "call Ada back"
    assert await call_as("sam").call("read_note") == "(no note)"


async def test_a_plain_def_runs_in_a_worker_thread(call_as: CallAs) -> None:
    assert await call_as("nour").call("off_the_loop") == "worker"


async def test_a_tool_error_from_a_function_is_an_error_result_with_its_code(call_as: CallAs) -> None:
    with pytest.raises(ToolCallError) as refused:
        await call_as("nour").call("refuse", {"reason": "closed"})
    assert (refused.value.code, refused.value.message) == ("DESK_CLOSED", "The desk is closed.")


async def test_a_function_tool_runs_as_a_task_for_a_client_that_declares_tasks() -> None:
    @app(id="reports", tools=[report])
    class Reports: ...

    async with serving(Server([Reports], auth=StaticKeys({"alice": ALICE}))) as http:
        alice = Caller(http, ALICE)
        task_id = await alice.start("report", {"month": "2026-11"})
        done = await alice.until(task_id, "completed", "failed")
        direct = await Caller(http, ALICE, tasks=False).call("report", {"month": "2026-11"})
    assert done["result"]["content"][0]["text"] == "Report for 2026-11, task True"
    assert direct.text == "Report for 2026-11, task False"


async def test_the_decorated_function_is_returned_unchanged() -> None:
    assert await echo("hi", times=3) == "hi hi hi"
    assert echo.__name__ == "echo"
    assert off_the_loop() == "main"  # called here, on the main thread


def one_app(*tools: Any) -> type[Any]:
    @app(id="a", tools=list(tools))
    class OneApp: ...

    return OneApp


async def _context_second(text: str, ctx: ToolContext) -> str:
    return text


async def _context_subclass(ctx: EchoClass, text: str) -> str:
    return text


async def _context_base(ctx: Context, text: str) -> str:
    return text


async def _context_keyword_only(*, ctx: ToolContext, text: str) -> str:
    return text


async def _yields(text: str) -> AsyncIterator[str]:
    yield text


async def _unannotated(text) -> str:  # type: ignore[no-untyped-def]
    return str(text)


@pytest.mark.parametrize(
    ("function", "message"),
    [
        (_context_second, "parameter 'ctx' is annotated ToolContext: the call's context is the first parameter"),
        (_context_subclass, "parameter 'ctx' is annotated EchoClass; annotate it mcpkit.ToolContext"),
        (_context_base, "parameter 'ctx' is annotated Context; annotate it mcpkit.ToolContext"),
        (_context_keyword_only, "the context parameter 'ctx' must not be keyword-only"),
        (_yields, "yields values; a tool returns its one result: use return, not yield"),
        (_unannotated, "_unannotated\\(\\) parameter 'text' needs a type annotation; it becomes the input schema"),
    ],
)
def test_a_function_that_cannot_be_a_tool_is_refused_when_the_server_is_built_naming_it(
    function: Any, message: str
) -> None:
    marked = tool(name="broken", description="Broken.")(function)
    with pytest.raises(ConfigurationError, match=message) as refused:
        Server([one_app(marked)])
    assert f"tool function {__name__}.{function.__qualname__}" in str(refused.value)


def test_a_function_without_a_description_or_docstring_is_refused() -> None:
    @tool(name="silent")
    async def silent(text: str) -> str:
        return text

    with pytest.raises(ConfigurationError, match=r"silent \('silent'\) has no description"):
        Server([one_app(silent)])


def test_an_undecorated_function_is_refused_naming_it() -> None:
    async def forgotten(text: str) -> str:
        return text

    with pytest.raises(ConfigurationError, match=r"<function .*forgotten at .*> in app 'a' .* is not a tool"):
        Server([one_app(forgotten)])


def test_two_tools_of_one_name_are_refused_naming_the_function_and_the_class() -> None:
    @tool(name="echo_class", description="Another.")
    async def twin(text: str) -> str:
        return text

    with pytest.raises(ConfigurationError, match="Two tools are named 'echo_class'") as refused:
        Server([one_app(EchoClass, twin)])
    assert "EchoClass in app 'a'" in str(refused.value)
    assert "twin in app 'a'" in str(refused.value)


class Callable:
    async def __call__(self, text: str) -> str:
        return text


@pytest.mark.parametrize("target", [functools.partial(echo, "x"), Callable(), print])
def test_tool_decorates_only_classes_and_functions(target: Any) -> None:
    with pytest.raises(TypeError, match=r"@tool\(name='x'\) decorates a ToolContext subclass or a function"):
        tool(name="x", description="X.")(target)
