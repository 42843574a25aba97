"""One caller can never lock the others out of tasks: anonymous callers count per address (IPv6: per /64), and every
task record counts in bytes against the caller's byte limit and the store's own quota, on every store."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from mcpkit import ConfigurationError, ManualClock, Plugin, Server, ToolContext, app, tool
from mcpkit.tasks import TaskRecord
from mcpkit_remember import RememberPlugin
from reliability.processes import serving as running
from tasks.conftest import STORES, options_for
from tasks.support import ALICE, BOB, SECRET, Caller, build, from_addresses, gate, saw, serving

KIB = 1024
MIB = 1024 * KIB
HERE = Path(__file__).resolve().parent


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any] | None:
    """``RememberPlugin.init`` options of one store (None: no plugin, the server's own memory)."""
    return options_for(str(request.param), tmp_path, request)


def plugin(options: dict[str, Any] | None, **more: Any) -> RememberPlugin | None:
    return None if options is None else RememberPlugin.init(**options, secret=SECRET, **more)


def code_of(reply: Any) -> str:
    assert reply.result is not None, reply.error
    assert reply.result["isError"] is True, reply.result
    return str(reply.result["_meta"]["mcpkit/error"]["code"])


async def kept_bytes(server: Server) -> int:
    """What every task the server keeps takes in its store, as the store's quota counts it (the test's own store:
    nothing else is in it)."""
    remember = next((p for p in server._plugins if isinstance(p, RememberPlugin)), None)  # the server's copy
    if remember is None:
        task_store: Any = server._tasks.store  # type: ignore[union-attr]
        return sum(len(json.dumps(kept[0])) for tasks in task_store._owners.values() for kept in tasks.values())
    store = remember._started().vault.store
    return sum([len(record.entry.data) async for record in store.scan()])


# -- anonymous callers, per address ---------------------------------------------------------------------------


async def test_anonymous_callers_count_their_tasks_per_address(store: dict[str, Any] | None) -> None:
    server = build(plugin(store), task_limit=2)
    addresses = ("203.0.113.7", "203.0.113.7", "203.0.113.8")
    addresses += ("2001:db8:1:2::1", "2001:db8:1:2::beef", "2001:db8:1:3::1")  # two in one /64, one in another
    async with from_addresses(server, *addresses) as (one, same, other, v6, same_64, other_64):
        first = Caller(one, None)
        await first.until(await first.start("required"), "completed")
        await first.until(await first.start("required"), "completed")
        assert code_of(await first.call("required")) == "TASK_LIMIT"
        assert code_of(await Caller(same, None).call("required")) == "TASK_LIMIT"  # another connection, one address
        assert await Caller(other, None).start("required")  # another address keeps its own count
        await Caller(v6, None).start("required")
        await Caller(v6, None).start("required")
        assert code_of(await Caller(same_64, None).call("required")) == "TASK_LIMIT"  # one /64 is one client
        assert await Caller(other_64, None).start("required")


async def test_an_anonymous_task_is_found_only_from_the_address_that_started_it(store: dict[str, Any] | None) -> None:
    server = build(plugin(store))
    async with from_addresses(server, "203.0.113.7", "203.0.113.7", "203.0.113.8") as (one, same, moved):
        release = gate("mine")
        task_id = await Caller(one, None).start("held", {"gate": "mine"})
        for stranger in (Caller(moved, None), Caller(one, ALICE)):  # another address; someone signed in from it
            refused, never = await stranger.get(task_id), await stranger.get("no-such-task-anywhere")
            assert refused.error is not None
            assert never.error is not None
            assert refused.error["message"].replace(task_id, "ID") == never.error["message"].replace(
                "no-such-task-anywhere", "ID"
            )
            await stranger.cancel(task_id)
        found = await Caller(same, None).get(task_id)  # the same address, another connection
        assert found.result is not None
        assert found.result["status"] == "working"
        release.set()
        assert (await Caller(one, None).until(task_id, "completed"))["status"] == "completed"


@pytest.fixture
def real_server(tmp_path: Path) -> Iterator[str]:
    """A real ``mcpkit run`` server (one task a caller), whose trusted proxy is 127.0.0.1 (uvicorn's default)."""
    with running(f"{HERE / 'per_address_server.py'}:server", cwd=tmp_path) as served:
        yield f"http://127.0.0.1:{served.port}"


async def start_from(http: httpx2.AsyncClient, forwarded_for: str) -> Any:
    headers = {"X-Forwarded-For": forwarded_for}
    return await Caller(http, None).request("tools/call", {"name": "required", "arguments": {}}, "required", headers)


async def test_behind_a_trusted_proxy_the_client_it_names_is_the_owner_and_nobody_else_picks_one(
    real_server: str,
) -> None:
    proxy = httpx2.AsyncHTTPTransport(local_address="127.0.0.1")
    stranger = httpx2.AsyncHTTPTransport(local_address="127.0.0.2")  # not a trusted proxy
    async with (
        httpx2.AsyncClient(transport=proxy, base_url=real_server, timeout=30) as through_proxy,
        httpx2.AsyncClient(transport=stranger, base_url=real_server, timeout=30) as direct,
    ):
        started = await start_from(through_proxy, "203.0.113.7")
        assert started.result is not None
        task_id = started.result["taskId"]
        assert code_of(await start_from(through_proxy, "203.0.113.7")) == "TASK_LIMIT"
        assert (await start_from(through_proxy, "203.0.113.8")).result["resultType"] == "task"  # type: ignore[index]
        get = {"taskId": task_id}
        found = await Caller(through_proxy, None).request("tasks/get", get, task_id, {"X-Forwarded-For": "203.0.113.7"})
        assert found.result is not None
        hidden = await Caller(through_proxy, None).request(
            "tasks/get", get, task_id, {"X-Forwarded-For": "203.0.113.8"}
        )
        assert hidden.error is not None
        assert hidden.error["code"] == -32602
        # A client that is not a trusted proxy is its own address, whatever it names: no fresh owner per call.
        assert (await start_from(direct, "203.0.113.20")).result["resultType"] == "task"  # type: ignore[index]
        assert code_of(await start_from(direct, "203.0.113.21")) == "TASK_LIMIT"


# -- bytes ----------------------------------------------------------------------------------------------------


async def test_a_task_whose_arguments_do_not_fit_is_refused_naming_the_limit_and_its_size(
    store: dict[str, Any] | None,
) -> None:
    server = build(plugin(store), task_max_bytes=64 * KIB)
    async with serving(server) as http:
        alice, bob = Caller(http, ALICE), Caller(http, BOB)
        gate("kept")
        await alice.start("carrying", {"text": "a" * 40_000, "gate": "kept"})
        refused = await alice.call("carrying", {"text": "b" * 40_000})
        assert code_of(refused) == "TASK_BYTES"
        assert "task_max_bytes=65,536 bytes" in refused.text
        assert "with this caller's other tasks" in refused.text
        assert "bytes as JSON" in refused.text
        alone = await bob.call("carrying", {"text": "c" * 70_000})
        assert code_of(alone) == "TASK_BYTES"
        assert "more than this caller's tasks may keep in all" in alone.text
        assert await bob.start("carrying", {"text": "d" * 40_000})  # bob's own bytes
        assert await alice.start("carrying", {"text": "e" * 10_000})  # what is left of alice's


@pytest.mark.parametrize("part", ["result", "progress", "question", "error", "answers"])
async def test_a_task_whose_part_does_not_fit_ends_failed_saying_so_and_keeps_none_of_it(
    store: dict[str, Any] | None, part: str
) -> None:
    server = build(plugin(store), task_max_bytes=64 * KIB)
    async with serving(server) as http:
        alice = Caller(http, ALICE)
        if part == "answers":
            task_id = await alice.start("asking", {"what": "report.pdf"})
            [key] = (await alice.until(task_id, "input_required"))["inputRequests"]
            await alice.update(task_id, {key: {"action": "accept", "content": {"why": "x" * 100_000}}})
        else:
            task_id = await alice.start("oversized", {"part": part, "size": 100_000})
        failed = await alice.until(task_id, "failed", "completed", "input_required")
        assert failed["status"] == "failed"
        assert failed["error"]["code"] == -32603
        assert failed["error"]["data"]["mcpkit/error"]["code"] == "TASK_BYTES"
        named = {"progress": "progress message", "question": "questions"}.get(part, part)
        assert f"The task's {named} made its record" in failed["error"]["message"]
        assert failed["statusMessage"] == f"Its {named} did not fit in the task store."
        assert "task_max_bytes=65,536 bytes" in failed["error"]["message"]
        assert "result" not in failed
        assert "xxxxxxxx" not in json.dumps(failed)
        assert await kept_bytes(server) < 16 * KIB  # nothing half-written
        if part == "progress":
            await saw(("cancelled", "progress"))  # and its run was stopped


async def fill(alice: Caller, server: Server, limit: int) -> list[str]:
    """Start held tasks (gate ``hold``) until the caller's tasks take exactly ``limit`` bytes: past ``NOTE_ROOM``, a
    character more of a task's text is a byte more of its record (on a manual clock, every other field is alike)."""
    before = await kept_bytes(server)
    started = [await alice.start("carrying", {"text": "f" * 2048, "back": False, "gate": "hold"})]
    each = await kept_bytes(server) - before
    free = limit - await kept_bytes(server)
    while free >= 2 * each:
        started.append(await alice.start("carrying", {"text": "f" * 2048, "back": False, "gate": "hold"}))
        free -= each
    last = {"text": "f" * (2048 + free - each), "back": False, "gate": "hold"}
    return [*started, await alice.start("carrying", last)]


async def test_a_caller_at_its_byte_limit_still_sees_every_task_end(store: dict[str, Any] | None) -> None:
    server = build(plugin(store), clock=ManualClock(), task_max_bytes=32 * KIB)
    async with serving(server) as http:
        alice = Caller(http, ALICE)
        hold, crash, big = gate("hold"), gate("crash"), gate("big")
        cancelled = await alice.start("carrying", {"text": "c", "gate": "hold"})  # small: its ending needs its room
        crashing = await alice.start("carrying", {"text": "x", "gate": "crash", "crash": True})
        returning = await alice.start("carrying", {"text": "r" * 2048, "gate": "big"})  # its result: more than that
        filled = await fill(alice, server, 32 * KIB)
        assert await kept_bytes(server) == 32 * KIB  # full to the byte
        assert code_of(await alice.call("carrying", {"text": "one more"})) == "TASK_BYTES"
        kept = await kept_bytes(server)
        big.set()
        grew = await alice.until(returning, "failed", "completed")
        assert grew["error"]["data"]["mcpkit/error"]["code"] == "TASK_BYTES"
        assert grew["statusMessage"] == "Its result did not fit in the task store."
        assert await kept_bytes(server) <= kept
        kept = await kept_bytes(server)
        await alice.cancel(cancelled)
        assert (await alice.until(cancelled, "cancelled", "failed", "completed"))["status"] == "cancelled"
        assert await kept_bytes(server) <= kept
        kept = await kept_bytes(server)
        crash.set()
        crashed = await alice.until(crashing, "failed", "completed")
        assert "error id" in crashed["error"]["message"]
        assert await kept_bytes(server) <= kept
        hold.set()
        for task_id in filled:
            assert (await alice.until(task_id, "completed", "failed"))["status"] == "completed"
        assert await kept_bytes(server) <= 32 * KIB


def test_a_lease_renewal_never_changes_the_size_of_a_record() -> None:
    working = TaskRecord("t" * 32, "carrying", {"text": "a" * 5000}, "working", 1.7e9, 1.7e9, 3600.0, 1000)
    sizes = {len(json.dumps(working.leased(until).kept())) for until in (1.7e9 + 30, 1.7e9 + 30.5, 1.7e9 + 30.123456)}
    assert len(sizes) == 1  # so a renewal is never refused, even at a full quota


@pytest.mark.parametrize("task_max_bytes", [16 * MIB, None])
@pytest.mark.parametrize("kind", [kind for kind in STORES if kind != "server-memory"])
async def test_the_store_own_quota_bounds_a_caller_task_bytes_too(
    kind: str, task_max_bytes: int | None, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    remember = plugin(options_for(kind, tmp_path, request), max_bytes=128 * KIB)
    async with serving(build(remember, task_max_bytes=task_max_bytes)) as http:
        alice = Caller(http, ALICE)
        gate("kept")
        await alice.start("carrying", {"text": "a" * 50_000, "gate": "kept"})
        await alice.start("carrying", {"text": "b" * 50_000, "gate": "kept"})
        refused = await alice.call("carrying", {"text": "c" * 50_000})
        assert code_of(refused) == "TASK_BYTES"
        assert "the task store's own quota of 131,072 bytes" in refused.text


@pytest.mark.parametrize("kind", [kind for kind in STORES if kind != "server-memory"])
async def test_tasks_are_never_indexed_for_search_even_where_every_value_is(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    server = build(plugin(options_for(kind, tmp_path, request), search=True))
    async with serving(server) as http:
        alice = Caller(http, ALICE)
        await alice.until(
            await alice.start("carrying", {"text": "quarterly revenue report for the board"}), "completed"
        )
        remember = next(p for p in server._plugins if isinstance(p, RememberPlugin))
        kept = [record async for record in remember._started().vault.store.scan()]
    assert kept
    assert not any(record.indexed for record in kept)  # no postings: they would count in its bytes, for nothing


async def test_a_hundred_tasks_of_250_kb_keep_the_store_within_its_quota(store: dict[str, Any] | None) -> None:
    server = build(plugin(store))  # the defaults: task_max_bytes and the remember plugin's max_bytes, 16 MiB each
    async with serving(server) as http:
        alice = Caller(http, ALICE)
        release = gate("hundred")  # every task holds its arguments until all were asked for: the most kept at once
        started, refused = [], []
        for number in range(100):
            arguments = {"text": f"{number:03d}" + "t" * 249_997, "back": number % 2 == 0, "gate": "hundred"}
            reply = await alice.call("carrying", arguments)
            assert reply.result is not None, reply.error
            if reply.result.get("resultType") == "task":
                started.append(reply.result["taskId"])
            else:
                refused.append(code_of(reply))
        assert await kept_bytes(server) <= 16 * MIB
        release.set()
        for task_id in started:
            assert (await alice.until(task_id, "completed", "failed"))["status"] == "completed"
        kept = await kept_bytes(server)
    assert 60 <= len(started) < 100
    assert set(refused) == {"TASK_BYTES"}
    assert kept <= 16 * MIB


@pytest.mark.parametrize("value", [0, 4095, True, 1.5, "16MB"])
def test_task_max_bytes_is_checked_when_the_server_is_built(value: object) -> None:
    with pytest.raises(ConfigurationError, match="task_max_bytes"):
        build(task_max_bytes=value)


async def test_task_max_bytes_none_lifts_the_byte_limit() -> None:
    async with serving(build(task_max_bytes=None)) as http:  # the server's memory: no store quota either
        alice = Caller(http, ALICE)
        gate("held")
        for number in range(70):  # 17.5 MB of arguments, all kept at once
            assert await alice.start("carrying", {"text": f"{number:02d}" + "t" * 249_998, "gate": "held"})


async def test_a_task_store_written_for_the_old_protocol_is_refused_when_the_server_starts_saying_what_changed() -> (
    None
):
    class OldStore:  # add(..., limit) and replace(...) without a quota, as before task bytes were counted
        async def add(self, owner: str, task_id: str, record: Any, expires_at: Any, now: float, limit: Any) -> None:
            raise AssertionError("never called")

        async def load(self, owner: str, task_id: str, now: float) -> Any:
            return None

        async def replace(self, owner: str, task_id: str, seen: Any, record: Any, expires_at: Any, now: float) -> bool:
            raise AssertionError("never called")

    class KeepsTasks(Plugin):
        def task_store(self) -> object:
            return OldStore()

    @tool(name="slow", description="Runs as a task.", task=True)
    class Slow(ToolContext):
        async def execute(self) -> str:
            return "done"

    @app(id="old", tools=[Slow], plugins=[KeepsTasks()])
    class Old: ...

    with pytest.raises(ConfigurationError, match=r"OldStore.*add\(\) takes no 'quota'.*TaskQuota.*CHANGELOG"):
        async with Server([Old], allow_anonymous=True).running():
            pass
