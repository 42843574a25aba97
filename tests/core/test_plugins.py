"""The plugin API: attributes, contributed tools, startup/shutdown, call hooks and their order, per-server copies."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from core._support import NOUR_KEY, body_of, call_modern, running, static_user_id, structured
from mcpkit import (
    ConfigurationError,
    ManualClock,
    Plugin,
    PluginSetup,
    Server,
    StaticKeys,
    ToolContext,
    ToolError,
    app,
    tool,
)
from mcpkit.testing import CallAs, ToolCallError

# -- a plugin that writes down what happens to it ---------------------------------------


class Recorder(Plugin):
    """Appends ``"<name>.<event>"`` to a shared list for every lifecycle event and hook."""

    def __init__(self, name: str, events: list[str]) -> None:
        self.name = name
        self.events = events

    async def startup(self) -> None:
        self.events.append(f"{self.name}.startup")

    async def shutdown(self) -> None:
        self.events.append(f"{self.name}.shutdown")

    async def before_call(self, ctx: ToolContext, arguments: Mapping[str, Any]) -> None:
        self.events.append(f"{self.name}.before")

    async def after_call(self, ctx: ToolContext, result: Any) -> Any:
        self.events.append(f"{self.name}.after")
        return result

    async def on_error(self, ctx: ToolContext, error: BaseException) -> None:
        self.events.append(f"{self.name}.on_error:{type(error).__name__}")


EVENTS: list[str] = []


@tool(name="work", description="Does the work.")
class Work(ToolContext):
    async def execute(self, fail: str = "") -> str:
        EVENTS.append("execute")
        if fail == "tool_error":
            raise ToolError("Cannot do that.", code="REFUSED")
        if fail == "crash":
            raise RuntimeError("boom")
        return "worked"


def recorder_server(*, server_plugins: Sequence[str], app_plugins: Sequence[str]) -> Server:
    @app(id="work", tools=[Work], plugins=[Recorder(name, EVENTS) for name in app_plugins])
    class WorkApp:
        pass

    return Server(
        [WorkApp],
        auth=StaticKeys({"nour": NOUR_KEY}),
        plugins=[Recorder(name, EVENTS) for name in server_plugins],
    )


@pytest.fixture(autouse=True)
def _clear_events() -> None:
    EVENTS.clear()


# -- lifecycle ------------------------------------------------------------------------------


async def test_plugins_start_in_order_and_stop_in_reverse_through_the_app_lifespan() -> None:
    events: list[str] = []

    @app(id="first", tools=[Work], plugins=[Recorder("a1", events), Recorder("a2", events)])
    class First:
        pass

    @tool(name="other", description="Another tool.")
    class Other(ToolContext):
        async def execute(self) -> str:
            return ""

    @app(id="second", tools=[Other], plugins=[Recorder("b1", events)])
    class Second:
        pass

    server = Server([First, Second], allow_anonymous=True, plugins=[Recorder("s1", events)])
    asgi = server.http_app()

    async with asgi.router.lifespan_context(asgi):
        assert events == ["s1.startup", "a1.startup", "a2.startup", "b1.startup"]
        events.clear()

    assert events == ["b1.shutdown", "a2.shutdown", "a1.shutdown", "s1.shutdown"]


async def test_a_plugin_that_fails_to_start_stops_the_ones_already_started() -> None:
    events: list[str] = []

    class NoStore(Plugin):
        async def startup(self) -> None:
            raise OSError("connection refused")

    @app(id="work", tools=[Work], plugins=[Recorder("a1", events), NoStore(), Recorder("a3", events)])
    class WorkApp:
        pass

    asgi = Server([WorkApp], allow_anonymous=True).http_app()

    with pytest.raises(RuntimeError, match="Plugin NoStore failed to start: connection refused"):
        async with asgi.router.lifespan_context(asgi):
            pass

    assert events == ["a1.startup", "a1.shutdown"]


# -- call hooks -------------------------------------------------------------------------------


async def test_hooks_run_server_plugins_first_then_app_plugins_and_unwind_in_reverse() -> None:
    server = recorder_server(server_plugins=["s1", "s2"], app_plugins=["a1", "a2"])
    async with running(server.http_app()) as http:
        EVENTS.clear()
        response = await call_modern(http, "work", token=NOUR_KEY)
        during_call = list(EVENTS)

    assert response.status_code == 200
    assert during_call == [
        "s1.before",
        "s2.before",
        "a1.before",
        "a2.before",
        "execute",
        "a2.after",
        "a1.after",
        "s2.after",
        "s1.after",
    ]


@pytest.mark.parametrize(("fail", "error"), [("tool_error", "ToolError"), ("crash", "RuntimeError")])
async def test_on_error_runs_innermost_first_and_after_call_does_not_run(fail: str, error: str) -> None:
    server = recorder_server(server_plugins=["s1"], app_plugins=["a1", "a2"])
    async with running(server.http_app()) as http:
        EVENTS.clear()
        await call_modern(http, "work", {"fail": fail}, token=NOUR_KEY)
        during_call = list(EVENTS)

    assert during_call == [
        "s1.before",
        "a1.before",
        "a2.before",
        "execute",
        f"a2.on_error:{error}",
        f"a1.on_error:{error}",
        f"s1.on_error:{error}",
    ]


class Gatekeeper(Plugin):
    """Refuses every call to a tool named in ``closed``."""

    def __init__(self, closed: set[str]) -> None:
        self.closed = closed

    async def before_call(self, ctx: ToolContext, arguments: Mapping[str, Any]) -> None:
        if ctx.tool_name in self.closed:
            raise ToolError(f"{ctx.tool_name} is closed for maintenance.", code="MAINTENANCE")


@pytest.fixture
def mcpkit_server() -> Server:
    @app(id="work", tools=[Work], plugins=[Gatekeeper({"work"}), Recorder("inner", EVENTS)])
    class WorkApp:
        pass

    return Server([WorkApp], auth=StaticKeys({"nour": NOUR_KEY}), plugins=[Recorder("outer", EVENTS)])


async def test_before_call_raising_tool_error_refuses_the_call(call_as: CallAs) -> None:
    EVENTS.clear()

    with pytest.raises(ToolCallError) as raised:
        await call_as("nour").call("work")

    assert raised.value.code == "MAINTENANCE"
    assert raised.value.message == "work is closed for maintenance."
    assert "execute" not in EVENTS
    assert "outer.on_error:ToolError" in EVENTS


async def test_a_plugin_whose_before_call_never_ran_is_not_told_about_the_error(call_as: CallAs) -> None:
    EVENTS.clear()

    await call_as("nour").call_tool("work")

    assert "inner.before" not in EVENTS
    assert "inner.on_error:ToolError" not in EVENTS


async def test_before_call_sees_the_wire_arguments_and_the_caller() -> None:
    seen: list[tuple[str, str, str | None, dict[str, Any]]] = []

    class Spy(Plugin):
        async def before_call(self, ctx: ToolContext, arguments: Mapping[str, Any]) -> None:
            seen.append((ctx.tool_name, ctx.app_id, ctx.caller.user_id, dict(arguments)))

    @app(id="work", tools=[Work], plugins=[Spy()])
    class WorkApp:
        pass

    async with running(Server([WorkApp], auth=StaticKeys({"nour": NOUR_KEY})).http_app()) as http:
        await call_modern(http, "work", {"fail": ""}, token=NOUR_KEY)

    assert seen == [("work", "work", static_user_id(NOUR_KEY), {"fail": ""})]


async def test_after_call_can_replace_the_result_and_outer_plugins_see_the_replacement() -> None:
    class Shout(Plugin):
        async def after_call(self, ctx: ToolContext, result: Any) -> Any:
            return str(result).upper()

    class Sign(Plugin):
        async def after_call(self, ctx: ToolContext, result: Any) -> Any:
            return f"{result} -- the help desk"

    @app(id="work", tools=[Work], plugins=[Shout()])
    class WorkApp:
        pass

    server = Server([WorkApp], auth=StaticKeys({"nour": NOUR_KEY}), plugins=[Sign()])
    async with running(server.http_app()) as http:
        response = await call_modern(http, "work", token=NOUR_KEY)

    result = body_of(response)["result"]
    assert result["content"][0]["text"] == "WORKED -- the help desk"


async def test_on_error_cannot_swallow_the_error_and_its_own_failure_is_only_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Clumsy(Plugin):
        async def on_error(self, ctx: ToolContext, error: BaseException) -> None:
            raise ValueError("clumsy on_error")

    @app(id="work", tools=[Work], plugins=[Clumsy()])
    class WorkApp:
        pass

    async with running(Server([WorkApp], auth=StaticKeys({"nour": NOUR_KEY})).http_app()) as http:
        response = await call_modern(http, "work", {"fail": "tool_error"}, token=NOUR_KEY)

    result = body_of(response)["result"]
    assert result["isError"] is True
    assert result["_meta"]["mcpkit/error"]["code"] == "REFUSED"
    assert "clumsy" not in response.text
    assert any("Clumsy failed in on_error" in r.getMessage() for r in caplog.records)


async def test_a_crash_in_a_hook_is_a_masked_internal_error() -> None:
    class Broken(Plugin):
        async def before_call(self, ctx: ToolContext, arguments: Mapping[str, Any]) -> None:
            raise RuntimeError("plugin internals: redis://secret@cache")

    @app(id="work", tools=[Work], plugins=[Broken()])
    class WorkApp:
        pass

    async with running(Server([WorkApp], auth=StaticKeys({"nour": NOUR_KEY})).http_app()) as http:
        response = await call_modern(http, "work", token=NOUR_KEY)

    assert "secret" not in response.text
    assert '"code":"INTERNAL_ERROR"' in response.text.replace(" ", "")


# -- attributes -----------------------------------------------------------------------------------


class Stamps(Plugin):
    """Adds ``self.stamp``: a new object per call, counting how often it was built."""

    def __init__(self, built: list[str]) -> None:
        self.built = built

    def attributes(self) -> Mapping[str, Callable[[ToolContext], object]]:
        return {"stamp": self._stamp}

    def _stamp(self, ctx: ToolContext) -> str:
        self.built.append(ctx.tool_name)
        return f"{ctx.tool_name}#{len(self.built)}"


def stamp_server(built: list[str]) -> Server:
    @tool(name="uses_stamp", description="Reads self.stamp twice.")
    class UsesStamp(ToolContext):
        async def execute(self) -> dict[str, str]:
            return {"first": self.stamp, "second": self.stamp}

    @tool(name="ignores_stamp", description="Never touches self.stamp.")
    class IgnoresStamp(ToolContext):
        async def execute(self) -> str:
            return "fine"

    @tool(name="wants_remember", description="Touches an attribute nobody provides.")
    class WantsRemember(ToolContext):
        async def execute(self) -> str:
            try:
                self.remember  # noqa: B018
            except AttributeError as exc:
                return str(exc)
            return "no error"

    @app(id="stamps", tools=[UsesStamp, IgnoresStamp, WantsRemember], plugins=[Stamps(built)])
    class StampApp:
        pass

    return Server([StampApp], auth=StaticKeys({"nour": NOUR_KEY}))


async def test_a_plugin_attribute_is_built_on_first_use_once_per_call() -> None:
    built: list[str] = []
    async with running(stamp_server(built).http_app()) as http:
        first = structured(await call_modern(http, "uses_stamp", token=NOUR_KEY))
        second = structured(await call_modern(http, "uses_stamp", token=NOUR_KEY))

    assert first == {"first": "uses_stamp#1", "second": "uses_stamp#1"}
    assert second == {"first": "uses_stamp#2", "second": "uses_stamp#2"}
    assert built == ["uses_stamp", "uses_stamp"]


async def test_a_plugin_attribute_factory_is_not_called_when_the_tool_does_not_touch_it() -> None:
    built: list[str] = []
    async with running(stamp_server(built).http_app()) as http:
        response = await call_modern(http, "ignores_stamp", token=NOUR_KEY)

    assert response.status_code == 200
    assert built == []


async def test_a_missing_attribute_is_an_attribute_error_naming_the_plugin_attributes() -> None:
    async with running(stamp_server([]).http_app()) as http:
        response = await call_modern(http, "wants_remember", token=NOUR_KEY)

    message = body_of(response)["result"]["content"][0]["text"]
    assert "WantsRemember has no attribute 'remember'" in message
    assert "Its plugins: Stamps adds 'stamp'" in message
    assert "plugins=[...]" in message


async def test_a_missing_attribute_error_names_the_plugins_of_the_tool() -> None:
    async with running(stamp_server([]).http_app()) as http:
        response = await call_modern(http, "wants_remember", token=NOUR_KEY)

    assert "Stamps" in body_of(response)["result"]["content"][0]["text"]


def test_a_missing_attribute_without_plugins_says_no_plugin_adds_any() -> None:
    context = ToolContext(None, ManualClock(0), "t", "a", {})  # type: ignore[arg-type]

    with pytest.raises(AttributeError, match="No plugin adds attributes to it"):
        context.remember  # noqa: B018


def test_two_plugins_providing_the_same_attribute_are_refused_at_construction() -> None:
    @app(id="stamps", tools=[Work], plugins=[Stamps([]), Stamps([])])
    class Twice:
        pass

    with pytest.raises(ConfigurationError, match="stamp"):
        Server([Twice])


def test_a_plugin_attribute_that_shadows_a_tool_context_attribute_is_refused() -> None:
    class Impostor(Plugin):
        def attributes(self) -> Mapping[str, Callable[[ToolContext], object]]:
            return {"caller": lambda ctx: "someone else"}

    @app(id="work", tools=[Work], plugins=[Impostor()])
    class WorkApp:
        pass

    with pytest.raises(ConfigurationError, match="caller"):
        Server([WorkApp])


def test_a_misspelt_hook_is_refused_when_the_server_is_built_naming_the_class_and_the_hook_meant() -> None:
    class Auditor(Plugin):
        async def before_cal(self, ctx: ToolContext, arguments: Mapping[str, Any]) -> None:
            raise ToolError("never reached: the hook is misspelt")

    with pytest.raises(ConfigurationError) as refused:
        Server([app(id="work", tools=[Work], plugins=[Auditor()])(type("WorkApp", (), {}))])
    assert "Plugin Auditor in app 'work'" in str(refused.value)
    assert "before_cal(), which is not a Plugin hook" in str(refused.value)
    assert "did you mean before_call()?" in str(refused.value)


def test_a_server_plugin_with_a_hook_like_name_of_no_hook_is_refused_and_a_private_helper_is_not() -> None:
    class Listener(Plugin):
        async def on_call(self, ctx: ToolContext) -> None: ...

    class Helped(Plugin):
        def _on_call(self) -> None: ...

        def remember_for(self, ctx: ToolContext) -> object:  # a public helper named like no hook
            return ctx.caller

    work_app = app(id="work", tools=[Work])(type("WorkApp", (), {}))
    with pytest.raises(ConfigurationError, match=r"Listener in Server\(plugins=...\) defines on_call\(\)"):
        Server([work_app], plugins=[Listener()])
    assert "work" in Server([work_app], plugins=[Helped()]).tools


# -- contributed tools ---------------------------------------------------------------------------------


class TicketCounter(Plugin):
    """Contributes ``count_tickets`` and the ``tickets`` attribute it reads."""

    def attributes(self) -> Mapping[str, Callable[[ToolContext], object]]:
        return {"tickets": lambda ctx: ["T-1", "T-2", "T-3"]}

    def tools(self) -> Sequence[type[ToolContext]]:
        return [CountTickets]


@tool(name="count_tickets", description="Count the open tickets.")
class CountTickets(ToolContext):
    async def execute(self) -> dict[str, int]:
        return {"open": len(self.tickets)}


async def test_a_plugin_contributes_tools_that_are_listed_and_callable_and_see_its_attributes() -> None:
    @app(id="work", tools=[Work], plugins=[TicketCounter()])
    class WorkApp:
        pass

    server = Server([WorkApp], auth=StaticKeys({"nour": NOUR_KEY}))
    assert sorted(server.tools) == ["count_tickets", "work"]
    async with running(server.http_app()) as http:
        counted = structured(await call_modern(http, "count_tickets", token=NOUR_KEY))

    assert counted == {"open": 3}


async def test_a_server_plugin_contributes_tools_to_the_server() -> None:
    @app(id="work", tools=[Work])
    class WorkApp:
        pass

    server = Server([WorkApp], auth=StaticKeys({"nour": NOUR_KEY}), plugins=[TicketCounter()])
    assert sorted(server.tools) == ["count_tickets", "work"]
    async with running(server.http_app()) as http:
        counted = structured(await call_modern(http, "count_tickets", token=NOUR_KEY))

    assert counted == {"open": 3}


def test_a_contributed_tool_clashing_with_an_app_tool_is_refused() -> None:
    @app(id="work", tools=[CountTickets], plugins=[TicketCounter()])
    class WorkApp:
        pass

    with pytest.raises(ConfigurationError, match="Two tools are named 'count_tickets'"):
        Server([WorkApp])


# -- what a plugin learns, and per-server copies ---------------------------------------------------------


def test_setup_tells_the_plugin_its_server_app_tools_and_clock() -> None:
    seen: list[PluginSetup] = []

    class Curious(Plugin):
        def setup(self, setup: PluginSetup) -> None:
            seen.append(setup)

    @app(id="work", name="Work desk", tools=[Work], plugins=[Curious(), TicketCounter()])
    class WorkApp:
        pass

    clock = ManualClock(1000)
    server = Server([WorkApp], name="desk-server", allow_anonymous=True, clock=clock)

    (setup,) = seen
    assert (setup.server_name, setup.app_id, setup.app_name) == ("desk-server", "work", "Work desk")
    assert setup.tool_names == ("work", "count_tickets")
    assert setup.clock() is clock
    server.clock = ManualClock(5)
    assert setup.clock() is server.clock


def test_a_server_plugin_is_set_up_with_every_tool_of_the_server() -> None:
    seen: list[PluginSetup] = []

    class Curious(Plugin):
        def setup(self, setup: PluginSetup) -> None:
            seen.append(setup)

    @app(id="work", tools=[Work], plugins=[TicketCounter()])
    class WorkApp:
        pass

    Server([WorkApp], name="desk-server", allow_anonymous=True, plugins=[Curious()])

    (setup,) = seen
    assert (setup.server_name, setup.app_id) == ("desk-server", "")
    assert set(setup.tool_names) == {"work", "count_tickets"}


class PerServer(Plugin):
    """Keeps state made in setup() and startup(); the ``state`` attribute shows it to tools."""

    def setup(self, setup: PluginSetup) -> None:
        self.server_name = setup.server_name

    async def startup(self) -> None:
        self.started = uuid.uuid4().hex

    def attributes(self) -> Mapping[str, Callable[[ToolContext], object]]:
        return {"state": lambda ctx: {"server": self.server_name, "started": self.started, "plugin": id(self)}}


@tool(name="plugin_state", description="Show the plugin's state.")
class PluginState(ToolContext):
    async def execute(self) -> dict[str, Any]:
        return dict(self.state)


async def test_each_server_gets_its_own_copy_of_a_plugin() -> None:
    template = PerServer()

    @app(id="shared", tools=[PluginState], plugins=[template])
    class Shared:
        pass

    one = Server([Shared], name="one", auth=StaticKeys({"nour": NOUR_KEY}))
    two = Server([Shared], name="two", auth=StaticKeys({"nour": NOUR_KEY}))
    async with running(one.http_app()) as http_one, running(two.http_app()) as http_two:
        state_one = structured(await call_modern(http_one, "plugin_state", token=NOUR_KEY))
        state_two = structured(await call_modern(http_two, "plugin_state", token=NOUR_KEY))

    assert (state_one["server"], state_two["server"]) == ("one", "two")
    assert state_one["started"] != state_two["started"]
    assert state_one["plugin"] != state_two["plugin"]
    assert id(template) not in (state_one["plugin"], state_two["plugin"])
    assert not hasattr(template, "server_name")
    assert not hasattr(template, "started")


class _Sharing(Plugin):
    """Records the per-server ``shared`` dict it was set up with."""

    def setup(self, setup: PluginSetup) -> None:
        self.pool = setup.shared.setdefault("pool", object())


def test_plugins_of_one_server_share_setup_shared_and_another_server_gets_its_own() -> None:
    @tool(name="shared_a", description="A.")
    class ToolA(ToolContext):
        async def execute(self) -> str:
            return "a"

    @tool(name="shared_b", description="B.")
    class ToolB(ToolContext):
        async def execute(self) -> str:
            return "b"

    @app(id="first", tools=[ToolA], plugins=[_Sharing()])
    class First: ...

    @app(id="second", tools=[ToolB], plugins=[_Sharing()])
    class Second: ...

    one = Server([First, Second], allow_anonymous=True)
    two = Server([First, Second], allow_anonymous=True)
    pools_one = {id(p.pool) for p in one._plugins if isinstance(p, _Sharing)}
    pools_two = {id(p.pool) for p in two._plugins if isinstance(p, _Sharing)}
    assert len(pools_one) == 1
    assert len(pools_two) == 1
    assert pools_one != pools_two
