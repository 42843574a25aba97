"""64 callers at once on a real server process, on every store: nobody reads another's value, nothing is lost.

Static-key, JWT and anonymous callers, in both protocol eras, each make 100 mixed calls (set, get, increment,
knows, list, forget) in every scope they may use, and try the scopes they may not. Every value a caller writes
names that caller, and each caller keeps a model of its own places (a caller's places are written by nobody
else, and its calls are sequential), so every answer is checked exactly:

- a **leak** is an answer holding another caller's value or key;
- a **lost** write is any other wrong answer: a value, key or count that is not what the caller last wrote,
  or a number missing from the counter all callers share (its increments must return 1..total, each once);
- an **internal error** is an ``INTERNAL_ERROR`` result, a JSON-RPC internal error or an HTTP 5xx.

Half the 2025-11-25 callers hold their session through the official ``mcp`` Client; every other caller sends
raw JSON-RPC POSTs over a keep-alive socket of its own (2026-07-28: the headers and ``_meta`` ``bench/wire.py``
sends; 2025-11-25: ``initialize``, then ``Mcp-Session-Id``). The official client costs the test process about
1.7 ms of CPU per call, which on two shared cores would slow the server it is meant to load.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import httpx2
import mcp_types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from mcpkit import JWTAuth
from reliability.callers import LEGACY, MODERN
from reliability.figures import Figures
from reliability.load_server import JWT_SECRET, MISSING, REDIS_PREFIX_ENV, static_keys
from reliability.processes import ServerProcess, serving

CALLS = 100
SEED = 20261128
SECRET = "load-test-remember-secret-0123456789"
TARGET = f"{Path(__file__).with_name('load_server.py')}:create_server"
REFUSED = "REMEMBER_IDENTITY_REQUIRED"
COUNTER = "count"  #: each private place's counter: only ever incremented
HITS = "hits"  #: the global counter every caller increments
IDLE_SECONDS = 2.0  #: a raw connection idle this long is replaced (uvicorn closes idle ones after 5 s)
POST_SECONDS = 60.0  #: one raw POST's upper bound: a stuck server fails the test instead of hanging the suite

#: JWT subjects that a naive ``scope:user:key`` layout, or sloppy escaping, would make meet: ``j00`` + key
#: ``note:0`` against ``j00:note`` + key ``0``, JSON framing, URL escapes, glob characters, lookalike unicode.
JWT_SUBS = [
    "j00",
    "j00:note",
    '["u", "j01"]',
    'j01"]',
    "j02/ü",
    "j02%2F",
    "j02%2f",
    "j03*",
    "j03?",
    "j03[",
    "j03\\",
    "j03\\\\",
    "Ĵ04",
    "J04",
    "j05 ",
    "j05",
    "\u210c06",  # BLACK-LETTER CAPITAL H: NFKC makes it "H06"
    "H06",
    "e\u0301",
    "\u00e9",
    "u:j07",
    "j08}{",
    "日本09",
    "j10\\u00e9",
]

#: A caller's own places: (scope, tool) — the tool only matters for tool scope.
Place = tuple[str, str]
USER, SESSION = ("user", ""), ("session", "")
TOOL_MEM, TOOL_TWIN = ("tool", "mem"), ("tool", "mem_twin")
SIGNED_IN_PLACES = (USER, SESSION, TOOL_MEM, TOOL_TWIN)


@dataclass
class Reply:
    """What one call gave back: the tool's result, or its error code, or an internal failure."""

    result: Any = None
    code: str | None = None
    internal: str | None = None


Send = Callable[[str, dict[str, Any]], Awaitable[Reply]]


@dataclass
class Caller:
    """One caller and its model of what it keeps in each of its places."""

    name: str
    kind: str
    era: str
    token: str | None
    places: tuple[Place, ...]
    refused: tuple[str, ...]
    official: bool = False  #: calls through the official mcp Client (else raw POSTs)
    model: dict[Place, dict[str, Any]] = field(default_factory=dict)
    hits_seen: int = 0

    def keys(self) -> tuple[str, ...]:
        """Keys shared by every caller (``note:0`` against ``j00:note``'s ``0``) and one naming this caller."""
        return ("note:0", "note:1", "0", f"own:{self.name}")


@dataclass
class Ledger:
    """What every caller saw, added up."""

    calls: int = 0
    leaks: int = 0
    lost: int = 0
    internal_errors: int = 0
    refused: int = 0
    ops: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    writers: dict[str, str] = field(default_factory=dict)
    hits_returned: list[int] = field(default_factory=list)

    def note(self, kind: str, caller: Caller, what: str) -> None:
        if kind == "leak":
            self.leaks += 1
        elif kind == "lost":
            self.lost += 1
        elif kind == "internal":
            self.internal_errors += 1
        if len(self.problems) < 20:
            self.problems.append(f"{kind}: {caller.name} ({caller.kind}, {caller.era}): {what}")

    def foreign(self, caller: Caller, answer: Any) -> bool:
        """Whether ``answer`` (a value or a list of keys) holds something another caller wrote."""
        if isinstance(answer, str):
            writer = self.writers.get(answer)
            return writer is not None and writer != caller.name
        if isinstance(answer, list):
            return any(
                isinstance(key, str) and key.startswith("own:") and key != f"own:{caller.name}" for key in answer
            )
        return False


def the_callers() -> list[Caller]:
    """24 static keys, 24 JWTs and 16 anonymous callers: half of each kind on either era, and half of the
    2025-11-25 callers on the official client."""
    callers = []
    issuer = JWTAuth(secret=JWT_SECRET, audience="mcpkit-tests")
    for i, (label, key) in enumerate(static_keys().items()):
        callers.append(Caller(f"static-{label}", "static", (MODERN, LEGACY)[i % 2], key, SIGNED_IN_PLACES, ()))
    for i, sub in enumerate(JWT_SUBS):
        callers.append(
            Caller(f"jwt-{sub}", "jwt", (MODERN, LEGACY)[i % 2], issuer.issue_token(sub), SIGNED_IN_PLACES, ())
        )
    for i in range(16):
        if i % 2:  # 2025-11-25: the session gives session and tool scope an identity; user scope refuses
            callers.append(
                Caller(f"anon-{i:02d}", "anonymous", LEGACY, None, (SESSION, TOOL_MEM, TOOL_TWIN), ("user",))
            )
        else:  # 2026-07-28: no session, no user: only global
            callers.append(Caller(f"anon-{i:02d}", "anonymous", MODERN, None, (), ("user", "session", "tool")))
    for i, caller in enumerate(c for c in callers if c.era == LEGACY):
        caller.official = i % 2 == 0
    return callers


def reply_of(result: dict[str, Any]) -> Reply:
    """The ``Reply`` of a ``CallToolResult`` in its wire form."""
    if result.get("isError"):
        error = (result.get("_meta") or {}).get("mcpkit/error") or {}
        code = error.get("code")
        if code == "INTERNAL_ERROR":
            return Reply(internal=f"INTERNAL_ERROR result: {error}")
        return Reply(code=str(code))
    return Reply(result=result["structuredContent"]["result"])


class Wire:
    """One caller's keep-alive HTTP/1.1 connection, sending JSON-RPC POSTs built by hand.

    2026-07-28: what ``bench/wire.py`` sends, the ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name``
    headers and the ``_meta`` envelope on every call. 2025-11-25: ``initialize`` first, then every call on the
    ``Mcp-Session-Id`` the server issued. A socket costs the test process far less per call than an HTTP
    client library, so the server, not the test, is what the load measures.
    """

    META: ClassVar[dict[str, Any]] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "load", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }

    def __init__(self, port: int, token: str | None, era: str) -> None:
        self.port = port
        self.era = era
        auth = "" if token is None else f"Authorization: Bearer {token}\r\n"
        self._head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}Content-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {era}\r\n"
        )
        self._ids = 0
        self._used = time.monotonic()
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def __aenter__(self) -> Wire:
        self._streams = await asyncio.open_connection("127.0.0.1", self.port)
        if self.era == LEGACY:
            hello = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "load", "version": "0"}}
            status, headers, _ = await self._post(self._message("initialize", hello), "")
            assert status == 200, f"initialize answered {status}"
            assert "mcp-session-id" in headers, f"initialize gave no session: {headers}"
            self._head += f"Mcp-Session-Id: {headers['mcp-session-id']}\r\n"
            notified = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            status, _, _ = await self._post(json.dumps(notified).encode(), "")
            assert status == 202, f"notifications/initialized answered {status}"
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._streams is not None:
            self._streams[1].close()

    def _message(self, method: str, params: dict[str, Any]) -> bytes:
        self._ids += 1
        return json.dumps({"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params}).encode()

    async def _post(self, body: bytes, extra_headers: str) -> tuple[int, dict[str, str], bytes]:
        """Send one POST and read its answer, within POST_SECONDS (else the test fails, naming the request)."""
        try:
            async with asyncio.timeout(POST_SECONDS):
                return await self._exchange(body, extra_headers)
        except TimeoutError:
            raise AssertionError(
                f"the server on port {self.port} did not answer within {POST_SECONDS:.0f} s "
                f"({self.era} POST): {body[:160]!r}"
            ) from None

    async def _exchange(self, body: bytes, extra_headers: str) -> tuple[int, dict[str, str], bytes]:
        assert self._streams is not None, "open the wire with async with"
        if self._streams[0].at_eof() or time.monotonic() - self._used > IDLE_SECONDS:
            # As HTTP clients do: uvicorn closes connections idle for 5 s (a session outlives its connection).
            self._streams[1].close()
            self._streams = await asyncio.open_connection("127.0.0.1", self.port)
        reader, writer = self._streams
        writer.write(f"{self._head}{extra_headers}Content-Length: {len(body)}\r\n\r\n".encode() + body)
        status_line, *lines = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        headers = dict(line.lower().split(": ", 1) for line in lines if line)
        answer = await reader.readexactly(int(headers.get("content-length", "0")))
        self._used = time.monotonic()
        return int(status_line.split()[1]), headers, answer

    async def send(self, tool: str, arguments: dict[str, Any]) -> Reply:
        params: dict[str, Any] = {"name": tool, "arguments": arguments}
        extra_headers = ""
        if self.era == MODERN:
            params["_meta"] = self.META
            extra_headers = f"Mcp-Method: tools/call\r\nMcp-Name: {tool}\r\n"
        status, _, answer = await self._post(self._message("tools/call", params), extra_headers)
        if status >= 500:
            return Reply(internal=f"HTTP {status}: {answer[:200]!r}")
        if status != 200:
            return Reply(code=f"HTTP {status}")
        message = json.loads(answer)
        if "error" in message:
            if message["error"].get("code") == mcp_types.INTERNAL_ERROR:
                return Reply(internal=f"JSON-RPC error {message['error']}")
            return Reply(code=f"JSON-RPC {message['error'].get('code')}")
        return reply_of(message["result"])


def client_sender(client: Client) -> Send:
    """2025-11-25 calls through the official client, on the session it holds open."""

    async def send(tool: str, arguments: dict[str, Any]) -> Reply:
        try:
            result = await client.call_tool(tool, arguments)
        except MCPError as error:
            if error.code == mcp_types.INTERNAL_ERROR:
                return Reply(internal=f"JSON-RPC error {error.error}")
            return Reply(code=f"JSON-RPC {error.code}")
        except Exception as error:  # the transport failed (an HTTP 5xx surfaces here)
            return Reply(internal=f"{type(error).__name__}: {error}")
        return reply_of(result.model_dump(by_alias=True, mode="json"))

    return send


async def call(send: Send, ledger: Ledger, caller: Caller, tool: str, **arguments: Any) -> Reply:
    ledger.calls += 1
    reply = await send(tool, arguments)
    if reply.internal is not None:
        ledger.note("internal", caller, f"{tool} {arguments}: {reply.internal}")
    return reply


async def one_call(send: Send, ledger: Ledger, caller: Caller, rng: random.Random, n: int) -> None:
    """One random call, checked against the caller's model."""
    roll = rng.random()
    anonymous_new = not caller.places
    if roll < (0.4 if anonymous_new else 0.08):
        ledger.ops["increment global"] += 1
        reply = await call(send, ledger, caller, "mem", op="increment", scope="global", key=HITS)
        if reply.internal is None:
            if not isinstance(reply.result, int):
                ledger.note("lost", caller, f"increment of the global counter gave {reply}")
            else:
                ledger.hits_returned.append(reply.result)
                caller.hits_seen = max(caller.hits_seen, reply.result)
        return
    if roll < (0.7 if anonymous_new else 0.12):
        ledger.ops["get global"] += 1
        reply = await call(send, ledger, caller, "mem", op="get", scope="global", key=HITS)
        if reply.internal is None:
            # Counters only grow: a read never goes back below what this caller saw before.
            hits = 0 if reply.result == MISSING else reply.result
            if not isinstance(hits, int) or hits < caller.hits_seen:
                ledger.note("lost", caller, f"global counter read {reply}, after {caller.hits_seen}")
            else:
                caller.hits_seen = hits
        return
    if anonymous_new or (caller.refused and roll < 0.16):
        scope = rng.choice(caller.refused)
        ledger.ops["refused"] += 1
        reply = await call(send, ledger, caller, rng.choice(("mem", "mem_twin")), op="get", scope=scope, key="0")
        if reply.code == REFUSED:
            ledger.refused += 1
        elif reply.internal is None:
            ledger.note("leak", caller, f"{scope} scope was not refused: {reply}")
        return
    await private_call(send, ledger, caller, rng, n)


async def private_call(send: Send, ledger: Ledger, caller: Caller, rng: random.Random, n: int) -> None:
    place = rng.choice(caller.places)
    scope, tool = place
    tool = tool or rng.choice(("mem", "mem_twin"))  # user and session scope are the same for both tools
    kept = caller.model.setdefault(place, {})
    op = rng.choices(("set", "get", "increment", "knows", "list", "forget"), (25, 25, 20, 10, 10, 10))[0]
    key = COUNTER if op == "increment" else rng.choice(caller.keys())
    ledger.ops[op] += 1
    arguments: dict[str, Any] = {"op": op, "scope": scope, "key": key}
    if op == "set":
        value = f"{caller.name}|{scope}/{tool}|{key}|{n}"
        ledger.writers[value] = caller.name
        arguments["value"] = value
    reply = await call(send, ledger, caller, tool, **arguments)
    if reply.internal is not None:
        return
    if reply.code is not None:
        ledger.note("lost", caller, f"{op} {key!r} in {scope}/{tool} failed with {reply.code}")
        return
    if op == "set":
        kept[key] = arguments["value"]
        expected: Any = True
    elif op == "get":
        expected = kept.get(key, MISSING)
    elif op == "increment":
        kept[key] = expected = kept.get(key, 0) + 1
    elif op == "knows":
        expected = key in kept
    elif op == "list":
        expected = sorted(kept)
    else:
        expected = kept.pop(key, None) is not None
    if reply.result != expected:
        kind = "leak" if ledger.foreign(caller, reply.result) else "lost"
        ledger.note(kind, caller, f"{op} {key!r} in {scope}/{tool} gave {reply.result!r}, expected {expected!r}")


async def run_caller(send: Send, ledger: Ledger, caller: Caller, index: int) -> None:
    rng = random.Random(SEED * 100 + index)
    for n in range(CALLS):
        await one_call(send, ledger, caller, rng, n)


async def final_check(send: Send, ledger: Ledger, caller: Caller) -> None:
    """After the storm: each place lists exactly the caller's keys and holds its exact count."""
    for place, kept in caller.model.items():
        scope, tool = place
        tool = tool or "mem"
        listed = await call(send, ledger, caller, tool, op="list", scope=scope)
        if listed.internal is None and listed.result != sorted(kept):
            kind = "leak" if ledger.foreign(caller, listed.result) else "lost"
            ledger.note(kind, caller, f"final list of {scope}/{tool}: {listed.result!r}, expected {sorted(kept)!r}")
        counted = await call(send, ledger, caller, tool, op="get", scope=scope, key=COUNTER)
        if counted.internal is None and counted.result != kept.get(COUNTER, MISSING):
            ledger.note(
                "lost", caller, f"final count in {scope}/{tool}: {counted.result!r}, expected {kept.get(COUNTER)}"
            )


@pytest.fixture(params=["memory", "sqlite", "redis"])
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def load_server(store_kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[ServerProcess]:
    """The load server as its own process on 127.0.0.1, on the store under test; killed by PID afterwards."""
    env = {"REMEMBER_SECRET": SECRET, "REMEMBER_STORE": "memory"}
    if store_kind == "sqlite":
        env["REMEMBER_STORE"] = f"sqlite:///{tmp_path / 'load.db'}"
    elif store_kind == "redis":
        env["REMEMBER_STORE"] = request.getfixturevalue("redis_url")
        env[REDIS_PREFIX_ENV] = request.getfixturevalue("redis_prefix")
    with serving(TARGET, cwd=tmp_path, env=env) as server:
        yield server


async def run_load(server: ServerProcess, callers: list[Caller], ledger: Ledger) -> tuple[int, float, Reply]:
    """Every caller's calls at once, then every caller's final check; (load calls, seconds, final global read)."""
    async with AsyncExitStack() as stack:
        senders: list[Send] = []
        for caller in callers:
            if caller.official:
                headers = {} if caller.token is None else {"Authorization": f"Bearer {caller.token}"}
                http = await stack.enter_async_context(httpx2.AsyncClient(headers=headers, timeout=60, verify=False))
                client = Client(streamable_http_client(server.url, http_client=http), mode="legacy")
                senders.append(client_sender(await stack.enter_async_context(client)))
            else:
                senders.append((await stack.enter_async_context(Wire(server.port, caller.token, caller.era))).send)
        started = time.monotonic()
        async with asyncio.TaskGroup() as group:
            for index, (send, caller) in enumerate(zip(senders, callers, strict=True)):
                group.create_task(run_caller(send, ledger, caller, index))
        load_calls, seconds = ledger.calls, time.monotonic() - started
        async with asyncio.TaskGroup() as group:
            for send, caller in zip(senders, callers, strict=True):
                group.create_task(final_check(send, ledger, caller))
        final = await call(senders[0], ledger, callers[0], "mem", op="get", scope="global", key=HITS)
    return load_calls, seconds, final


def check_shared_counter(ledger: Ledger, final: Reply) -> int:
    """The global counter's increments returned 1..total, each exactly once, and it ends at total."""
    total = len(ledger.hits_returned)
    missing = set(range(1, total + 1)) - set(ledger.hits_returned)
    ledger.lost += len(missing) + (final.result != total)
    if missing or final.result != total:
        ledger.problems.append(
            f"global counter: {final.result!r} after {total} increments; missing {sorted(missing)[:9]}"
        )
    return total


async def test_64_callers_never_read_each_other_and_lose_nothing(
    load_server: ServerProcess, store_kind: str, figures: Figures
) -> None:
    callers, ledger = the_callers(), Ledger()

    load_calls, seconds, final = await run_load(load_server, callers, ledger)

    total = check_shared_counter(ledger, final)
    log = load_server.log()
    logged_errors = log.count("Traceback")
    ledger.internal_errors += logged_errors
    kinds = Counter(c.kind for c in callers)
    eras = Counter(c.era for c in callers)
    official = sum(c.official for c in callers)
    ops = ", ".join(f"{count} {op}" for op, count in sorted(ledger.ops.items()))
    figures.record(
        callers=len(callers),
        calls=ledger.calls,
        lost=ledger.lost,
        leaks=ledger.leaks,
        internal_errors=ledger.internal_errors,
        detail=(
            f"{store_kind} store behind a real `mcpkit run` process on 127.0.0.1. {kinds['static']} static-key, "
            f"{kinds['jwt']} JWT (subs with ':', JSON framing, %-escapes, globs, backslashes, lookalike unicode) "
            f"and {kinds['anonymous']} anonymous callers; {eras[MODERN]} on 2026-07-28, {eras[LEGACY]} on 2025-11-25 "
            f"sessions ({official} through the official mcp Client, the rest raw POSTs). {load_calls} calls at once "
            f"in {seconds:.1f} s ({ops}), then {ledger.calls - load_calls} checking calls; {ledger.refused} "
            f"refused as docs/scopes.md says; the global counter took {total} increments from all callers."
        ),
    )
    assert ledger.problems == []
    assert logged_errors == 0, log[-4000:]
    assert (ledger.leaks, ledger.lost, ledger.internal_errors) == (0, 0, 0)
    assert ledger.refused == ledger.ops["refused"]
