"""Server checks everything when it is built; each mistake fails there, naming the class at fault."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import Field

from core._support import NOUR_KEY
from mcpkit import ConfigurationError, Plugin, PluginSetup, Server, StaticKeys, ToolContext, ToolError, app, tool


def one_app(*tools: type[Any], plugins: list[Plugin] | None = None, id: str = "a") -> type[Any]:
    @app(id=id, tools=list(tools), plugins=plugins or [])
    class OneApp:
        pass

    return OneApp


@tool(name="ping", description="Answer pong.")
class Ping(ToolContext):
    async def execute(self) -> str:
        return "pong"


def test_a_valid_server_lists_its_tools() -> None:
    server = Server([one_app(Ping)])

    assert list(server.tools) == ["ping"]
    assert server.tools["ping"].wire.description == "Answer pong."


def test_duplicate_tool_names_across_apps_are_refused_naming_both_classes() -> None:
    @tool(name="ping", description="Another ping.")
    class OtherPing(ToolContext):
        async def execute(self) -> str:
            return "pong too"

    with pytest.raises(ConfigurationError, match="Two tools are named 'ping'") as raised:
        Server([one_app(Ping, id="first"), one_app(OtherPing, id="second")])

    message = str(raised.value)
    assert "Ping in app 'first'" in message
    assert "OtherPing in app 'second'" in message


def test_duplicate_app_ids_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="Two apps have the id 'same'"):
        Server([one_app(Ping, id="same"), one_app(id="same")])


def test_a_tool_without_description_or_docstring_is_refused_naming_the_class() -> None:
    @tool(name="silent")
    class Silent(ToolContext):
        async def execute(self) -> str:
            return ""

    with pytest.raises(ConfigurationError, match="Silent") as raised:
        Server([one_app(Silent)])

    assert "has no description" in str(raised.value)


def test_the_docstring_is_the_description_when_none_is_given() -> None:
    @tool(name="documented")
    class Documented(ToolContext):
        """Say hello to the caller."""

        async def execute(self) -> str:
            return "hello"

    server = Server([one_app(Documented)])

    assert server.tools["documented"].wire.description == "Say hello to the caller."


@pytest.mark.parametrize("bad_name", ["has space", "", "x" * 129, "slash/name", "émoji"])
def test_an_invalid_tool_name_is_refused_naming_the_class(bad_name: str) -> None:
    @tool(name=bad_name, description="Badly named.")
    class BadlyNamed(ToolContext):
        async def execute(self) -> str:
            return ""

    with pytest.raises(ConfigurationError, match="BadlyNamed") as raised:
        Server([one_app(BadlyNamed)])

    assert "is not valid" in str(raised.value)


def test_execute_with_star_args_is_refused() -> None:
    @tool(name="star", description="Takes anything.")
    class Star(ToolContext):
        async def execute(self, *things: str) -> str:
            return ""

    with pytest.raises(ConfigurationError, match=r"Star: execute\(\) cannot take \*things"):
        Server([one_app(Star)])


def test_execute_with_star_star_kwargs_is_refused() -> None:
    @tool(name="kw", description="Takes anything.")
    class Kw(ToolContext):
        async def execute(self, **options: str) -> str:
            return ""

    with pytest.raises(ConfigurationError, match=r"Kw: execute\(\) cannot take \*options"):
        Server([one_app(Kw)])


def test_a_parameter_without_annotation_is_refused() -> None:
    @tool(name="loose", description="Untyped input.")
    class Loose(ToolContext):
        async def execute(self, ticket_id) -> str:  # type: ignore[no-untyped-def]
            return ""

    with pytest.raises(ConfigurationError, match="Loose") as raised:
        Server([one_app(Loose)])

    assert "'ticket_id' needs a type annotation" in str(raised.value)


def test_a_parameter_starting_with_underscore_is_refused() -> None:
    @tool(name="private", description="Private input.")
    class Private(ToolContext):
        async def execute(self, _secret: str) -> str:
            return ""

    with pytest.raises(ConfigurationError, match="Private") as raised:
        Server([one_app(Private)])

    assert "'_secret' starts with '_'" in str(raised.value)


def test_a_positional_only_parameter_is_refused() -> None:
    @tool(name="positional", description="Positional input.")
    class Positional(ToolContext):
        async def execute(self, ticket: str, /) -> str:
            return ""

    with pytest.raises(ConfigurationError, match=r"Positional.*positional-only"):
        Server([one_app(Positional)])


def test_a_parameter_named_model_config_is_refused_with_the_alias_advice() -> None:
    @tool(name="configure", description="Store a model configuration.")
    class Configure(ToolContext):
        async def execute(self, model_config: str) -> str:
            return model_config

    with pytest.raises(ConfigurationError, match=r"Configure.*'model_config' is a name pydantic reserves.*alias"):
        Server([one_app(Configure)])


def test_a_parameter_type_without_a_schema_is_refused() -> None:
    class Opaque:
        pass

    @tool(name="opaque", description="Takes an object JSON cannot carry.")
    class TakesOpaque(ToolContext):
        async def execute(self, thing: Opaque) -> str:
            return ""

    with pytest.raises(ConfigurationError, match="TakesOpaque"):
        Server([one_app(TakesOpaque)])


def test_an_annotation_that_cannot_be_resolved_is_refused() -> None:
    @tool(name="dangling", description="Refers to a type that does not exist.")
    class Dangling(ToolContext):
        async def execute(self, thing: NoSuchType) -> str:  # type: ignore[name-defined]  # noqa: F821
            return ""

    with pytest.raises(ConfigurationError, match=r"Dangling.*cannot resolve the annotations"):
        Server([one_app(Dangling)])


def test_a_tool_without_execute_is_refused() -> None:
    @tool(name="idle", description="Does nothing.")
    class Idle(ToolContext):
        pass

    with pytest.raises(ConfigurationError, match=r"Idle.*has no execute\(\) method"):
        Server([one_app(Idle)])


def test_a_tool_that_is_not_a_tool_context_subclass_is_refused() -> None:
    @tool(name="plain", description="Not a ToolContext.")
    class Plain:
        async def execute(self) -> str:
            return ""

    with pytest.raises(ConfigurationError, match=r"Plain must subclass mcpkit.ToolContext"):
        Server([one_app(Plain)])


def test_an_undecorated_tool_class_is_refused() -> None:
    class Forgotten(ToolContext):
        async def execute(self) -> str:
            return ""

    with pytest.raises(ConfigurationError, match=r"Forgotten.*is not a tool: decorate it with @tool"):
        Server([one_app(Forgotten)])


def test_a_subclass_of_a_tool_is_not_a_tool_until_decorated_itself() -> None:
    class LoudPing(Ping):
        async def execute(self) -> str:
            return "PONG"

    with pytest.raises(ConfigurationError, match=r"LoudPing.*is not a tool"):
        Server([one_app(LoudPing)])


def test_an_undecorated_app_class_is_refused() -> None:
    class NotAnApp:
        pass

    with pytest.raises(ConfigurationError, match=r"NotAnApp.*is not an app: decorate the class with @app"):
        Server([NotAnApp])


def test_a_server_without_apps_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="at least one @app"):
        Server([])


def test_a_plugin_class_instead_of_an_instance_is_refused() -> None:
    class Audit(Plugin):
        pass

    with pytest.raises(ConfigurationError, match=r"is not a mcpkit.Plugin instance"):
        Server([one_app(Ping, plugins=[Audit])])  # type: ignore[list-item]


def test_a_plugin_setup_error_is_refused_naming_the_plugin_and_the_app() -> None:
    class NeedsATable(Plugin):
        def setup(self, setup: PluginSetup) -> None:
            raise ValueError("table 'audit' does not exist")

    with pytest.raises(ConfigurationError) as raised:
        Server([one_app(Ping, plugins=[NeedsATable()], id="desk")])

    message = str(raised.value)
    assert "Plugin NeedsATable in app 'desk'" in message
    assert "table 'audit' does not exist" in message


def test_a_server_plugin_setup_error_names_the_plugin() -> None:
    class Picky(Plugin):
        def setup(self, setup: PluginSetup) -> None:
            raise ConfigurationError("needs a tool named 'audit_tail'")

    with pytest.raises(ConfigurationError, match=r"Plugin Picky in Server\(plugins=...\): needs a tool"):
        Server([one_app(Ping)], plugins=[Picky()])


def test_a_tool_contributed_by_a_plugin_is_validated_like_any_other() -> None:
    @tool(name="bad name", description="Contributed.")
    class Contributed(ToolContext):
        async def execute(self) -> str:
            return ""

    class Contributes(Plugin):
        def tools(self) -> list[type[ToolContext]]:
            return [Contributed]

    with pytest.raises(ConfigurationError, match="Contributed"):
        Server([one_app(Ping, plugins=[Contributes()])])


def test_auth_that_is_not_an_authenticator_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="is not an authenticator"):
        Server([one_app(Ping)], auth={"nour": NOUR_KEY})  # type: ignore[arg-type]


def test_http_app_without_auth_and_without_anonymous_access_is_refused() -> None:
    server = Server([one_app(Ping)])

    with pytest.raises(ConfigurationError, match="has no auth and allow_anonymous=False"):
        server.http_app()


def test_http_app_is_built_with_auth_or_with_anonymous_access() -> None:
    Server([one_app(Ping)], auth=StaticKeys({"nour": NOUR_KEY})).http_app()
    Server([one_app(Ping)], allow_anonymous=True).http_app()


def test_run_over_http_refuses_a_stdio_user() -> None:
    server = Server([one_app(Ping)], allow_anonymous=True)

    with pytest.raises(ConfigurationError, match="user= signs in the stdio caller"):
        server.run("http", user="nour")


def test_run_refuses_an_unknown_transport() -> None:
    server = Server([one_app(Ping)], allow_anonymous=True)

    with pytest.raises(ValueError, match="transport must be 'http' or 'stdio'"):
        server.run("sse")  # type: ignore[arg-type]


async def test_serve_stdio_refuses_an_invalid_local_user() -> None:
    server = Server([one_app(Ping)])

    with pytest.raises(ConfigurationError, match="stdio user 'nour:admin' is not valid"):
        await server.serve_stdio(user="nour:admin")


def test_a_tool_error_code_must_be_upper_snake_case() -> None:
    with pytest.raises(ValueError, match="UPPER_SNAKE_CASE"):
        ToolError("nope", code="not found")


def test_decorators_only_attach_options_and_check_nothing() -> None:
    @tool(name="not a valid name")
    class Inert(ToolContext):
        async def execute(self, _x) -> None:  # type: ignore[no-untyped-def]
            return None

    assert Inert.__mcpkit_tool__.name == "not a valid name"  # type: ignore[attr-defined]


def test_field_constraints_and_aliases_reach_the_input_schema() -> None:
    @tool(name="note", description="Add a note to a ticket.")
    class Note(ToolContext):
        async def execute(
            self,
            ticket_id: Annotated[str, Field(alias="ticketId")],
            note: Annotated[str, Field(max_length=80)],
            urgent: bool = False,
        ) -> str:
            return ""

    schema = Server([one_app(Note)]).tools["note"].input_schema

    assert set(schema["properties"]) == {"ticketId", "note", "urgent"}
    assert schema["required"] == ["ticketId", "note"]
    assert schema["properties"]["note"]["maxLength"] == 80
    assert schema["properties"]["urgent"]["default"] is False
    assert schema["additionalProperties"] is False


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"turn_timeout": float("inf")}, "turn_timeout is a positive number of seconds, not inf."),
        ({"question_timeout": True}, "question_timeout is a positive number of seconds, not True."),
        ({"list_permitted_tools_only": 1}, "list_permitted_tools_only is True or False, not 1."),
    ],
)
def test_a_number_or_flag_option_of_the_wrong_kind_is_refused_naming_it_what_was_given_and_what_to_give(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigurationError) as refused:
        Server([one_app(Ping)], **options)
    assert str(refused.value).startswith(message)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_body_bytes": True}, "max_body_bytes is a whole number of bytes, at least 1,024; not True."),
        ({"calls_per_caller": 0}, "calls_per_caller is a whole number of requests, at least 1; not 0."),
        ({"resumable_streams": "yes"}, "resumable_streams is True, False or None, not 'yes'."),
    ],
)
def test_an_http_option_of_the_wrong_kind_is_refused_when_the_app_is_built(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigurationError) as refused:
        Server([one_app(Ping)], allow_anonymous=True).http_app(**options)
    assert str(refused.value) == message
