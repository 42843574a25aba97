"""Issue 39, item 5: a key's value and its change history are written in one store call, all or nothing — a quota
that refuses the pair writes neither, and racing writers (tasks, two servers, two processes) leave the history
ending in the value the key holds (docs/provenance.md#change-history).

Through the real HTTP app, on every store (PostgreSQL too), in both protocol eras unless a test says otherwise.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit import ManualClock, Server
from mcpkit.testing import CallAs, CallerClient, ToolCallError, running
from remember.support import NEW, SECRET, STORES, static_user_id
from remember.test_provenance import _server, prov
from remember.test_rotation import mcpkit, prefix_args

ROOT = Path(__file__).resolve().parents[2]
WRITERS, TIMES = 8, 6


@pytest.fixture(params=[*STORES, "postgres"])
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def mcpkit_server(store_options: dict[str, Any]) -> Server:
    return _server(store_options)


async def _consistent(client: CallerClient, key: str, written: set[Any]) -> list[list[Any]]:
    """The key's history, checked against its value: the last version is the value kept, every version one that a
    writer set, the events a ``set`` then ``update``s."""
    history = await prov(client, "history", key=key)
    value = (await prov(client, "info", key=key))["value"]
    assert history[-1][1] == value
    assert {row[1] for row in history} <= written
    assert [row[0] for row in history] == ["update"] * len(history)  # a history of 3 past the first set
    return list(history)


async def test_a_set_the_quota_refuses_writes_neither_the_value_nor_its_history(
    store_options: dict[str, Any], mcp_protocol: str
) -> None:
    server = _server(store_options, max_values=3)
    async with running(server, protocol=mcp_protocol) as callers:
        nour = callers("nour")
        await prov(nour, "set", key="a", value=1)  # the value and its history: two entries of three
        with pytest.raises(ToolCallError) as raised:
            await prov(nour, "set", key="b", value=2)  # b fits, its history does not: neither is written
        assert raised.value.code == "REMEMBER_QUOTA_EXCEEDED"
        assert await prov(nour, "info", key="b") is None
        assert await prov(nour, "history", key="b") == []
        assert await prov(nour, "list") == ["a"]
        await prov(nour, "update", key="a", value=3)  # an update adds no entry: it fits
        assert [row[:2] for row in await prov(nour, "history", key="a")] == [["set", 1], ["update", 3]]


async def test_a_set_many_the_quota_refuses_part_way_keeps_each_value_with_its_history(
    store_options: dict[str, Any], mcp_protocol: str
) -> None:
    server = _server(store_options, max_values=5)
    async with running(server, protocol=mcp_protocol) as callers:
        nour = callers("nour")
        with pytest.raises(ToolCallError) as raised:
            await prov(nour, "set_many", value={"a": 1, "b": 2, "c": 3})  # two pairs fit, the third does not
        assert raised.value.code == "REMEMBER_QUOTA_EXCEEDED"
        assert await prov(nour, "list") == ["a", "b"]
        assert await prov(nour, "history", key="c") == []
        assert [row[:2] for row in await prov(nour, "history", key="b")] == [["set", 2]]


async def test_forget_of_an_expired_value_answers_false_and_takes_its_leftover_history(
    call_as: CallAs, clock: ManualClock
) -> None:
    """Found by review: a history outlives a value that expired (its first version had no ttl), and forget answered
    True for it, though docs/ttl.md promises False for an expired value."""
    nour = call_as("nour")
    await prov(nour, "set", key="k", value=1)
    await prov(nour, "set", key="k", value=2, ttl=60)
    clock.advance(61)
    assert await prov(nour, "info", key="k") is None
    assert await prov(nour, "history", key="k") != []  # the first version, kept without a ttl
    assert await prov(nour, "forget", key="k") is False
    assert await prov(nour, "history", key="k") == []  # gone with it all the same
    await prov(nour, "set", key="k", value=3)
    assert await prov(nour, "forget", key="k") is True


def _store_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the memory store's reads and writes, as they are called."""
    from mcpkit_storage.stores.memory._memory_store import MemoryStore

    calls: list[str] = []
    for method in ("get", "get_many", "put", "swap", "swap_many"):
        original = getattr(MemoryStore, method)

        def counted(*args: Any, _original: Any = original, _name: str = method, **kwargs: Any) -> Any:
            calls.append(_name)
            return _original(*args, **kwargs)

        monkeypatch.setattr(MemoryStore, method, counted)
    return calls


@pytest.mark.parametrize("store_kind", ["memory"])
async def test_a_set_many_reads_and_writes_its_values_and_histories_in_one_store_call_each(
    call_as: CallAs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With histories on (the default) a set_many of 40 keys was 80 store calls, a read and a write per key; now one
    read of every value and history and one all-or-nothing write (per 128 keys), with the same versions."""
    calls = _store_calls(monkeypatch)
    nour = call_as("nour")
    values = {f"k{number:02}": number for number in range(40)}
    await prov(nour, "set_many", value=values)
    assert calls == ["get_many", "swap_many"]
    await prov(nour, "set_many", value={key: number + 1 for key, number in values.items()})
    assert sorted(await prov(nour, "list")) == sorted(values)
    assert [row[:2] for row in await prov(nour, "history", key="k07")] == [["set", 7], ["update", 8]]


@pytest.mark.parametrize("store_kind", ["memory"])
async def test_an_update_reads_its_value_and_history_in_one_store_call(
    call_as: CallAs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An update (an increment too) with a history read the value, then the history, then wrote both: three store
    calls. The value and its history are now read together, and written together: two."""
    calls = _store_calls(monkeypatch)
    nour = call_as("nour")
    await prov(nour, "update", key="tz", value="CET")  # a new key: its history starts with a "set"
    assert calls == ["get_many", "swap_many"]
    calls.clear()
    await prov(nour, "update", key="tz", value="EST")
    assert calls == ["get_many", "swap_many"]
    assert [row[:2] for row in await prov(nour, "history", key="tz")] == [["set", "CET"], ["update", "EST"]]


async def test_forget_all_and_purge_take_every_history_with_the_values(
    call_as: CallAs, store_options: dict[str, Any], clock: ManualClock
) -> None:
    nour = call_as("nour")
    for key in ("a", "b"):
        await prov(nour, "set", key=key, value=1)
        await prov(nour, "set", key=key, value=2, ttl=30)
    clock.advance(31)  # b's last version expired: its history shows it
    assert [row[0] for row in await prov(nour, "history", key="b")] == ["set", "update", "expire"]
    assert await prov(nour, "forget_all") == 0  # the values had expired: none went, their histories did
    assert await prov(nour, "history", key="a") == await prov(nour, "history", key="b") == []
    await prov(nour, "set", key="c", value=3)
    if store_options["type"] in ("sqlite", "redis"):  # the operator's purge, on a store another process can open
        url = f"sqlite:///{store_options['path']}" if store_options["type"] == "sqlite" else store_options["url"]
        args = ("purge", "--store", url, "--user", static_user_id("nour"), *prefix_args(store_options))
        done = mcpkit(*args, secret=SECRET)
        assert done.returncode == 0, done.stderr
        assert await prov(nour, "history", key="c") == []
        assert await prov(nour, "info", key="c") is None


@pytest.mark.parametrize("mcp_protocol", [NEW])
async def test_racing_sets_leave_the_history_ending_in_the_value_kept(call_as: CallAs) -> None:
    written: set[Any] = set()

    async def write(client: CallerClient, writer: int) -> None:
        for time in range(TIMES):
            value = f"{writer}-{time}"
            written.add(value)
            await prov(client, "set", key="tz", value=value)

    await prov(call_as("nour"), "set", key="tz", value="first")
    async with asyncio.TaskGroup() as group:
        for writer in range(WRITERS):
            group.create_task(write(call_as("nour", fresh=True), writer))
    history = await _consistent(call_as("nour"), "tz", written)
    assert len(history) == 3


@pytest.mark.parametrize("store_kind", ["sqlite", "redis", "postgres"])
async def test_two_servers_racing_on_one_store_leave_value_and_history_consistent(
    store_options: dict[str, Any],
) -> None:
    clock = ManualClock()
    written: set[Any] = set()

    async def write(client: CallerClient, writer: int) -> None:
        for time in range(TIMES):
            value = f"{writer}-{time}"
            written.add(value)
            await prov(client, "set", key="tz", value=value)
            await prov(client, "update", key="tz", value=value + "u")
            written.add(value + "u")

    first, second = _server(store_options), _server(store_options)
    async with running(first, clock=clock) as on_first, running(second, clock=clock) as on_second:
        await prov(on_first("nour"), "set", key="tz", value="first")
        async with asyncio.TaskGroup() as group:
            for writer in range(WRITERS):
                server = on_first if writer % 2 else on_second
                group.create_task(write(server("nour", fresh=True), writer))
        assert await _consistent(on_first("nour"), "tz", written) == await _consistent(on_second("nour"), "tz", written)


_WRITER = """
import asyncio, json, sys
from mcpkit.testing import running
from remember.test_provenance import _server, prov

async def main(options, name, times):
    async with running(_server(options), protocol="2026-07-28") as callers:
        nour = callers("nour")
        for time in range(times):
            await prov(nour, "set", key="tz", value=f"{name}-{time}")

asyncio.run(main(json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3])))
"""


@pytest.mark.parametrize("store_kind", ["sqlite", "redis"])
async def test_two_processes_racing_on_one_store_leave_value_and_history_consistent(
    store_options: dict[str, Any],
) -> None:
    options = {name: str(value) for name, value in store_options.items()}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    runs = [
        await asyncio.create_subprocess_exec(
            sys.executable, "-c", _WRITER, json.dumps(options), name, str(TIMES * 4), cwd=ROOT, env=env
        )
        for name in ("one", "two")
    ]
    assert [await asyncio.wait_for(run.wait(), 300) for run in runs] == [0, 0]
    written = {f"{name}-{time}" for name in ("one", "two") for time in range(TIMES * 4)}
    async with running(_server(store_options), protocol=NEW) as callers:
        history = await _consistent(callers("nour"), "tz", written)
        assert history[-1][1] in {f"one-{TIMES * 4 - 1}", f"two-{TIMES * 4 - 1}"}
