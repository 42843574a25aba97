"""``mount``: another server's apps (or one app) served under a prefix: tools and prompts as ``prefix_name``,
resources at their own URIs, with the mounted server's plugins, scopes and rate limits intact, what its code sees
unchanged (names, data), and every clash or mistake refused when the host is built, naming both sides."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from pydantic import Field

from mcpkit import (
    ConfigurationError,
    JWTAuth,
    MethodCall,
    Plugin,
    PromptContext,
    ResourceContext,
    Server,
    StaticKeys,
    ToolContext,
    app,
    mount,
    prompt,
    resource,
    tool,
)
from mcpkit.testing import CallAs, HTTPRefusedError, ToolCallError, running
from mcpkit_remember import RememberPlugin
from tasks.support import ALICE, Caller, serving

KEYS = {"nour": "nour-key-0123456789abcdef", "sam": "sam-key-fedcba9876543210"}
JWT_SECRET = "mount-tests-jwt-secret-0123456789abcdef"
SECRET = "mount-tests-remember-secret-0123456789"
#: What the recording plugins saw: (plugin, tool name the call landed on).
SEEN: list[tuple[str, str]] = []


class Recording(Plugin):
    def __init__(self, label: str) -> None:
        self.label = label

    async def before_call(self, ctx: ToolContext, arguments: Mapping[str, Any]) -> None:
        SEEN.append((self.label, ctx.tool_name))


@tool(name="keep", description="Keep a note for this tool alone; say what it replaced.")
class Keep(ToolContext):
    async def execute(self, text: str) -> dict[str, str | None]:
        before = await self.remember.get("note", scope="tool", default=None)
        await self.remember.set("note", text, scope="tool")
        return {"kept": text, "before": before, "as": self.tool_name, "app": self.app_id}


@tool(name="read_back", description="Read the caller's own note.")
async def read_back(ctx: ToolContext) -> str:
    return str(await ctx.remember.get("note", scope="user", default="(nothing)"))


@tool(name="purge", description="Forget every note.", scopes=["notes:admin"], rate_limit="1/minute")
class Purge(ToolContext):
    async def execute(self) -> str:
        return "purged"


@tool(name="export", description="Export the notes, as a task.", task=True)
async def export(ctx: ToolContext) -> str:
    return f"exported as {ctx.tool_name}, task {ctx.task_id is not None}"


@resource(uri="notes://today", name="today", description="Today's note.")
class Today(ResourceContext):
    async def read(self) -> str:
        return f"read {self.name} at {self.uri}"


@resource(uri="notes://by-day/{day}", name="by_day", description="A day's note.")
class ByDay(ResourceContext):
    async def read(self, day: str) -> str:
        return f"the note of {day}"


@prompt(name="summarise", description="Summarise the notes.")
class Summarise(PromptContext):
    async def render(self, tone: Annotated[str, Field(description="friendly or formal")] = "friendly") -> str:
        return f"Summarise the notes in a {tone} tone ({self.name})."

    async def complete_tone(self, value: str) -> list[str]:
        return [tone for tone in ("friendly", "formal") if tone.startswith(value)]


def notes_app(store: Mapping[str, Any] | None = None) -> type[Any]:
    plugin = RememberPlugin.init(**(store or {"type": "memory"}), secret=SECRET)

    @app(
        id="notes",
        tools=[Keep, read_back, Purge, export],
        resources=[Today, ByDay],
        prompts=[Summarise],
        plugins=[plugin],
    )
    class NotesApp:
        __qualname__ = "NotesApp"  # errors name the app, not this factory

    return NotesApp


def notes_server(store: Mapping[str, Any] | None = None, **options: Any) -> Server:
    """The notes server as it would run alone: its own keys, a plugin of its own around every tool."""
    return Server([notes_app(store)], auth=StaticKeys(KEYS), plugins=[Recording("notes-server")], **options)


@tool(name="ping", description="The host's own tool.")
class Ping(ToolContext):
    async def execute(self) -> str:
        return f"pong from {self.tool_name}"


@app(id="host", tools=[Ping])
class HostApp: ...


def host(*mounts: Any, auth: Any = None, **options: Any) -> Server:
    auth = auth or [StaticKeys(KEYS), JWTAuth(secret=JWT_SECRET, audience="mount-tests")]
    return Server([HostApp, *mounts], auth=auth, plugins=[Recording("host")], **options)


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    SEEN.clear()
    monkeypatch.delenv("REMEMBER_STORE", raising=False)
    monkeypatch.delenv("REMEMBER_SECRET", raising=False)


@pytest.fixture
def mcpkit_server() -> Server:
    return host(mount(notes_server(rate_limit="3/minute"), prefix="notes"))


async def test_mounted_tools_are_listed_and_called_under_the_prefix(call_as: CallAs) -> None:
    nour = call_as("nour")
    listed = [listed.name for listed in await nour.list_tools()]
    assert listed == ["ping", "notes_keep", "notes_read_back", "notes_purge", "notes_export"]
    assert await nour.call("ping") == "pong from ping"
    kept = await nour.call("notes_keep", {"text": "call Ada"})
    assert kept == {"kept": "call Ada", "before": None, "as": "keep", "app": "notes"}
    with pytest.raises(ToolCallError) as unknown:
        await nour.call("keep", {"text": "x"})
    assert unknown.value.code == "UNKNOWN_TOOL"


async def test_mounted_resources_keep_their_uris_and_prompts_take_the_prefix(call_as: CallAs) -> None:
    nour = call_as("nour")
    assert [(r.name, r.uri) for r in await nour.list_resources()] == [("notes_today", "notes://today")]
    templates = await nour.list_resource_templates()
    assert [(t.name, t.uri_template) for t in templates] == [("notes_by_day", "notes://by-day/{day}")]
    assert await nour.read("notes://today") == "read today at notes://today"  # its own name, as declared
    assert await nour.read("notes://by-day/monday") == "the note of monday"
    assert [p.name for p in await nour.list_prompts()] == ["notes_summarise"]
    rendered = await nour.get_prompt("notes_summarise", {"tone": "formal"})
    assert rendered.messages[0].content.text == "Summarise the notes in a formal tone (summarise)."  # type: ignore[union-attr]
    completion = await nour.complete(types.PromptReference(name="notes_summarise"), "tone", "fo")
    assert completion.values == ["formal"]


async def test_the_mounted_servers_plugins_wrap_its_tools_and_the_hosts_wrap_everything(call_as: CallAs) -> None:
    nour = call_as("nour")
    await nour.call("ping")
    await nour.call("notes_keep", {"text": "x"})
    assert SEEN == [("host", "ping"), ("host", "keep"), ("notes-server", "keep")]


async def test_a_mounted_tools_scopes_hold(call_as: CallAs) -> None:
    without = call_as.jwt("sam", {"scope": "notes:read"})
    with pytest.raises(HTTPRefusedError) as refused:
        await without.call("notes_purge")
    assert refused.value.status == 403
    assert "notes:admin" in refused.value.description
    assert await call_as.jwt("nour", {"scope": "notes:admin"}).call("notes_purge") == "purged"


async def test_a_mounted_tools_rate_limit_holds(call_as: CallAs) -> None:
    nour = call_as("nour")
    assert await nour.call("notes_purge") == "purged"
    with pytest.raises(ToolCallError) as limited:
        await nour.call("notes_purge")
    assert limited.value.code == "RATE_LIMITED"
    assert limited.value.message.startswith("Too many 'notes_purge' from this caller (at most 1/minute)")


async def test_the_mounted_servers_rate_limit_bounds_its_tools_together_and_not_the_hosts(call_as: CallAs) -> None:
    nour = call_as("nour")
    for text in ("a", "b", "c"):
        await nour.call("notes_keep", {"text": text})
    with pytest.raises(ToolCallError) as limited:
        await nour.call("notes_read_back")
    assert limited.value.code == "RATE_LIMITED"
    assert limited.value.message.startswith(
        "Too many calls to the tools mounted as 'notes' from this caller (at most 3/minute)"
    )
    assert await nour.call("ping") == "pong from ping"  # the host's own tools are not counted there
    assert await call_as("sam").call("notes_read_back") == "(nothing)"  # nor another caller's


async def test_a_mounted_task_tool_runs_as_a_task_under_its_prefix() -> None:
    served = host(mount(notes_server(), prefix="notes"), auth=StaticKeys({"alice": ALICE}))
    async with serving(served) as http:
        alice = Caller(http, ALICE)
        task_id = await alice.start("notes_export")
        done = await alice.until(task_id, "completed", "failed")
    assert done["result"]["content"][0]["text"] == "exported as export, task True"


async def test_a_mounted_app_keeps_its_data_where_it_kept_it_alone(tmp_path: Path) -> None:
    store = {"type": "sqlite", "path": tmp_path / "notes.db"}
    async with running(notes_server(store)) as alone:
        first = await alone("nour").call("keep", {"text": "kept alone"})
    async with running(host(mount(notes_server(store), prefix="notes"))) as mounted:
        second = await mounted("nour").call("notes_keep", {"text": "kept mounted"})
    async with running(notes_server(store)) as alone:
        third = await alone("nour").call("keep", {"text": "kept alone again"})
    assert first["before"] is None
    assert second["before"] == "kept alone"  # one tool scope, mounted or not: the mount moved nothing
    assert third["before"] == "kept mounted"


async def test_an_app_mounts_by_itself_and_mounts_nest() -> None:
    inner = Server([mount(notes_app(), prefix="b")], auth=StaticKeys(KEYS))
    served = host(mount(inner, prefix="a"), mount(HostApp, prefix="again"))
    assert sorted(served.tools) == sorted(
        ["ping", "again_ping", "a_b_keep", "a_b_read_back", "a_b_purge", "a_b_export"]
    )
    async with running(served) as call_as:
        assert await call_as("nour").call("again_ping") == "pong from ping"
        kept = await call_as("nour").call("a_b_keep", {"text": "x"})
        assert (kept["as"], kept["app"]) == ("keep", "notes")


async def test_mounted_tools_switch_on_and_off_by_their_prefixed_names() -> None:
    served = host(mount(notes_server(), prefix="notes"))
    await served.disable(tools=["notes_keep"])
    async with running(served) as call_as:
        assert "notes_keep" not in [listed.name for listed in await call_as("nour").list_tools()]
    assert "notes_keep" not in served.enabled("tools")


def test_a_tool_name_clash_names_both_sides() -> None:
    @tool(name="notes_keep", description="The host's own keep.")
    class HostKeep(ToolContext):
        async def execute(self) -> str:
            return ""

    @app(id="mine", tools=[HostKeep])
    class MineApp: ...

    with pytest.raises(ConfigurationError, match=r"^Two tools are named 'notes_keep': ") as refused:
        host(MineApp, mount(notes_server(), prefix="notes"))
    assert str(refused.value).endswith(
        "HostKeep in app 'mine' (test_a_tool_name_clash_names_both_sides.<locals>.MineApp) and Keep in app 'notes' "
        "(NotesApp) mounted as 'notes'. Tool names must be unique."
    )


def test_mounting_one_app_with_resources_twice_is_refused_saying_why() -> None:
    with pytest.raises(ConfigurationError, match="Two resources have the URI 'notes://today'") as refused:
        host(mount(notes_server(), prefix="work"), mount(notes_server(), prefix="home"))
    assert "app 'notes' (NotesApp) mounted as 'work' and Today in app 'notes' (NotesApp) mounted as 'home'" in str(
        refused.value
    )
    assert "A mount keeps the URIs its app declares" in str(refused.value)


def test_a_prompt_name_clash_names_both_sides() -> None:
    @prompt(name="notes_summarise", description="The host's.")
    class HostSummarise(PromptContext):
        async def render(self) -> str:
            return ""

    @app(id="prompts", prompts=[HostSummarise])
    class PromptsApp: ...

    with pytest.raises(ConfigurationError, match="Two prompts are named 'notes_summarise'") as refused:
        host(PromptsApp, mount(notes_server(), prefix="notes"))
    assert "mounted as 'notes'" in str(refused.value)


@pytest.mark.parametrize("prefix", ["", "notes_", "_notes", "no tes", "n" * 65, 7])
def test_a_bad_prefix_is_refused_when_the_host_is_built(prefix: Any) -> None:
    with pytest.raises(ConfigurationError, match="a prefix is 1-64 letters, digits"):
        host(mount(notes_server(), prefix=prefix))


def test_a_name_too_long_after_its_prefixes_is_refused_naming_it() -> None:
    inner = Server([mount(HostApp, prefix="y" * 64)])
    with pytest.raises(ConfigurationError) as refused:
        host(mount(inner, prefix="x" * 64))
    assert str(refused.value) == (
        f"tool class {__name__}.Ping: tool name '{'x' * 64}_{'y' * 64}_ping', after the prefix of the mounts it sits "
        "in, has 134 characters, more than 128: mount it under a shorter prefix."
    )


def test_a_mounted_servers_middleware_is_refused_rather_than_dropped() -> None:
    async def log(call: MethodCall, call_next: Any) -> Any:
        return await call_next(call)

    with pytest.raises(ConfigurationError, match=r"mount\(server 'mcpkit-server', prefix='notes'\): that server has "):
        host(mount(notes_server(middleware=[log]), prefix="notes"))


def test_mount_takes_an_app_or_a_server() -> None:
    with pytest.raises(TypeError, match=r"mount\(\) takes an @app class or a mcpkit.Server, not <class"):
        mount(Keep, prefix="keep")  # a tool, not an app
    assert repr(mount(HostApp, prefix="h")) == "mount(app 'host' (HostApp), prefix='h')"


async def test_a_mounted_resource_read_is_refused_as_the_host_refuses_it() -> None:
    served = host(mount(notes_server(), prefix="notes"))
    async with running(served) as call_as:
        with pytest.raises(MCPError) as missing:
            await call_as("nour").read("notes://nowhere")
    assert missing.value.error.code == -32602
