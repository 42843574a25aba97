"""Helpers of the tasks tests: tools a test holds and releases, servers on each store, and raw 2026-07-28 requests
(the official Python client has no tasks API), with the tasks extension declared or not."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx2
import mcp_types as types
from mcp.shared.exceptions import MCPError

from mcpkit import Clock, Server, StaticKeys, ToolContext, ToolError, app, tool

EXTENSION = "io.modelcontextprotocol/tasks"
MODERN, LEGACY = "2026-07-28", "2025-11-25"
SECRET = "tasks-test-secret-0123456789abcdef"
KEYS = {"alice": "alice-key-0123456789abcdef", "bob": "bob-key-0123456789abcdef"}
ALICE, BOB = KEYS["alice"], KEYS["bob"]

#: Events the held tools wait on, by name (made by each test, on its own loop).
GATES: dict[str, asyncio.Event] = {}
#: What the held tools saw: ("started", gate), ("cancelled", gate), ("released", gate).
SEEN: list[tuple[str, str]] = []
_WATCHING: list[asyncio.Event] = []


def note(entry: tuple[str, str]) -> None:
    SEEN.append(entry)
    for watcher in _WATCHING:
        watcher.set()


async def saw(entry: tuple[str, str]) -> None:
    """Wait until a tool has noted ``entry``."""
    while True:
        watcher = asyncio.Event()
        _WATCHING.append(watcher)
        try:
            if entry in SEEN:
                return
            await watcher.wait()
        finally:
            _WATCHING.remove(watcher)


@tool(name="held", description="Waits until the test releases its gate.", task=True)
class Held(ToolContext):
    async def execute(self, gate: str) -> str:
        note(("started", gate))
        try:
            await GATES[gate].wait()
        except asyncio.CancelledError:
            note(("cancelled", gate))
            raise
        note(("released", gate))
        return f"released {gate} for {self.caller.user_id} as task {self.task_id}"


@tool(name="reporting", description="Reports progress, then waits for its gate.", task=True)
class Reporting(ToolContext):
    async def execute(self, gate: str) -> str:
        await self.progress(1, 4, "Read the first quarter")
        await GATES[gate].wait()
        return "reported"


@tool(name="chatty", description="Reports progress 2,000 times at once, then waits for its gate.", task=True)
class Chatty(ToolContext):
    async def execute(self, gate: str) -> str:
        for step in range(1, 2001):
            await self.progress(step, 2000)
        note(("reported", gate))
        await GATES[gate].wait()
        return "reported"


@tool(name="asking", description="Asks for a confirmation, as a task.", task=True)
class Asking(ToolContext):
    async def execute(self, what: str) -> str:
        note(("started", what))
        answer = await self.elicit(f"Delete {what}?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
        return f"{what}: {answer.action} {json.dumps(answer.content)}"


@tool(name="failing", description="Fails as a tool, as a task.", task=True)
class Failing(ToolContext):
    async def execute(self) -> str:
        raise ToolError("No such report.", code="NO_REPORT")


@tool(name="crashing", description="Crashes, as a task.", task=True)
class Crashing(ToolContext):
    async def execute(self) -> str:
        raise RuntimeError("secret internals")


@tool(name="required", description="Runs only as a task.", task="required")
class Required(ToolContext):
    async def execute(self) -> str:
        return "done as a task"


@tool(name="plain", description="Answers in the request.")
class Plain(ToolContext):
    async def execute(self, text: str) -> str:
        return text.upper()


@tool(name="carrying", description="Gives back its text (or its length) once its gate, if any, opens.", task=True)
class Carrying(ToolContext):
    async def execute(self, text: str, back: bool = True, gate: str | None = None, crash: bool = False) -> str:
        if gate is not None:
            await GATES[gate].wait()
        if crash:
            raise RuntimeError("crashed on purpose")
        return text if back else f"{len(text)} characters"


@tool(name="oversized", description="Makes its result, progress, question or error `size` characters long.", task=True)
class Oversized(ToolContext):
    async def execute(self, part: str, size: int) -> str:
        big = "x" * size
        if part == "progress":
            await self.progress(1, 2, big)
            try:
                await asyncio.Event().wait()  # until the run is stopped
            except asyncio.CancelledError:
                note(("cancelled", part))
                raise
        elif part == "question":
            await self.elicit(big, {"type": "object", "properties": {"ok": {"type": "boolean"}}})
        elif part == "error":
            raise MCPError(-32000, big)
        return big


TOOLS = [Held, Reporting, Chatty, Asking, Failing, Crashing, Required, Plain, Carrying, Oversized]


def build(plugin: Any = None, *, clock: Clock | None = None, **options: Any) -> Server:
    """A server with the test tools, alice's and bob's keys, anonymous callers allowed, ``plugin`` on its app."""
    plugins = [] if plugin is None else [plugin]
    tasks_app = app(id="tasks", tools=TOOLS, plugins=plugins)(type("TasksApp", (), {"__doc__": "Task tools."}))
    return Server([tasks_app], auth=StaticKeys(KEYS), allow_anonymous=True, clock=clock, **options)


def capabilities(tasks: bool = True) -> dict[str, Any]:
    declared: dict[str, Any] = {"elicitation": {}}
    if tasks:
        declared["extensions"] = {EXTENSION: {}}
    return declared


@dataclass
class Reply:
    """One JSON-RPC answer: its HTTP status, and its result or error."""

    status: int
    result: dict[str, Any] | None
    error: dict[str, Any] | None

    @property
    def text(self) -> str:
        assert self.result is not None, self.error
        return str(self.result["content"][0]["text"])


class Caller:
    """Raw 2026-07-28 requests from one caller (``token`` None: anonymous), declaring the tasks extension or not."""

    def __init__(self, http: httpx2.AsyncClient, token: str | None, *, tasks: bool = True) -> None:
        self.http = http
        self.token = token
        self.tasks = tasks

    async def request(
        self, method: str, params: Mapping[str, Any], name: str | None = None, headers: Mapping[str, str] = {}
    ) -> Reply:
        meta = {types.PROTOCOL_VERSION_META_KEY: MODERN, types.CLIENT_CAPABILITIES_META_KEY: capabilities(self.tasks)}
        sent = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
        sent_headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": MODERN}
        sent_headers["Mcp-Method"] = method
        if name is not None:
            sent_headers["Mcp-Name"] = name
        if self.token is not None:
            sent_headers["Authorization"] = f"Bearer {self.token}"
        response = await self.http.post("/mcp", json=sent, headers={**sent_headers, **headers})
        body = response.json()
        return Reply(response.status_code, body.get("result"), body.get("error"))

    async def call(self, tool_name: str, arguments: Mapping[str, Any] | None = None) -> Reply:
        return await self.request("tools/call", {"name": tool_name, "arguments": dict(arguments or {})}, tool_name)

    async def start(self, tool_name: str, arguments: Mapping[str, Any] | None = None) -> str:
        """Call a task tool and return the task id (asserting that a task is what came back)."""
        reply = await self.call(tool_name, arguments)
        assert reply.result is not None, reply
        assert reply.result["resultType"] == "task", reply
        return str(reply.result["taskId"])

    async def get(self, task_id: str) -> Reply:
        return await self.request("tasks/get", {"taskId": task_id}, task_id)

    async def update(self, task_id: str, responses: Mapping[str, Any]) -> Reply:
        return await self.request("tasks/update", {"taskId": task_id, "inputResponses": dict(responses)}, task_id)

    async def cancel(self, task_id: str) -> Reply:
        return await self.request("tasks/cancel", {"taskId": task_id}, task_id)

    async def message(self, task_id: str) -> str:
        """Poll ``tasks/get`` until the task has a status message, and return it."""
        while True:
            reply = await self.get(task_id)
            assert reply.result is not None, reply.error
            if reply.result.get("statusMessage") is not None:
                return str(reply.result["statusMessage"])
            await asyncio.sleep(0.01)

    async def until(self, task_id: str, *statuses: str) -> dict[str, Any]:
        """Poll ``tasks/get`` (yielding to the server's background work in between) until the task is in one of
        ``statuses``; no wall-clock deadline: the test's own timeout bounds it."""
        while True:
            reply = await self.get(task_id)
            assert reply.result is not None, reply.error
            if reply.result["status"] in statuses:
                return reply.result
            await asyncio.sleep(0.01)


@contextlib.asynccontextmanager
async def serving(server: Server) -> AsyncIterator[httpx2.AsyncClient]:
    """``server``'s HTTP app with its lifespan running, and a raw client for it."""
    async with from_addresses(server, "127.0.0.1") as (http,):
        yield http


@contextlib.asynccontextmanager
async def from_addresses(server: Server, *addresses: str) -> AsyncIterator[tuple[httpx2.AsyncClient, ...]]:
    """``server``'s HTTP app with its lifespan running, and a raw client for each of ``addresses``: where the server
    sees its requests come from (the ASGI scope's ``client``)."""
    asgi = server.http_app()
    async with contextlib.AsyncExitStack() as stack:
        await stack.enter_async_context(asgi.router.lifespan_context(asgi))
        clients = []
        for address in addresses:
            transport = httpx2.ASGITransport(app=asgi, client=(address, 40000))
            http = httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000")
            clients.append(await stack.enter_async_context(http))
        yield tuple(clients)


def gate(name: str) -> asyncio.Event:
    GATES[name] = asyncio.Event()
    return GATES[name]
