"""``mcpkit inspect``: exactly what the official client is shown over real HTTP, in both eras, with the schema lint."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.extension import advertise
from mcp.client.streamable_http import streamable_http_client

from cli._commands import APP, KEY, environment, mcpkit, running
from mcpkit._cli._inspect import inspected
from mcpkit.testing import TasksExtension
from mcpkit.tools import lint_tool


def wire(models: list[Any]) -> list[dict[str, Any]]:
    return [model.model_dump(by_alias=True, exclude_none=True, mode="json") for model in models]


async def listed_over_http(url: str, mode: str) -> dict[str, Any]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {KEY}"}, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        return {
            "serverInfo": client.server_info.model_dump(by_alias=True, exclude_none=True, mode="json")
            if client.server_info
            else None,
            "capabilities": client.server_capabilities.model_dump(by_alias=True, exclude_none=True, mode="json"),
            "tools": wire((await client.list_tools()).tools),
            "resources": wire((await client.list_resources()).resources),
            "resourceTemplates": wire((await client.list_resource_templates()).resource_templates),
            "prompts": wire((await client.list_prompts()).prompts),
        }


@pytest.mark.parametrize(("era", "mode"), [("2026-07-28", "auto"), ("2025-11-25", "legacy")])
async def test_inspect_prints_what_the_official_client_lists_over_http(tmp_path: Path, era: str, mode: str) -> None:
    (tmp_path / "app.py").write_text(APP)
    with running(tmp_path, "run", "app.py", "--port", "0", "--log-level", "warning", env=environment()) as served:
        over_http = await listed_over_http(served.url(), mode)

    done = mcpkit(tmp_path, "inspect", "app.py", "--protocol", era, env=environment())

    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert {key: printed[key] for key in over_http} == over_http
    assert printed["protocolVersions"] == [era]
    assert [tool["name"] for tool in printed["tools"]] == ["greet"]
    assert printed["resourceTemplates"][0]["uriTemplate"] == "notes://{topic}"
    assert printed["prompts"][0]["name"] == "summarise"
    assert printed["lint"] == []
    assert done.stderr == ""


def test_inspect_without_protocol_shows_both_eras_once_when_they_agree(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(APP)

    done = mcpkit(tmp_path, "inspect", "app.py", env=environment())

    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed["protocolVersions"] == ["2026-07-28", "2025-11-25"]
    assert "2025-11-25" not in printed
    assert printed["serverInfo"] == {"name": "notes", "version": "0.1.0"}


def test_an_era_shown_something_else_gets_its_own_object() -> None:
    newer = {"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}
    older = {"tools": [{"name": "a", "inputSchema": {"type": "object"}}, {"name": "b", "inputSchema": {}}]}

    document, findings = inspected({"2026-07-28": newer, "2025-11-25": older})

    assert document["protocolVersions"] == ["2026-07-28"]
    assert document["2025-11-25"] == older
    assert [(tool, finding.rule) for tool, finding in findings] == [("b", "untyped-schema")]


#: Hand-written schemas with each finding of the Inspector's lint.
LINTED = textwrap.dedent(
    """
    from mcpkit import Server, ToolContext, app, tool

    SCHEMA = {{
        "type": "object",
        "properties": {{"value": {value}, "tags": {{"type": "array", "items": {{"type": "string"}}}}}},
        "additionalProperties": False,
    }}


    @tool(name="store", description="Store a value.", input_schema=SCHEMA)
    class Store(ToolContext):
        async def execute(self, **arguments: object) -> str:
            return "stored"


    @app(id="linted", tools=[Store])
    class Linted: ...


    server = Server([Linted], allow_anonymous=True)
    """
)


@pytest.mark.parametrize(
    ("value", "strict", "code", "line"),
    [
        ("True", False, 3, "mcpkit inspect: error: tool 'store' inputSchema.properties.value is a bare true/false"),
        (
            '{"type": ["string", "null"]}',
            False,
            0,
            "mcpkit inspect: warning: tool 'store' inputSchema.properties.value ",
        ),
        (
            '{"type": ["string", "null"]}',
            True,
            3,
            "mcpkit inspect: warning: tool 'store' inputSchema.properties.value ",
        ),
        ("{}", False, 0, "mcpkit inspect: warning: tool 'store' inputSchema.properties.value accepts any value"),
        ('{"type": "string"}', True, 0, None),
    ],
    ids=["boolean-schema-fails", "type-union-warns", "strict-fails-on-warnings", "untyped-warns", "clean"],
)
def test_the_schema_lint_is_reported_and_an_error_exits_3(
    tmp_path: Path, value: str, strict: bool, code: int, line: str | None
) -> None:
    (tmp_path / "linted.py").write_text(LINTED.format(value=value))

    done = mcpkit(tmp_path, "inspect", "linted.py", *(["--strict"] if strict else []), env=environment())

    assert done.returncode == code, done.stderr
    said = done.stderr.splitlines()
    printed = json.loads(done.stdout)  # printed whatever the lint found
    if line is None:
        assert said == []
        assert printed["lint"] == []
    else:
        assert len(said) == 1, said
        assert said[0].startswith(line)
        assert printed["lint"][0]["path"] == "inputSchema.properties.value"


def test_inspect_opens_no_store(tmp_path: Path) -> None:
    """Nothing is served and no plugin starts: a store that cannot be reached is not asked."""
    (tmp_path / "stored.py").write_text(
        textwrap.dedent(
            """
            from mcpkit import Server, ToolContext, app, tool
            from mcpkit_remember import RememberPlugin


            @tool(name="ping", description="Ping.")
            class Ping(ToolContext):
                async def execute(self) -> str:
                    return "pong"


            url = "redis://127.0.0.1:9/0"
            remember = RememberPlugin.init(type="redis", url=url, secret="a-long-enough-secret-0123")


            @app(id="stored", tools=[Ping], plugins=[remember])
            class Stored: ...


            server = Server([Stored], allow_anonymous=True)
            """
        )
    )

    done = mcpkit(tmp_path, "inspect", "stored.py", env=environment())

    assert done.returncode == 0, done.stderr
    assert "ping" in [tool["name"] for tool in json.loads(done.stdout)["tools"]]


def test_inspect_of_a_target_that_does_not_load_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = mcpkit(tmp_path, "inspect", "missing.py", env=environment())

    assert done.returncode == 2
    assert done.stderr == "mcpkit: No such file: missing.py\n"
    assert done.stdout == ""


TASK_ONLY = APP.replace(
    '@app(id="notes", tools=[Greet]',
    textwrap.dedent(
        """
        @tool(name="export", description="Exports every note, as a task.", task="required")
        class Export(ToolContext):
            async def execute(self) -> str:
                return "exported"


        @app(id="notes", tools=[Greet, Export]"""
    ),
)


async def test_a_task_only_tool_is_listed_as_a_client_with_tasks_sees_it_and_named_task_only(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(TASK_ONLY)
    with running(tmp_path, "run", "app.py", "--port", "0", "--log-level", "warning", env=environment()) as served:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {KEY}"}, timeout=30) as http,
            Client(streamable_http_client(served.url(), http_client=http), extensions=[TasksExtension()]) as client,
        ):
            with_tasks = wire((await client.list_tools()).tools)

    done = mcpkit(tmp_path, "inspect", "app.py", env=environment())

    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed["tools"] == with_tasks
    assert [tool["name"] for tool in printed["tools"]] == ["greet", "export"]
    assert printed["taskOnly"] == ["export"]
    assert [tool["name"] for tool in printed["2025-11-25"]["tools"]] == ["greet"]
    assert "taskOnly" not in printed["2025-11-25"]


WITH_VIEWS = APP.replace("from mcpkit import ", "from mcpkit import Ui, UiResource, ").replace(
    '@app(id="notes", tools=[Greet], resources=[Note]',
    textwrap.dedent(
        """
        CARD = UiResource(prefers_border=True, permissions=["clipboard-write"])


        @resource(uri="ui://notes/card", name="note_card", ui=CARD)
        class NoteCard(ResourceContext):
            async def read(self) -> str:
                return "<!DOCTYPE html><html><body>a note</body></html>"


        @tool(name="show_note", description="Shows a note.", ui=Ui(view="ui://notes/card"))
        class ShowNote(ToolContext):
            async def execute(self, topic: str) -> str:
                return "about " + topic


        @tool(name="pin_note", description="Pins a note.", ui=Ui(view="ui://notes/card", visibility=["app"]))
        class PinNote(ToolContext):
            async def execute(self, topic: str) -> str:
                return "pinned " + topic


        @app(id="notes", tools=[Greet, ShowNote, PinNote], resources=[Note, NoteCard]"""
    ),
)


async def test_inspect_lists_as_a_host_that_renders_views_and_names_each_view_with_its_tools(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(WITH_VIEWS)
    rendering = [advertise("io.modelcontextprotocol/ui", {"mimeTypes": ["text/html;profile=mcp-app"]})]
    with running(tmp_path, "run", "app.py", "--port", "0", "--log-level", "warning", env=environment()) as served:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {KEY}"}, timeout=30) as http,
            Client(streamable_http_client(served.url(), http_client=http), extensions=rendering) as client,
        ):
            tools, resources = wire((await client.list_tools()).tools), wire((await client.list_resources()).resources)

    done = mcpkit(tmp_path, "inspect", "app.py", env=environment())

    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed["tools"] == tools
    assert printed["resources"] == resources
    assert printed["views"] == [
        {
            "uri": "ui://notes/card",
            "name": "note_card",
            "ui": {"prefersBorder": True, "permissions": {"clipboardWrite": {}}},
            "tools": {"show_note": ["model", "app"], "pin_note": ["app"]},
        }
    ]
    assert printed["viewOnly"] == ["pin_note"]
    assert "taskOnly" not in printed


def nested(depth: int) -> dict[str, Any]:
    inner: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        inner = {"type": "object", "properties": {"x": inner}}
    return inner


ID = "https://example.com/notes.json"


@pytest.mark.parametrize(
    ("value", "defs", "verdict"),
    [
        (nested(60), {}, None),
        (nested(100), {}, "deep-schema"),
        ({"$ref": "other.json"}, {}, "remote-ref"),
        ({"$ref": f"{ID}#/$defs/word"}, {"word": {"type": "string"}}, None),  # inside: the document's $id names it
        ({"$ref": "#/$defs/word"}, {"word": {"type": "string"}}, None),
    ],
    ids=["nested-60", "nested-100", "outside-ref", "ref-by-id", "ref-by-pointer"],
)
def test_the_server_and_the_lint_give_the_same_verdict_on_a_schema(
    tmp_path: Path, value: dict[str, Any], defs: dict[str, Any], verdict: str | None
) -> None:
    """One walk for both: what the Server refuses to build with, inspect reports as the server's one-line refusal,
    and the lint alone calls an error or warning; what the Server accepts, the lint finds nothing in."""
    schema = {"$id": ID, "type": "object", "properties": {"value": value}, "additionalProperties": False}
    schema |= {"$defs": defs} if defs else {}
    (tmp_path / "schema.json").write_text(json.dumps(schema))  # too deep for a Python literal
    loaded = 'SCHEMA = json.loads(Path(__file__).with_name("schema.json").read_text())\n_ = {'
    module = LINTED.format(value="{}").replace("SCHEMA = {", loaded)
    (tmp_path / "linted.py").write_text("import json\nfrom pathlib import Path\n" + module)

    done = mcpkit(tmp_path, "inspect", "linted.py", env=environment())
    linted = {finding.rule for finding in lint_tool(schema, None)}

    if verdict is None:
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["lint"] == []
        assert linted == set()
    else:
        assert done.returncode == 2
        assert done.stderr.startswith("mcpkit: tool class linted.Store ('store'): input_schema")
        assert len(done.stderr.splitlines()) == 1
        assert linted == {verdict}
