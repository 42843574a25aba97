"""Resources and resource templates (issue 12): listed, read as the caller (``self.remember`` works), templates'
parameters typed and checked, text / bytes / several contents, "not found" as the specification says, errors
that never leak, pagination, and refusals at build time that name the class — through the real HTTP stack and
the official ``mcp`` client in both eras."""

from __future__ import annotations

from typing import Annotated, Any

import mcp_types as types
import pytest
from _support import body_of, post_modern, static_user_id
from _support import running as serving
from mcp import MCPError
from pydantic import Field

from mcpkit import (
    ConfigurationError,
    ResourceContext,
    ResourceNotFoundError,
    Server,
    StaticKeys,
    ToolContext,
    ToolError,
    app,
    resource,
    tool,
)
from mcpkit.base._pagination import PAGE_SIZE
from mcpkit.testing import running
from mcpkit_remember import RememberPlugin

KEYS = {"nour": "nour-key-0123456789abcdef", "sam": "sam-key-0123456789abcdef"}
PROTOCOLS = ["2026-07-28", "2025-11-25"]


@tool(name="save_note", description="Keep a note under a key.")
class SaveNote(ToolContext):
    async def execute(self, key: str, text: str) -> dict[str, str]:
        await self.remember.set(f"note:{key}", text, scope="user")
        return {"saved": key}


@resource(uri="notes://{key}", name="note", description="One of your notes.", mime_type="text/markdown")
class Note(ResourceContext):
    async def read(self, key: str) -> str:
        text = await self.remember.get(f"note:{key}", scope="user", default=None)
        if text is None:
            raise ResourceNotFoundError(f"you have no note {key!r}")
        return str(text)

    async def complete_key(self, value: str) -> list[str]:
        return [key.removeprefix("note:") for key in await self.remember.list(scope="user", pattern=f"note:{value}*")]


@resource(uri="tickets://{number}/history", name="ticket-history")
class TicketHistory(ResourceContext):
    """A ticket's history, one line per event."""

    async def read(self, number: int) -> list[str | bytes]:
        return [f"ticket {number} opened", b"\x89PNG attachment"]


@resource(uri="desk://logo", name="logo", mime_type="image/png")
class Logo(ResourceContext):
    async def read(self) -> bytes:
        return b"\x89PNG\r\n\x1a\n"


@resource(uri="desk://who", name="who")
class Who(ResourceContext):
    async def read(self) -> str:
        return f"{self.caller.user_id} read {self.uri} as a {self.kind}"


@resource(uri="desk://broken", name="broken")
class Broken(ResourceContext):
    async def read(self) -> str:
        raise RuntimeError("the secret database password is hunter2")


@app(
    id="notes",
    tools=[SaveNote],
    resources=[Note, TicketHistory, Logo, Who, Broken],
    plugins=[RememberPlugin.init(type="memory")],
)
class NotesApp: ...


def make_server() -> Server:
    return Server([NotesApp], auth=StaticKeys(KEYS))


@resource(uri="desk://closed", name="closed")
class Closed(ResourceContext):
    async def read(self) -> str:
        raise ToolError("The desk is closed on Sundays; read it again tomorrow.", code="DESK_CLOSED")


@app(id="desk", resources=[Closed])
class DeskApp: ...


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_listed_and_read_as_the_caller(protocol: str) -> None:
    async with running(make_server(), protocol=protocol) as call_as:
        nour, sam = call_as("nour"), call_as("sam")
        listed = {r.uri: r for r in await nour.list_resources()}
        assert sorted(listed) == ["desk://broken", "desk://logo", "desk://who"]
        assert listed["desk://logo"].mime_type == "image/png"
        templates = {t.uri_template: t for t in await nour.list_resource_templates()}
        assert sorted(templates) == ["notes://{key}", "tickets://{number}/history"]
        assert templates["notes://{key}"].description == "One of your notes."
        assert templates["tickets://{number}/history"].description == "A ticket's history, one line per event."
        await nour.call("save_note", {"key": "plan", "text": "# Nour's plan"})
        await sam.call("save_note", {"key": "plan", "text": "# Sam's plan"})
        note = await nour.read_resource("notes://plan")
        assert note.contents == [
            types.TextResourceContents(uri="notes://plan", mime_type="text/markdown", text="# Nour's plan")
        ]
        assert await sam.read("notes://plan") == "# Sam's plan"  # each caller's own memory
        assert await nour.read("desk://logo") == b"\x89PNG\r\n\x1a\n"
        who = await nour.read("desk://who")
        assert who == f"{static_user_id(KEYS['nour'])} read desk://who as a resource"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_template_converts_its_parameters_and_can_answer_several_contents(protocol: str) -> None:
    async with running(make_server(), protocol=protocol) as call_as:
        nour = call_as("nour")
        history = (await nour.read_resource("tickets://42/history")).contents
        assert isinstance(history[0], types.TextResourceContents)
        assert history[0].text == "ticket 42 opened"
        assert isinstance(history[1], types.BlobResourceContents)
        assert history[1].mime_type == "application/octet-stream"
        with pytest.raises(MCPError) as refused:
            await nour.read_resource("tickets://forty-two/history")
        assert refused.value.error.code == types.INVALID_PARAMS
        assert "number: Input should be a valid integer" in refused.value.error.message
        assert refused.value.error.data == {"uri": "tickets://forty-two/history"}


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(
    ("uri", "why"),
    [
        ("notes://nothing-here", "you have no note 'nothing-here'"),  # read() raised ResourceNotFoundError
        ("elsewhere://x", "list resources and templates"),  # no resource or template matches
        ("notes://..", "may not hold '..'"),  # path traversal in a parameter
    ],
)
async def test_not_found_is_minus_32602_with_the_uri(protocol: str, uri: str, why: str) -> None:
    async with running(make_server(), protocol=protocol) as call_as:
        with pytest.raises(MCPError) as refused:
            await call_as("nour").read_resource(uri)
    assert refused.value.error.code == -32602
    assert refused.value.error.message.startswith(f"Resource not found: {uri}")
    assert why in refused.value.error.message
    assert refused.value.error.data == {"uri": uri}


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_an_anonymous_read_of_a_users_data_is_refused_as_a_tool_call_is_never_as_an_internal_error(
    protocol: str,
) -> None:
    server = Server([NotesApp, DeskApp], auth=StaticKeys(KEYS), allow_anonymous=True)
    note_keys = types.ResourceTemplateReference(type="ref/resource", uri="notes://{key}")
    async with running(server, protocol=protocol) as call_as:
        anonymous = call_as(None)
        by_tool = await anonymous.call_tool("save_note", {"key": "plan", "text": "mine"})
        with pytest.raises(MCPError) as read:
            await anonymous.read_resource("notes://plan")
        with pytest.raises(MCPError) as completed:
            await anonymous.complete(note_keys, "key", "pl")
        with pytest.raises(MCPError) as closed:
            await call_as("nour").read_resource("desk://closed")

    assert by_tool.is_error
    assert by_tool.meta is not None
    refusal = by_tool.meta["mcpkit/error"]
    assert refusal["code"] == "REMEMBER_IDENTITY_REQUIRED"
    assert refusal["message"].startswith("Cannot use user scope: the caller is anonymous")
    # the same refusal, as a JSON-RPC error: -32600 like every refusal of the caller (a missing scope too)
    assert read.value.error.code == types.INVALID_REQUEST
    assert read.value.error.message == refusal["message"]
    assert read.value.error.data == {"code": "REMEMBER_IDENTITY_REQUIRED", "uri": "notes://plan"}
    assert completed.value.error.code == types.INVALID_REQUEST
    assert completed.value.error.data == {"code": "REMEMBER_IDENTITY_REQUIRED"}
    # any other ToolError keeps -32603, with its message and code
    assert closed.value.error.code == types.INTERNAL_ERROR
    assert closed.value.error.message == "The desk is closed on Sundays; read it again tomorrow."
    assert closed.value.error.data == {"code": "DESK_CLOSED", "uri": "desk://closed"}


async def test_on_the_wire_2026_07_28_an_anonymous_read_of_a_users_data_is_http_400_with_minus_32600() -> None:
    server = Server([NotesApp], auth=StaticKeys(KEYS), allow_anonymous=True)
    async with serving(server.http_app()) as http:
        response = await post_modern(http, "resources/read", {"uri": "notes://plan"}, name="notes://plan")
    assert response.status_code == 400  # a request this caller cannot make, as the SDK maps -32600; never a 5xx
    error = body_of(response)["error"]
    assert error["code"] == -32600
    assert error["data"] == {"code": "REMEMBER_IDENTITY_REQUIRED", "uri": "notes://plan"}


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_read_that_fails_says_so_without_its_internals(protocol: str, caplog: pytest.LogCaptureFixture) -> None:
    async with running(make_server(), protocol=protocol) as call_as:
        with pytest.raises(MCPError) as refused:
            await call_as("nour").read_resource("desk://broken")
    assert refused.value.error.code == types.INTERNAL_ERROR
    assert "hunter2" not in repr(refused.value.error)
    assert refused.value.error.message == "Reading desk://broken failed on the server; its log says why."
    assert any("hunter2" in (record.exc_text or "") for record in caplog.records if record.name == "mcpkit.resources")


async def test_on_the_wire_2026_07_28_not_found_is_http_400_with_data_uri() -> None:
    async with serving(make_server().http_app()) as http:
        response = await post_modern(
            http, "resources/read", {"uri": "elsewhere://x"}, token=KEYS["nour"], name="elsewhere://x"
        )
        assert response.status_code == 400
        error = body_of(response)["error"]
        assert error["code"] == -32602
        assert error["data"] == {"uri": "elsewhere://x"}
        unauthenticated = await post_modern(http, "resources/list", {})
        assert unauthenticated.status_code == 401


async def test_a_server_without_resources_offers_none() -> None:
    @app(id="bare", tools=[SaveNote], plugins=[RememberPlugin.init(type="memory")])
    class BareApp: ...

    async with running(Server([BareApp], auth=StaticKeys(KEYS))) as call_as:
        with pytest.raises(MCPError) as refused:
            await call_as("nour").list_resources()
    assert refused.value.error.code == -32601  # method not found: no resources capability


async def test_long_lists_come_in_pages() -> None:
    classes = []
    for number in range(PAGE_SIZE + 5):

        @resource(uri=f"many://{number}", name=f"item-{number}")
        class Item(ResourceContext):
            async def read(self) -> str:
                return self.uri

        classes.append(Item)

    @app(id="many", resources=classes)
    class ManyApp: ...

    async with running(Server([ManyApp], auth=StaticKeys(KEYS))) as call_as:
        nour = call_as("nour")
        assert len(await nour.list_resources()) == PAGE_SIZE + 5  # the testing client follows nextCursor
        async with serving(Server([ManyApp], auth=StaticKeys(KEYS)).http_app()) as http:
            first = body_of(await post_modern(http, "resources/list", {}, token=KEYS["nour"]))["result"]
            assert len(first["resources"]) == PAGE_SIZE
            rest = await post_modern(http, "resources/list", {"cursor": first["nextCursor"]}, token=KEYS["nour"])
            assert len(body_of(rest)["result"]["resources"]) == 5
            assert "nextCursor" not in body_of(rest)["result"]
            forged = await post_modern(http, "resources/list", {"cursor": "not-ours"}, token=KEYS["nour"])
            assert body_of(forged)["error"]["code"] == -32602


def _server_with(*resources: type[Any]) -> Server:
    @app(id="x", resources=list(resources))
    class XApp: ...

    return Server([XApp], auth=StaticKeys(KEYS))


class NotDecorated(ResourceContext):
    async def read(self) -> str:
        return ""


@resource(uri="a://{key}", name="mismatch")
class Mismatch(ResourceContext):
    async def read(self, name: str) -> str:
        return name


@resource(uri="a://static", name="takes-parameters")
class TakesParameters(ResourceContext):
    async def read(self, key: str) -> str:
        return key


@resource(uri="no-scheme", name="no-scheme")
class NoScheme(ResourceContext):
    async def read(self) -> str:
        return ""


@resource(uri="a://{key", name="bad-template")
class BadTemplate(ResourceContext):
    async def read(self, key: str) -> str:
        return key


@resource(uri="a://sync", name="sync")
class Sync(ResourceContext):
    def read(self) -> str:  # type: ignore[override]
        return ""


@resource(uri="a://wrong-base", name="wrong-base")
class WrongBase(ToolContext):
    async def read(self) -> str:
        return ""


@resource(uri="desk://logo", name="another-logo")
class AnotherLogo(ResourceContext):
    async def read(self) -> str:
        return ""


@resource(uri="a://{key}/completed", name="completes-nothing")
class CompletesNothing(ResourceContext):
    async def read(self, key: str) -> str:
        return key

    async def complete_other(self, value: str) -> list[str]:
        return []


@resource(uri="a://{ticket_id}", name="aliased")
class Aliased(ResourceContext):
    async def read(self, ticket_id: Annotated[str, Field(alias="ticketId")]) -> str:
        return ticket_id


@pytest.mark.parametrize(
    ("classes", "message"),
    [
        ((NotDecorated,), "is not a resource: decorate it with @resource"),
        ((Aliased,), "read() parameter 'ticket_id' has an alias"),
        ((Mismatch,), "placeholders ['key'] and read()'s parameters ['name'] differ"),
        ((TakesParameters,), "read() takes key, but uri 'a://static' has no placeholders"),
        ((NoScheme,), "is not an absolute URI"),
        ((BadTemplate,), "is not a valid URI template"),
        ((Sync,), "needs `async def read(self, ...)`"),
        ((WrongBase,), "must subclass mcpkit.ResourceContext"),
        ((Logo, AnotherLogo), "Two resources have the URI 'desk://logo'"),
        ((CompletesNothing,), "complete_other() completes 'other', which is not one of its parameters"),
    ],
)
def test_mistakes_are_refused_when_the_server_is_built(classes: tuple[type[Any], ...], message: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        _server_with(*classes)
    assert message in str(refused.value)


async def test_tools_come_in_pages_too() -> None:
    tools = []
    for number in range(PAGE_SIZE + 1):

        @tool(name=f"tool_{number}", description="One of many.")
        class Numbered(ToolContext):
            async def execute(self) -> str:
                return "ok"

        tools.append(Numbered)

    @app(id="many-tools", tools=tools)
    class ManyTools: ...

    server = Server([ManyTools], auth=StaticKeys(KEYS))
    async with running(server) as call_as:
        assert len(await call_as("nour").list_tools()) == PAGE_SIZE + 1
    async with serving(server.http_app()) as http:
        first = body_of(await post_modern(http, "tools/list", {}, token=KEYS["nour"]))["result"]
        assert len(first["tools"]) == PAGE_SIZE
        rest = body_of(await post_modern(http, "tools/list", {"cursor": first["nextCursor"]}, token=KEYS["nour"]))
        assert [t["name"] for t in rest["result"]["tools"]] == [f"tool_{PAGE_SIZE}"]
