"""HELPDESK_KEYS, the demo keys, what `python -m mcpkit_helpdesk` says on start, and `mcpkit_helpdesk.server`."""

from __future__ import annotations

import pytest

import mcpkit_helpdesk
from mcpkit import ConfigurationError, Server, StaticKeys
from mcpkit._cli import load_server
from mcpkit_helpdesk import DEMO_KEYS, AgentKeys, client_snippet, connect_url, create_server, load_keys, parse_keys
from mcpkit_helpdesk.__main__ import main
from mcpkit_remember import StoreConfig

FORM = "nour=KEY,sam=KEY"


def labels(server: Server) -> tuple[str, ...]:
    (auth,) = server.authenticators
    assert isinstance(auth, StaticKeys)
    return auth.labels


def test_helpdesk_keys_are_label_equals_key_pairs() -> None:
    assert parse_keys("nour=n0ur-s3cret-1,sam=s4m-s3cret-22") == {"nour": "n0ur-s3cret-1", "sam": "s4m-s3cret-22"}


def test_helpdesk_keys_allow_spaces_around_entries_and_equals_signs_in_keys() -> None:
    assert parse_keys(" nour = n0ur-s3cret== , sam=s4m-s3cret-22 ") == {"nour": "n0ur-s3cret==", "sam": "s4m-s3cret-22"}


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("n0ur-s3cret-1", "entry 1 has no '='"),
        ("nour=n0ur-s3cret-1,", "entry 2 is empty"),
        ("nour=n0ur-s3cret-1;sam=s4m-s3cret-22", "the key for 'nour' cannot be sent as a bearer token"),
        ("nour=n0ur s3cret,sam=s4m-s3cret-22", "the key for 'nour' cannot be sent as a bearer token"),
        ("nour;=n0ur-s3cret-1", "has the label 'nour;'"),
        ("=n0ur-s3cret-1", "has the label ''"),
        ("nour=", "'nour' has an empty key"),
        ("nour=n0ur-s3cret-1,nour=n0ur-s3cret-2", "names 'nour' twice"),
    ],
)
def test_malformed_helpdesk_keys_name_the_variable_and_the_form(value: str, problem: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        parse_keys(value)
    message = str(refused.value)
    assert message.startswith("HELPDESK_KEYS")
    assert problem in message
    assert FORM in message
    assert "s3cret" not in message  # a key is never repeated in an error


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("nour=s3cr", "the key for 'nour' is 4 characters"),
        ("nour=sh4red-s3cret,sam=sh4red-s3cret", "have the same key"),
    ],
)
def test_unusable_helpdesk_keys_are_refused_before_serving(value: str, problem: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        parse_keys(value)
    assert str(refused.value).startswith("HELPDESK_KEYS: ")
    assert problem in str(refused.value)
    assert "s3cr" not in str(refused.value)


@pytest.mark.parametrize("environ", [{}, {"HELPDESK_KEYS": ""}, {"HELPDESK_KEYS": "  "}])
def test_without_helpdesk_keys_the_demo_keys_are_used(environ: dict[str, str]) -> None:
    assert load_keys(environ) == AgentKeys(DEMO_KEYS, demo=True)
    assert dict(DEMO_KEYS) == {"nour": "nour-demo-key", "sam": "sam-demo-key"}


def test_with_helpdesk_keys_those_keys_are_used() -> None:
    found = load_keys({"HELPDESK_KEYS": "ana=ana-s3cret-1"})
    assert found == AgentKeys({"ana": "ana-s3cret-1"}, demo=False)


def test_create_server_reads_helpdesk_keys_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELPDESK_KEYS", "ana=ana-s3cret-1,ben=ben-s3cret-2")
    assert labels(create_server()) == ("ana", "ben")
    monkeypatch.delenv("HELPDESK_KEYS")
    assert labels(create_server()) == ("nour", "sam")
    monkeypatch.setenv("HELPDESK_KEYS", "ana")
    with pytest.raises(ConfigurationError, match="HELPDESK_KEYS is malformed"):
        create_server()


def test_module_level_server_is_built_on_first_use_quietly(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HELPDESK_KEYS", "ana=ana-s3cret-1")
    monkeypatch.delenv("REMEMBER_STORE", raising=False)
    vars(mcpkit_helpdesk).pop("server", None)
    try:
        server = load_server("mcpkit_helpdesk:server")  # what `mcpkit run mcpkit_helpdesk:server` does
        assert isinstance(server, Server)
        assert labels(server) == ("ana",)
        assert mcpkit_helpdesk.server is server
    finally:
        vars(mcpkit_helpdesk).pop("server", None)
    assert capsys.readouterr() == ("", "")


def test_python_m_helpdesk_refuses_malformed_helpdesk_keys(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HELPDESK_KEYS", "nour:n0ur-s3cret-1")
    assert main(["--port", "8123"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "HELPDESK_KEYS is malformed" in err
    assert FORM in err


def test_python_m_helpdesk_refuses_an_unknown_store(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--store", "mongodb://db"]) == 2
    assert "Unknown store 'mongodb://db'" in capsys.readouterr().err


def test_startup_message_with_the_demo_keys_says_so_and_how_to_connect() -> None:
    message = mcpkit_helpdesk.startup_message("127.0.0.1", 8000, StoreConfig("memory"), AgentKeys(DEMO_KEYS, demo=True))
    assert "http://127.0.0.1:8000/mcp" in message
    assert "HELPDESK_KEYS is not set, so the demo keys are in use" in message
    assert "nour-demo-key" in message
    assert "sam-demo-key" in message
    assert (
        "npx -y @modelcontextprotocol/inspector@2.12.0 --cli http://127.0.0.1:8000/mcp --transport http "
        '--header "Authorization: Bearer nour-demo-key" --method tools/list'
    ) in message
    assert "needs Node >= 22.19" in message
    assert "Streamable HTTP" in message
    assert "Authorization: Bearer nour-demo-key" in message
    for line in client_snippet("http://127.0.0.1:8000/mcp", "nour-demo-key").splitlines():
        assert line in message


def test_startup_message_with_real_keys_does_not_print_them() -> None:
    keys = AgentKeys({"ana": "ana-s3cret-1"}, demo=False)
    message = mcpkit_helpdesk.startup_message("127.0.0.1", 8000, StoreConfig("sqlite", path="hd.db"), keys)
    assert "s3cret" not in message
    assert "Keys: from HELPDESK_KEYS, for ana." in message
    assert "SQLite at hd.db" in message


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("127.0.0.1", "http://127.0.0.1:8000/mcp"),
        ("0.0.0.0", "http://127.0.0.1:8000/mcp"),
        ("::1", "http://[::1]:8000/mcp"),
        ("::", "http://[::1]:8000/mcp"),
        ("helpdesk.example.com", "http://helpdesk.example.com:8000/mcp"),
    ],
)
def test_startup_url_is_one_a_client_can_connect_to(host: str, url: str) -> None:
    assert connect_url(host, 8000) == url


def test_client_snippet_is_valid_python() -> None:
    snippet = client_snippet("http://127.0.0.1:8000/mcp", "nour-demo-key")
    compile(snippet, "<snippet>", "exec")
    assert len(snippet.splitlines()) <= 7
