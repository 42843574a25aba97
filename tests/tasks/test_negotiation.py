"""The tasks extension is advertised when a tool may run as a task, and used only with a client that declares it
on the request, over 2026-07-28; headers name the task; configuration mistakes fail when the server is built."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from core._support import ACCEPT, LEGACY, body_of, open_legacy_session
from mcpkit import ConfigurationError, Server, StaticKeys, ToolContext, app, tool
from tasks.support import ALICE, EXTENSION, KEYS, TOOLS, Caller, build, serving


@contextlib.asynccontextmanager
async def official_client(server: Server, mode: str) -> AsyncIterator[tuple[Client, httpx2.AsyncClient]]:
    """The official ``mcp`` client, which declares no tasks extension, over ``server``'s HTTP app as Alice; and the
    HTTP client under it, for raw requests beside."""
    asgi = server.http_app()
    async with (
        asgi.router.lifespan_context(asgi),
        httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=asgi),
            base_url="http://127.0.0.1:8000",
            headers={"Authorization": f"Bearer {ALICE}"},
        ) as http,
        Client(streamable_http_client("http://127.0.0.1:8000/mcp", http_client=http), mode=mode) as client,
    ):
        yield client, http


async def offered(server: Server) -> tuple[list[str], list[str]]:
    """The tools ``server`` lists to a 2026-07-28 request declaring the tasks extension, and to one that does not."""
    async with serving(server) as http:
        declaring = await Caller(http, ALICE).request("tools/list", {})
        plain = await Caller(http, ALICE, tasks=False).request("tools/list", {})
    assert declaring.result is not None
    assert plain.result is not None
    return [tool["name"] for tool in declaring.result["tools"]], [tool["name"] for tool in plain.result["tools"]]


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_a_required_task_tool_is_not_offered_to_a_client_that_cannot_run_tasks(mode: str) -> None:
    async with official_client(build(), mode) as (client, _):
        listed = [tool.name for tool in (await client.list_tools()).tools]
    assert "required" not in listed
    assert listed == [tool.__mcpkit_tool__.name for tool in TOOLS if tool.__mcpkit_tool__.task != "required"]


async def test_a_required_task_tool_is_offered_to_a_client_that_declares_tasks() -> None:
    declaring, plain = await offered(build())
    assert declaring == [*plain[:6], "required", *plain[6:]]


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_an_optional_task_tool_runs_in_the_request_for_a_client_without_tasks(mode: str) -> None:
    async with official_client(build(), mode) as (client, _):
        result = await client.call_tool("carrying", {"text": "the whole report"})
    assert result.is_error is False
    assert [block.text for block in result.content] == ["the whole report"]  # type: ignore[union-attr]


async def test_a_required_task_tool_switched_on_later_is_still_offered_only_where_it_can_run() -> None:
    @tool(name="export", description="Exports everything, as a task.", task="required", enabled=False)
    class Export(ToolContext):
        async def execute(self) -> str:
            return "exported"

    server = Server([app(id="exports", tools=[*TOOLS, Export])(type("ExportsApp", (), {}))], auth=StaticKeys(KEYS))
    assert "export" not in (await offered(server))[0]
    await server.enable(tools=["export"])
    declaring, plain = await offered(server)
    assert {"required", "export"} <= set(declaring)
    assert not {"required", "export"} & set(plain)


async def test_a_server_listing_by_scope_hides_a_required_task_tool_from_a_client_without_tasks() -> None:
    @tool(name="scoped", description="Needs a scope.", scopes=["reports:read"])
    class Scoped(ToolContext):
        async def execute(self) -> str:
            return "scoped"

    scoped_app = app(id="scoped", tools=[*TOOLS, Scoped])(type("ScopedApp", (), {}))
    server = Server([scoped_app], auth=StaticKeys(KEYS), list_permitted_tools_only=True)
    declaring, plain = await offered(server)
    assert "required" in declaring
    assert "required" not in plain
    assert {"plain", "scoped"} <= set(plain)


async def test_discover_advertises_the_extension_only_where_a_tool_may_run_as_a_task() -> None:
    @tool(name="only_plain", description="Answers in the request.")
    class OnlyPlain(ToolContext):
        async def execute(self) -> str:
            return "plain"

    plain_app = app(id="plain", tools=[OnlyPlain])(type("PlainApp", (), {}))
    without = Server([plain_app], auth=StaticKeys(KEYS))
    async with serving(build()) as with_tasks, serving(without) as plain:
        offered = await Caller(with_tasks, ALICE).request("server/discover", {})
        assert offered.result is not None
        assert offered.result["capabilities"]["extensions"] == {EXTENSION: {}}
        assert "tasks" not in offered.result["capabilities"]
        bare = await Caller(plain, ALICE).request("server/discover", {})
        assert bare.result is not None
        assert EXTENSION not in (bare.result["capabilities"].get("extensions") or {})
        assert (await Caller(plain, ALICE).get("x")).error["code"] == -32601  # type: ignore[index]


async def test_without_the_extension_a_task_tool_answers_in_the_request_or_asks_for_it() -> None:
    async with serving(build()) as http:
        plain_client = Caller(http, ALICE, tasks=False)
        answered = await plain_client.call("failing")
        assert answered.result is not None
        assert answered.result["resultType"] == "complete"
        assert "taskId" not in answered.result
        assert answered.result["isError"] is True
        refused = await plain_client.call("required")
        assert refused.status == 400
        assert refused.error is not None
        assert refused.error["code"] == -32021
        assert refused.error["data"]["requiredCapabilities"]["extensions"] == {EXTENSION: {}}
        for method in ("tasks/get", "tasks/update", "tasks/cancel"):
            params = {"taskId": "t", "inputResponses": {}}
            gated = await plain_client.request(method, params, "t")
            assert gated.error is not None
            assert gated.error["code"] == -32021, method


async def test_a_plain_tool_answers_as_ever_when_the_client_declares_tasks() -> None:
    async with serving(build()) as http:
        reply = await Caller(http, ALICE).call("plain", {"text": "hi"})
        assert reply.result is not None
        assert reply.result["resultType"] == "complete"
        assert reply.text == "HI"


async def test_the_task_id_travels_in_mcp_name_and_removed_methods_are_not_found() -> None:
    async with serving(build()) as http:
        alice = Caller(http, ALICE)
        task_id = await alice.start("required")
        wrong = await alice.request("tasks/get", {"taskId": task_id}, "another-task")
        missing = await alice.request("tasks/get", {"taskId": task_id})
        for refused in (wrong, missing):
            assert refused.status == 400
            assert refused.error is not None
            assert refused.error["code"] == -32020
        padded = await alice.request("tasks/get", {"taskId": task_id}, f"  {task_id} ")
        assert padded.result is not None
        for removed in ("tasks/list", "tasks/result"):
            assert (await alice.request(removed, {"taskId": task_id}, task_id)).error["code"] == -32601  # type: ignore[index]


NEEDS_ID = "params.taskId (the id the tools/call that started the task returned)"


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        ("tasks/get", {}, f"tasks/get needs {NEEDS_ID}: taskId: Field required."),
        ("tasks/cancel", {"taskId": 5}, f"tasks/cancel needs {NEEDS_ID}: taskId: Input should be a valid string."),
        (
            "tasks/update",
            {"taskId": "t"},
            f"tasks/update needs {NEEDS_ID} and params.inputResponses (an object of answers by the keys of the task's "
            "inputRequests): inputResponses: Field required.",
        ),
    ],
)
async def test_tasks_params_that_are_wrong_say_what_is_wrong_and_what_to_send(
    method: str, params: dict[str, object], message: str
) -> None:
    async with serving(build()) as http:
        reply = await Caller(http, ALICE).request(method, params, "t")

    assert reply.status == 400
    assert reply.error == {"code": -32602, "message": message}  # no `data: ''`


async def test_an_mcp_name_header_missing_or_not_the_task_id_says_what_to_send() -> None:
    async with serving(build()) as http:
        alice = Caller(http, ALICE)
        missing = await alice.request("tasks/get", {"taskId": "t-1"})
        wrong = await alice.request("tasks/cancel", {"taskId": "t-1"}, "t-2")

    assert missing.error == {
        "code": -32020,
        "message": "This request has no Mcp-Name header, which on tasks/get repeats params.taskId (SEP-2663): "
        "send 'Mcp-Name: t-1'.",
    }
    assert wrong.error == {
        "code": -32020,
        "message": "The Mcp-Name header says 't-2' but params.taskId is 't-1' (SEP-2663): send 'Mcp-Name: t-1'.",
    }


async def test_on_2025_11_25_a_task_tool_answers_in_the_request_and_tasks_methods_do_not_exist() -> None:
    async with official_client(build(), "legacy") as (client, http):
        result = await client.call_tool("failing", {})
        assert result.is_error is True
        with pytest.raises(MCPError) as refused:
            await client.call_tool("required", {})
        assert refused.value.code == -32021
        assert str(refused.value) == (
            "Calling 'required' runs only as a task, which needs a client speaking protocol 2026-07-28 with the "
            "tasks extension (io.modelcontextprotocol/tasks); this session speaks 2025-11-25: connect with a client "
            "that does."
        )
        session_id = await open_legacy_session(http, token=ALICE)
        absent = await http.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 9, "method": "tasks/get", "params": {"taskId": "t"}},
            headers={**ACCEPT, "Mcp-Session-Id": session_id, "MCP-Protocol-Version": LEGACY},
        )
        assert body_of(absent)["error"]["code"] == -32601


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"task": "yes"}, "task is True, False or 'required'"),
        ({"task": False, "ask_first": True}, "ask_first=True asks before the call becomes a task"),
        ({"task": True, "ask_first": "no"}, "ask_first is True or False"),
    ],
)
def test_task_options_are_checked_when_the_server_is_built(options: dict[str, object], message: str) -> None:
    @tool(name="checked", description="Checked.", **options)  # type: ignore[arg-type]
    class Checked(ToolContext):
        async def execute(self) -> str:
            return ""

    with pytest.raises(ConfigurationError, match=message):
        Server([app(id="checked", tools=[Checked])(type("CheckedApp", (), {}))])


@pytest.mark.parametrize(("name", "value"), [("task_ttl", 0), ("task_lease", -1), ("task_limit", 0)])
def test_task_settings_are_checked_when_the_server_is_built(name: str, value: int) -> None:
    with pytest.raises(ConfigurationError, match=name):
        build(**{name: value})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"task_ttl": float("inf")}, "task_ttl is a positive number of seconds or None for no limit, not inf."),
        ({"task_limit": 2.5}, "task_limit is a whole number of tasks, at least 1 (or None for no limit); not 2.5."),
        ({"task_max_bytes": 100}, "task_max_bytes is a whole number of bytes, at least 4,096 (or None for no limit); "),
    ],
)
def test_a_task_setting_of_the_wrong_kind_is_refused_saying_what_was_given_and_what_to_give(
    options: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigurationError) as refused:
        build(**options)
    assert str(refused.value).startswith(message)
