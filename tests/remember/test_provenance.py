"""Provenance sealed with every value: its source, its event time and who wrote it, read back by ``info``, filtered
by ``list`` and ``search``, kept through rotation and reindex; and each key's change history (docs/provenance.md).

Every test runs through the real HTTP app, on every store (PostgreSQL too), in both protocol eras, with a change
history of 3 versions (the default, asked for by name so that a change of the default does not change them).
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

import pytest

from mcpkit import ManualClock, Server, ToolContext, iso_time, tool
from mcpkit.testing import CallAs, ToolCallError, running
from mcpkit_remember import RememberPlugin
from mcpkit_storage import Place, Vault
from mcpkit_storage.sealing import unpack
from remember.support import (
    KEYS,
    SECRET,
    SECRET_B,
    STORES,
    build_server,
    plugin_of,
    static_user_id,
    store_of,
    user_identity,
)
from remember.test_rotation import mcpkit

Op = Literal[
    "set", "set_many", "update", "info", "list", "search", "history", "forget", "forget_keeping", "forget_all", "whoami"
]


@tool(name="prov", description="Test tool: one provenance operation per call.")
class Prov(ToolContext):
    async def execute(
        self,
        op: Op,
        key: str = "k",
        value: Any = None,
        source: Any = None,
        at: Any = None,
        ttl: float | None = None,
        sources: Any = None,
        min_trust: Any = None,
        query: str = "",
    ) -> dict[str, Any]:
        remember = self.remember
        if op == "set":
            await remember.set(key, value, scope="user", source=source, at=at, ttl=ttl)
            return {"result": True}
        if op == "set_many":  # value: {key: value}
            await remember.set_many(value, scope="user", source=source, at=at)
            return {"result": True}
        if op == "update":
            return {"result": await remember.update(key, lambda _: value, scope="user", source=source, at=at)}
        if op == "info":
            info = await remember.info(key, scope="user")
            return {"result": None if info is None else info._asdict()}
        if op == "list":
            return {"result": await remember.list(scope="user", sources=sources, min_trust=min_trust)}
        if op == "search":
            matches = await remember.search(query, scope="user", sources=sources, min_trust=min_trust)
            return {"result": [[match.key, match.source] for match in matches]}
        if op == "history":
            versions = await remember.history(key, scope="user")
            return {
                "result": [
                    [v.event, v.value, v.written_at, None if v.provenance is None else v.provenance.source]
                    for v in versions
                ]
            }
        if op == "forget":
            return {"result": await remember.forget(key, scope="user")}
        if op == "forget_keeping":
            return {"result": await remember.forget(key, scope="user", keep_history=True)}
        if op == "forget_all":
            return {"result": await remember.forget_all(scope="user")}
        return {"result": self.caller.session_id}


@pytest.fixture(params=[*STORES, "postgres"])
def store_kind(request: pytest.FixtureRequest) -> str:
    """Every store, PostgreSQL too: provenance and versions are sealed in the payload, which every store keeps."""
    return str(request.param)


#: The change history these tests keep (the default's, given by name).
HISTORY = 3


def _server(store_options: dict[str, Any], secret: str = SECRET, **options: Any) -> Server:
    options.setdefault("history", HISTORY)
    return build_server(RememberPlugin.init(**store_options, secret=secret, search=True, **options), [Prov])


@pytest.fixture
def mcpkit_server(store_options: dict[str, Any]) -> Server:
    return _server(store_options)


async def prov(caller: Any, op: Op, **arguments: Any) -> Any:
    return (await caller.call("prov", {"op": op, **arguments}))["result"]


async def test_info_says_who_wrote_a_value_from_which_client_in_which_era(
    call_as: CallAs, clock: ManualClock, mcp_protocol: str
) -> None:
    nour = call_as("nour")
    await prov(nour, "set", key="city", value="Lyon", source="user")
    info = await prov(nour, "info", key="city")
    session = await prov(nour, "whoami")
    assert info["value"] == "Lyon"
    assert (info["source"], info["at"], info["updated_at"]) == ("user", clock.now(), clock.now())
    assert (info["app"], info["tool"], info["era"]) == ("notes", "prov", mcp_protocol)
    assert (info["client"], info["client_version"]) == ("mcp", "0.1.0")  # the official client's clientInfo
    if session is None:  # 2026-07-28: no session
        assert info["session"] is None
    else:  # the session as a hash, never the id itself
        assert info["session"] == hashlib.sha256(session.encode()).hexdigest()[:16] != session


async def test_info_says_when_a_key_was_first_written_which_an_overwrite_keeps_and_a_forget_ends(
    call_as: CallAs, clock: ManualClock
) -> None:
    nour, first = call_as("nour"), clock.now()
    for value in ("Lyon", "Paris"):  # the second write replaces the first: the key stays as old
        await prov(nour, "set", key="city", value=value, source="user")
        clock.advance(60)
    info = await prov(nour, "info", key="city")
    assert (info["value"], info["created_at"], info["updated_at"]) == ("Paris", first, first + 60)
    await prov(nour, "forget", key="city")
    await prov(nour, "update", key="city", value="Nantes")  # written anew after the forget
    assert [(await prov(nour, "info", key="city"))[name] for name in ("created_at", "updated_at")] == [first + 120] * 2


async def test_a_tools_write_is_a_tool_source_by_default_and_at_says_when_it_happened(
    call_as: CallAs, clock: ManualClock
) -> None:
    nour = call_as("nour")
    await prov(nour, "set", key="computed", value=42)
    await prov(nour, "set", key="meeting", value="kick-off", at=1_700_000_000.5)
    computed, meeting = await prov(nour, "info", key="computed"), await prov(nour, "info", key="meeting")
    assert (computed["source"], computed["at"]) == ("tool", clock.now())
    assert (meeting["at"], meeting["updated_at"]) == (1_700_000_000.5, clock.now())
    assert await prov(nour, "info", key="nothing") is None


@pytest.mark.parametrize(
    ("arguments", "needle"),
    [
        ({"source": "rumour"}, "source is one of user, tool, model, import, external"),
        ({"at": "soon"}, "at is when"),
        ({"at": 1e12}, "1970 to the year 9999"),  # past the calendar: no date could show it
        ({"at": -1}, "1970 to the year 9999"),
    ],
)
async def test_a_wrong_source_or_at_is_refused_naming_what_is_allowed(
    call_as: CallAs, arguments: dict[str, Any], needle: str
) -> None:
    with pytest.raises(ToolCallError) as raised:
        await prov(call_as("nour"), "set", key="k", value=1, **arguments)
    assert raised.value.code == "REMEMBER_INVALID"
    assert needle in raised.value.message
    assert await prov(call_as("nour"), "info", key="k") is None  # nothing written


async def test_list_and_search_keep_only_the_sources_asked_for_or_a_minimum_trust(call_as: CallAs) -> None:
    nour = call_as("nour")
    for source in ("user", "tool", "model", "import", "external"):
        await prov(nour, "set", key=f"weather:{source}", value=f"rain in Lyon says {source}", source=source)
    every = [f"weather:{s}" for s in ("external", "import", "model", "tool", "user")]
    assert await prov(nour, "list") == every
    assert await prov(nour, "list", sources=["user"]) == ["weather:user"]
    assert await prov(nour, "list", min_trust="model") == ["weather:model", "weather:tool", "weather:user"]
    assert await prov(nour, "list", sources=["external", "user"], min_trust="tool") == ["weather:user"]
    found = await prov(nour, "search", query="rain Lyon")
    assert sorted(found) == sorted([key, key.split(":")[1]] for key in every)  # each match with its source
    assert await prov(nour, "search", query="rain Lyon", sources=["user"]) == [["weather:user", "user"]]
    assert sorted(await prov(nour, "search", query="rain", min_trust="tool")) == [
        ["weather:tool", "tool"],
        ["weather:user", "user"],
    ]
    with pytest.raises(ToolCallError) as raised:
        await prov(nour, "list", sources="user")  # a string, not a list of sources
    assert "sources is a list of user, tool, model, import, external" in raised.value.message


async def test_a_value_written_before_provenance_reads_as_unknown_and_is_left_out_by_a_filter(
    call_as: CallAs, mcpkit_server: Server, clock: ManualClock
) -> None:
    nour = call_as("nour")
    await prov(nour, "set", key="new", value="written now", source="user")
    vault: Vault = plugin_of(mcpkit_server)._backing.vault
    place = Place(user_identity(static_user_id("nour")), "user")
    await vault.write(place, "old", '"written before"', None, clock.now(), None)  # no meta section: as before
    info = await prov(nour, "info", key="old")
    assert info["value"] == "written before"
    assert (info["source"], info["app"], info["updated_at"]) == (None, None, clock.now())
    assert await prov(nour, "list") == ["new", "old"]
    assert await prov(nour, "list", min_trust="external") == ["new"]


async def test_provenance_is_sealed_never_plain_at_rest(call_as: CallAs, mcpkit_server: Server) -> None:
    await prov(call_as("nour"), "set", key="k", value="v", source="external")
    store = store_of(mcpkit_server)
    seen = b"".join(record.entry.data for record in [r async for r in store.scan()])
    for plain in (b"external", b"notes", b"prov", b"mcp"):
        assert plain not in seen


async def test_a_keys_history_keeps_its_last_versions_with_events_and_sources(
    call_as: CallAs, clock: ManualClock
) -> None:
    nour = call_as("nour")
    await prov(nour, "set", key="tz", value="UTC", source="user")
    first = clock.now()
    clock.advance(10)
    await prov(nour, "update", key="tz", value="CET", source="model")
    clock.advance(10)
    await prov(nour, "set", key="tz", value="EST", source="external")
    assert await prov(nour, "history", key="tz") == [
        ["set", "UTC", first, "user"],
        ["update", "CET", first + 10, "model"],
        ["update", "EST", first + 20, "external"],
    ]
    clock.advance(10)
    await prov(nour, "set", key="tz", value="JST")  # a history of 3 keeps 3: the oldest goes
    assert [row[1] for row in await prov(nour, "history", key="tz")] == ["CET", "EST", "JST"]


async def test_set_many_seals_one_source_for_all_and_an_import_is_an_import_event(
    call_as: CallAs, clock: ManualClock
) -> None:
    nour = call_as("nour")
    await prov(nour, "set_many", value={"a": 1, "b": 2}, source="import", at=1_500_000_000.0)
    for key in ("a", "b"):
        info = await prov(nour, "info", key=key)
        assert (info["source"], info["at"], info["updated_at"]) == ("import", 1_500_000_000.0, clock.now())
        assert await prov(nour, "history", key=key) == [["import", info["value"], clock.now(), "import"]]


async def test_forget_erases_the_history_unless_asked_to_keep_it_with_a_delete_event(call_as: CallAs) -> None:
    nour = call_as("nour")
    await prov(nour, "set", key="a", value=1)
    assert await prov(nour, "forget", key="a") is True
    assert await prov(nour, "history", key="a") == []
    await prov(nour, "set", key="b", value=1)
    assert await prov(nour, "forget_keeping", key="b") is True
    assert [row[0] for row in await prov(nour, "history", key="b")] == ["set", "delete"]
    await prov(nour, "set", key="b", value=2)  # after a delete, a write is a new "set"
    assert [row[:2] for row in await prov(nour, "history", key="b")] == [["set", 1], ["delete", None], ["set", 2]]
    assert await prov(nour, "list") == ["b"]  # versions are never listed as keys


async def test_an_expired_value_shows_as_an_expire_event_and_its_copy_is_not_returned(
    call_as: CallAs, clock: ManualClock
) -> None:
    nour = call_as("nour")
    await prov(nour, "set", key="code", value="1234")  # no ttl: its version keeps the history alive
    written = clock.now()
    clock.advance(1)
    await prov(nour, "set", key="code", value="5678", ttl=60)
    clock.advance(61)
    assert await prov(nour, "history", key="code") == [
        ["set", "1234", written, "tool"],
        ["update", None, written + 1, "tool"],  # past its ttl: the copy is not returned
        ["expire", None, written + 61, None],
    ]


async def test_a_history_that_holds_only_ttl_values_goes_when_they_expire(call_as: CallAs, clock: ManualClock) -> None:
    nour = call_as("nour")
    await prov(nour, "set", key="otp", value="1234", ttl=30)
    clock.advance(31)
    assert await prov(nour, "history", key="otp") == []


async def test_the_history_counts_in_the_quota(store_options: dict[str, Any], mcp_protocol: str) -> None:
    server = _server(store_options, max_values=2)
    async with running(server, protocol=mcp_protocol) as callers:
        nour = callers("nour")
        await prov(nour, "set", key="a", value=1)  # the value and its history: two entries
        with pytest.raises(ToolCallError) as raised:
            await prov(nour, "set", key="b", value=2)
        assert raised.value.code == "REMEMBER_QUOTA_EXCEEDED"


async def test_a_history_of_three_versions_is_kept_by_default_and_history_0_keeps_none(
    store_options: dict[str, Any], mcp_protocol: str
) -> None:
    server = build_server(RememberPlugin.init(**store_options, secret=SECRET, search=True), [Prov])  # the default
    async with running(server, protocol=mcp_protocol) as callers:
        nour = callers("nour")
        for value in range(1, 6):
            await prov(nour, "set", key="a", value=value)
        kept = await prov(nour, "history", key="a")
        assert [(row[0], row[1]) for row in kept] == [("update", v) for v in (3, 4, 5)]
    off = build_server(RememberPlugin.init(**store_options, secret=SECRET, search=True, history=0), [Prov])
    async with running(off, protocol=mcp_protocol) as callers:
        nour = callers("nour")
        await prov(nour, "set", key="b", value=1)
        await prov(nour, "set", key="b", value=2)
        assert await prov(nour, "history", key="b") == []
        assert (await prov(nour, "info", key="b"))["source"] == "tool"  # provenance does not need the history


@pytest.mark.parametrize("store_kind", ["sqlite"])
async def test_rotation_and_reindex_keep_provenance_event_time_and_history(
    call_as: CallAs, store_options: dict[str, Any], mcp_protocol: str
) -> None:
    nour = call_as("nour")
    await prov(nour, "set", key="city", value="Lyon", source="user", at=1_600_000_000.0)
    await prov(nour, "set", key="city", value="Paris", source="external")
    before = (await prov(nour, "info", key="city"), await prov(nour, "history", key="city"))
    url = f"sqlite:///{store_options['path']}"
    for action, secrets in (("rotate", f"{SECRET_B},{SECRET}"), ("reindex", SECRET_B)):
        done = mcpkit(action, "--store", url, "--force", secret=secrets)
        assert done.returncode == 0, done.stderr
    server = _server(store_options, SECRET_B)
    async with running(server, protocol=mcp_protocol) as callers:
        after = callers("nour")
        assert (await prov(after, "info", key="city"), await prov(after, "history", key="city")) == before
        assert await prov(after, "search", query="Paris", sources=["external"]) == [["city", "external"]]


def test_an_old_payload_without_meta_still_unpacks() -> None:
    from mcpkit_storage.sealing import pack

    old = pack("id", "bucket", "key", '"v"', None, 5.0, b"\x01\x02")
    assert (unpack(old).value(), unpack(old).vector, unpack(old).provenance) == ("v", b"\x01\x02", None)


@pytest.mark.parametrize("store_kind", ["sqlite"])
async def test_the_history_command_prints_each_version_values_only_when_asked(
    call_as: CallAs, store_url: str, clock: ManualClock
) -> None:
    nour = call_as("nour")
    await prov(nour, "set", key="tz", value="UTC", source="user")
    clock.advance(60)
    await prov(nour, "set", key="tz", value="EST (from a web page)", source="external")
    user = static_user_id("nour")
    done = mcpkit("history", "--store", store_url, "--user", user, "tz", secret=SECRET)
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first.startswith(iso_time(clock.now() - 60) + "  set  source=user  app=notes  tool=prov  client=mcp 0.1.0")
    assert second.startswith(iso_time(clock.now()) + "  update  source=external")
    assert "EST" not in done.stdout  # no value unless asked by name
    assert "UTC" not in done.stdout
    shown = mcpkit("history", "--store", store_url, "--user", user, "--values", "tz", secret=SECRET)
    assert shown.stdout.splitlines()[1].endswith('value="EST (from a web page)"')
    missing = mcpkit("history", "--store", store_url, "--user", user, "nothing", secret=SECRET)
    assert (missing.returncode, missing.stdout) == (3, "")
    assert "no history of that key" in missing.stderr


@pytest.mark.parametrize("store_kind", ["sqlite"])
async def test_the_history_command_finds_a_static_keys_user_by_its_label_as_export_and_purge_do(
    call_as: CallAs, store_url: str
) -> None:
    await prov(call_as("nour"), "set", key="tz", value="UTC", source="user")
    pairs = {"DESK_KEYS": ",".join(f"{label}={key}" for label, key in KEYS.items())}
    by_label = mcpkit(
        "history",
        "--store",
        store_url,
        "--key-label",
        "nour",
        "--keys-from",
        "DESK_KEYS",
        "tz",
        secret=SECRET,
        environ=pairs,
    )
    by_id = mcpkit("history", "--store", store_url, "--user", static_user_id("nour"), "tz", secret=SECRET)
    assert by_label.returncode == 0, by_label.stderr
    assert by_label.stdout == by_id.stdout
    assert "  set  source=user" in by_label.stdout
    unlabelled = mcpkit("history", "--store", store_url, "--key-label", "nour", "tz", secret=SECRET, environ=pairs)
    assert unlabelled.returncode == 2
    assert "--key-label 'nour' needs --keys-from VARIABLE" in unlabelled.stderr
    a_label_as_id = mcpkit("history", "--store", store_url, "--user", "nour", "tz", secret=SECRET)
    assert a_label_as_id.returncode == 3
    assert "use --key-label LABEL --keys-from VARIABLE" in a_label_as_id.stderr


@pytest.mark.parametrize("store_kind", ["sqlite", "redis"])  # stores that outlive a server
async def test_forget_erases_a_history_kept_under_an_earlier_setting(
    store_options: dict[str, Any], mcp_protocol: str
) -> None:
    """A server that kept histories restarts with none (the default): forgetting a key still erases its history,
    so what the caller asked to forget leaves no copy behind."""
    async with running(_server(store_options), protocol=mcp_protocol) as callers:
        await prov(callers("nour"), "set", key="pin", value="1234")
        await prov(callers("nour"), "set", key="pin", value="5678")
    async with running(_server(store_options, history=0), protocol=mcp_protocol) as callers:
        nour = callers("nour")
        assert [row[1] for row in await prov(nour, "history", key="pin")] == ["1234", "5678"]  # kept from before
        assert await prov(nour, "forget", key="pin") is True
        assert await prov(nour, "history", key="pin") == []
        assert await prov(nour, "forget", key="pin") is False  # nothing left to forget
