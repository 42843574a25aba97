"""MCP Apps (issue 40): a ``ui://`` view and the tools shown in it, through the real stack in both eras, without a
browser: ``tools/list`` carries ``_meta.ui`` to a host that declared the extension and nothing else to one that did
not; ``resources/read`` returns the HTML as ``text/html;profile=mcp-app`` with its sandbox; a view's calls are
ordinary calls (Sam's view cannot read Nour's signature); a tool naming a missing view fails when the server is
built."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest

from core._support import NOUR_KEY, SAM_KEY
from mcpkit import (
    ConfigurationError,
    ResourceContext,
    Server,
    StaticKeys,
    ToolContext,
    Ui,
    UiResource,
    app,
    resource,
    tool,
)
from mcpkit.server import listing
from mcpkit.testing import CallAs
from mcpkit.ui import declares_ui
from mcpkit_remember import RememberPlugin

DRAFT_HTML = "<!DOCTYPE html><html><body><main id='draft'></main></body></html>"


@resource(
    uri="ui://helpdesk/draft",
    name="draft_view",
    description="The draft of a reply, to read and correct by hand.",
    ui=UiResource(connect_domains=["https://api.example.com"], prefers_border=True),
)
class DraftView(ResourceContext):
    async def read(self) -> str:
        return DRAFT_HTML


@tool(name="draft_reply", description="Draft a reply signed with your signature.", ui=Ui(view="ui://helpdesk/draft"))
class DraftReply(ToolContext):
    async def execute(self, text: str) -> dict[str, str]:
        signature = await self.remember.get("signature", scope="user", default="The Help Desk")
        return {"reply": f"{text}\n\n{signature}"}


@tool(
    name="save_signature",
    description="Save the signature the draft view shows.",
    ui=Ui(view="ui://helpdesk/draft", visibility=["app"]),
)
class SaveSignature(ToolContext):
    async def execute(self, signature: str) -> dict[str, str]:
        await self.remember.set("signature", signature, scope="user")
        return {"signature": signature}


@app(
    id="views",
    tools=[DraftReply, SaveSignature],
    resources=[DraftView],
    plugins=[RememberPlugin.init(type="memory")],
)
class ViewsApp: ...


@pytest.fixture
def mcpkit_server() -> Server:
    return Server([ViewsApp], auth=StaticKeys({"nour": NOUR_KEY, "sam": SAM_KEY}))


def ui_of(tools: list[types.Tool]) -> dict[str, Any]:
    return {found.name: (found.meta or {}).get("ui") for found in tools}


async def test_a_host_that_renders_views_is_listed_each_tools_view_and_visibility(call_as: CallAs) -> None:
    listed = await call_as("nour", ui=True).list_tools()

    assert ui_of(listed) == {
        "draft_reply": {"resourceUri": "ui://helpdesk/draft", "visibility": ["model", "app"]},
        "save_signature": {"resourceUri": "ui://helpdesk/draft", "visibility": ["app"]},
    }


async def test_reading_the_view_returns_its_html_as_an_mcp_app_with_its_sandbox(call_as: CallAs) -> None:
    host = call_as("nour", ui=True)
    view = await host.view_of("draft_reply")

    assert view.uri == "ui://helpdesk/draft"
    assert view.html == DRAFT_HTML
    assert view.mime_type == "text/html;profile=mcp-app"
    assert view.ui == {"csp": {"connectDomains": ["https://api.example.com"]}, "prefersBorder": True}
    assert view.csp == {"connectDomains": ["https://api.example.com"]}
    assert view.visibility == ("model", "app")
    [listed] = await host.list_resources()
    assert (listed.uri, listed.mime_type, listed.meta) == ("ui://helpdesk/draft", view.mime_type, {"ui": view.ui})


async def test_a_host_without_the_extension_sees_the_tools_as_if_there_were_no_views(call_as: CallAs) -> None:
    plain, host = call_as("nour"), call_as("nour", ui=True)

    assert ui_of(await plain.list_tools()) == {"draft_reply": None}  # the view-only tool is not offered either
    assert (await plain.call_tool("draft_reply", {"text": "Hi!"})) == (
        await host.call_tool("draft_reply", {"text": "Hi!"})
    )
    assert await plain.list_resources() == []  # nor the view, which it could not show
    assert await plain.read("ui://helpdesk/draft") == DRAFT_HTML  # though it may read it, as any resource
    with pytest.raises(AssertionError, match=r"call_as\(\.\.\., ui=True\)"):
        await plain.view_of("draft_reply")


async def test_a_view_calls_as_its_caller_so_sams_view_cannot_read_nours_signature(call_as: CallAs) -> None:
    nours_view, sams_view = call_as("nour", ui=True), call_as("sam", ui=True)

    await nours_view.call("save_signature", {"signature": "Nour, Customer Care"})

    assert await sams_view.call("draft_reply", {"text": "Hi!"}) == {"reply": "Hi!\n\nThe Help Desk"}
    assert await nours_view.call("draft_reply", {"text": "Hi!"}) == {"reply": "Hi!\n\nNour, Customer Care"}


async def test_a_host_that_declares_the_extension_without_the_html_mime_type_renders_no_views() -> None:
    declared = {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/uri-list"]}}
    assert not declares_ui(types.ClientCapabilities(extensions=declared))
    assert not declares_ui(types.ClientCapabilities(extensions={"io.modelcontextprotocol/ui": {}}))
    assert declares_ui(
        types.ClientCapabilities(
            extensions={"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
        )
    )


async def test_the_server_advertises_the_extension_on_2026_07_28_when_it_has_views() -> None:
    with_views = await listing(Server([ViewsApp], allow_anonymous=True), "2026-07-28")
    without = await listing(Server([NoViewsApp], allow_anonymous=True), "2026-07-28")

    assert with_views["capabilities"]["extensions"] == {"io.modelcontextprotocol/ui": {}}
    assert "io.modelcontextprotocol/ui" not in (without["capabilities"].get("extensions") or {})


async def test_on_2025_11_25_the_handshake_has_no_extensions_so_hosts_find_views_through_the_tools() -> None:
    shown = await listing(Server([ViewsApp], allow_anonymous=True), "2025-11-25")

    assert "extensions" not in shown["capabilities"]  # that era's ServerCapabilities has no such field
    # ... and a host that declares the extension there is listed the tools' _meta.ui (the tests above, in both eras)


@tool(name="plain", description="A tool shown in no view.")
class Plain(ToolContext):
    async def execute(self) -> str:
        return "plain"


@app(id="plain", tools=[Plain])
class NoViewsApp: ...


def server_with(*, tools: tuple[type[Any], ...] = (), resources: tuple[type[Any], ...] = ()) -> Server:
    @app(id="built", tools=list(tools), resources=list(resources))
    class Built: ...

    return Server([Built], allow_anonymous=True)


def test_a_tool_naming_a_view_no_app_declares_fails_when_the_server_is_built_naming_the_class_and_uri() -> None:
    @tool(name="shown", description="Shown in a view that is not there.", ui=Ui(view="ui://helpdesk/missing"))
    class Shown(ToolContext):
        async def execute(self) -> str:
            return ""

    with pytest.raises(ConfigurationError) as refused:
        server_with(tools=(Shown,), resources=(DraftView,))
    assert "Shown ('shown') names the view 'ui://helpdesk/missing', which no app of this server declares" in str(
        refused.value
    )
    assert "(views declared: ui://helpdesk/draft)" in str(refused.value)


@pytest.mark.parametrize(
    ("ui", "problem"),
    [
        (Ui(view="https://example.com/draft"), "a view's URI starts with 'ui://'"),
        (Ui(view="ui://helpdesk/draft", visibility=["agent"]), "holds 'agent'; use 'model'"),
        (Ui(view="ui://helpdesk/draft", visibility=[]), "is a non-empty list of 'model' and 'app'"),
        (Ui(view="ui://helpdesk/draft", visibility="app"), "is a non-empty list of 'model' and 'app'"),  # type: ignore[arg-type]
        (Ui(view="ui://helpdesk/draft", visibility=["app", "app"]), "names a value twice"),
        ("ui://helpdesk/draft", "ui is an mcpkit.Ui"),
    ],
)
def test_a_tools_ui_is_checked_when_the_server_is_built(ui: Any, problem: str) -> None:
    @tool(name="shown", description="Shown in a view.", ui=ui)
    class Shown(ToolContext):
        async def execute(self) -> str:
            return ""

    with pytest.raises(ConfigurationError, match="Shown") as refused:
        server_with(tools=(Shown,), resources=(DraftView,))
    assert problem in str(refused.value)


@pytest.mark.parametrize(
    ("uri", "options", "problem"),
    [
        ("helpdesk://draft", {"ui": UiResource()}, "whose URI starts with 'ui://'"),
        ("ui://helpdesk/draft", {"mime_type": "text/html"}, "is served as 'text/html;profile=mcp-app'"),
        ("ui://helpdesk/draft", {"ui": UiResource(connect_domains=["api.example.com"])}, "which is not an origin"),
        ("ui://helpdesk/draft", {"ui": UiResource(resource_domains=["https://a.com; script-src *"])}, "not an origin"),
        ("ui://helpdesk/draft", {"ui": UiResource(connect_domains="https://a.com")}, "is a list of origins"),  # type: ignore[arg-type]
        ("ui://helpdesk/draft", {"ui": UiResource(prefers_border="yes")}, "is True, False or None"),  # type: ignore[arg-type]
        ("ui://helpdesk/draft", {"ui": UiResource(domain="a b")}, "is a host name"),
        ("ui://helpdesk/draft", {"ui": UiResource(permissions=["clipboard"])}, "holds 'clipboard'; a view may ask for"),
        ("ui://helpdesk/draft", {"ui": UiResource(permissions="camera")}, "is a list, like ['clipboard-write']"),  # type: ignore[arg-type]
    ],
)
def test_a_views_uri_and_sandbox_are_checked_when_the_server_is_built(
    uri: str, options: dict[str, Any], problem: str
) -> None:
    @resource(uri=uri, name="view", **options)
    class OddView(ResourceContext):
        async def read(self) -> str:
            return DRAFT_HTML

    with pytest.raises(ConfigurationError, match="OddView") as refused:
        server_with(resources=(OddView,))
    assert problem in str(refused.value)


def test_a_view_is_one_fixed_uri_not_a_template() -> None:
    @resource(uri="ui://helpdesk/drafts/{ticket}", name="drafts_view")
    class DraftsView(ResourceContext):
        async def read(self, ticket: str) -> str:
            return DRAFT_HTML

    with pytest.raises(ConfigurationError, match=r"DraftsView.*is a URI template; a view has one fixed URI"):
        server_with(resources=(DraftsView,))


def test_a_view_accepts_wildcard_subdomains_and_ports_in_its_origins() -> None:
    @resource(
        uri="ui://helpdesk/map",
        name="map_view",
        ui=UiResource(resource_domains=["https://*.tiles.example.com"], connect_domains=["wss://localhost:8443"]),
    )
    class MapView(ResourceContext):
        async def read(self) -> str:
            return DRAFT_HTML

    assert server_with(resources=(MapView,)).catalog.resources.views() == {"ui://helpdesk/map"}


async def test_a_view_asks_for_browser_features_as_the_extension_spells_them() -> None:
    @resource(uri="ui://helpdesk/call", name="call_view", ui=UiResource(permissions=["microphone", "clipboard-write"]))
    class CallView(ResourceContext):
        async def read(self) -> str:
            return DRAFT_HTML

    [listed] = (await listing(server_with(resources=(CallView,)), "2026-07-28", ui=True))["resources"]
    assert listed["_meta"] == {"ui": {"permissions": {"microphone": {}, "clipboardWrite": {}}}}
