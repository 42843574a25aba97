"""Hostile input against the real HTTP app: a clear 4xx or error result, never a 500, never exception text.

Hand-made bad requests in both protocol eras (wrong, missing and extra arguments, 10,000 levels of
nesting, bodies over the limit with and without Content-Length, bytes that are not UTF-8, broken JSON,
batches, wrong Content-Type, values over ``max_value_bytes``), then a bounded hypothesis run over the
JSON-RPC body of ``tools/call``, then the same classics against a real ``python -m mcpkit run`` process,
where uvicorn parses the bytes first. After each batch, a normal call still succeeds.
"""

from __future__ import annotations

import json
import os
import string
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import httpx2
import pytest
from anyio.from_thread import start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import Field

from mcpkit import Server, StaticKeys, ToolContext, app, tool
from mcpkit_remember import RememberPlugin
from reliability.figures import Figures
from reliability.processes import serving as serving_process

MODERN, LEGACY = "2026-07-28", "2025-11-25"
NOUR_KEY = "nour-input-key-0123456789abcdef"
MAX_VALUE_BYTES = 1024
BODY_LIMIT = 4 * 1024 * 1024  # the SDK's StreamableHTTPSessionManager default, which http_app() keeps
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
ACCEPT = {"Accept": "application/json, text/event-stream"}
TESTS_DIR = Path(__file__).resolve().parents[1]

#: Text that only an exception, a traceback or pydantic's own error rendering would put in a response.
EXCEPTION_TEXT = (
    "Traceback (most recent call",
    'File "/',
    "validation error for",
    "validation errors for",
    "errors.pydantic.dev",
    "input_value=",
    "input_type=",
    " object at 0x",
    "Error(",
    "Exception:",
    "RecursionError",
    "UnicodeDecodeError",
)


@tool(name="file_ticket", description="Open a support ticket.")
class FileTicket(ToolContext):
    async def execute(
        self,
        subject: Annotated[str, Field(max_length=80)],
        priority: Literal["low", "normal", "urgent"] = "normal",
        count: Annotated[int, Field(ge=1, le=100)] = 1,
        tags: list[str] | None = None,
    ) -> dict[str, Any]:
        return {"subject": subject, "priority": priority, "count": count, "tags": tags or []}


@tool(name="keep", description="Remember a value for the caller.")
class Keep(ToolContext):
    async def execute(self, key: str, value: Any) -> dict[str, Any]:
        await self.remember.set(key, value, scope="user")
        return {"kept": await self.remember.get(key, scope="user")}


TOOLS = ("file_ticket", "keep")


@app(
    id="hostile-input",
    tools=[FileTicket, Keep],
    plugins=[RememberPlugin.init(type="memory", max_value_bytes=MAX_VALUE_BYTES)],
)
class InputApp: ...


def make_server() -> Server:
    return Server([InputApp], auth=StaticKeys({"nour": NOUR_KEY}))


# -- raw requests ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sent:
    """What one request came back with: enough to judge it."""

    status: int
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def document(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    @property
    def code(self) -> str | int | None:
        """The mcpkit error code of an error result, else the JSON-RPC error code, else None."""
        document = self.document
        if not isinstance(document, dict):
            return None
        result = document.get("result")
        if isinstance(result, dict):
            error = (result.get("_meta") or {}).get("mcpkit/error")
            return error.get("code") if isinstance(error, dict) else None
        error = document.get("error")
        return error.get("code") if isinstance(error, dict) else None


def wire_problems(sent: Sent) -> list[str]:
    """Why ``sent`` is not an acceptable answer to hostile input (empty when it is)."""
    problems = []
    if sent.status >= 500:
        problems.append(f"HTTP {sent.status}")
    if sent.code in ("INTERNAL_ERROR", -32603, 0):
        problems.append(f"internal error code {sent.code!r}")
    text = sent.body.decode("utf-8", "replace")
    problems.extend(f"exception text {marker!r}" for marker in EXCEPTION_TEXT if marker in text)
    return problems


def envelope(method: str, params: Any, request_id: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def era_headers(
    era: str, session_id: str | None, method: str = "tools/call", name: str | None = None
) -> dict[str, str]:
    """The headers of one request in ``era`` (2025-11-25: on ``session_id`` when given)."""
    headers = {**ACCEPT, "Content-Type": "application/json", "Authorization": f"Bearer {NOUR_KEY}"}
    if era == MODERN:
        headers |= {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
        if name is not None:
            headers["Mcp-Name"] = name
    elif session_id is not None:
        headers |= {"MCP-Protocol-Version": LEGACY, "Mcp-Session-Id": session_id}
    return headers


def tool_call(era: str, name: Any, arguments: Any) -> bytes:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if era == MODERN:
        params["_meta"] = META
    return json.dumps(envelope("tools/call", params)).encode()


def raw_tool_call(era: str, name: str, arguments_json: str) -> bytes:
    """A tools/call whose arguments are given as JSON text (for what ``json.dumps`` would refuse to write)."""
    meta = f',"_meta":{json.dumps(META)}' if era == MODERN else ""
    params = f'{{"name":"{name}","arguments":{arguments_json}{meta}}}'
    return f'{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}'.encode()


async def chunks(total: int, size: int = 64 * 1024) -> AsyncIterator[bytes]:
    """A body sent in chunks, with no Content-Length (Transfer-Encoding: chunked on a real socket)."""
    for _ in range(total // size):
        yield b" " * size


def wire(headers: Mapping[str, str | bytes]) -> list[tuple[bytes, bytes]]:
    """Headers as the bytes sent (str as Latin-1, bytes as they are: some tests send bytes that are not text)."""
    return [(k.encode(), v if isinstance(v, bytes) else v.encode("latin-1")) for k, v in headers.items()]


async def post(
    http: httpx2.AsyncClient,
    body: bytes | Callable[[], AsyncIterator[bytes]],
    headers: Mapping[str, str | bytes],
) -> Sent:
    content = body() if callable(body) else body
    response = await http.post("/mcp", content=content, headers=wire(headers))
    return Sent(int(response.status_code), response.content, dict(response.headers))


async def open_session(http: httpx2.AsyncClient) -> str:
    init = envelope(
        "initialize", {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "hostile", "version": "1"}}
    )
    opened = await post(http, json.dumps(init).encode(), era_headers(LEGACY, None))
    assert opened.status == 200, opened.body
    session_id = opened.headers["mcp-session-id"]
    done = await post(http, b'{"jsonrpc":"2.0","method":"notifications/initialized"}', era_headers(LEGACY, session_id))
    assert done.status == 202, done.body
    return session_id


async def a_normal_call_succeeds(http: httpx2.AsyncClient, era: str, session_id: str | None) -> bool:
    sent = await post(
        http,
        tool_call(era, "file_ticket", {"subject": "still serving"}),
        era_headers(era, session_id, name="file_ticket"),
    )
    document = sent.document
    return (
        sent.status == 200
        and isinstance(document, dict)
        and document.get("result", {}).get("structuredContent", {}).get("subject") == "still serving"
    )


@asynccontextmanager
async def serving(server: Server, base_url: str = "http://127.0.0.1:8000") -> AsyncIterator[httpx2.AsyncClient]:
    asgi = server.http_app()
    transport = httpx2.ASGITransport(app=asgi)
    async with asgi.router.lifespan_context(asgi), httpx2.AsyncClient(transport=transport, base_url=base_url) as http:
        yield http


# -- the hand-made cases -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One hostile request: its body for an era, and what a clear refusal looks like (empty: any non-5xx)."""

    name: str
    body: Callable[[str], bytes | Callable[[], AsyncIterator[bytes]]]
    statuses: frozenset[int] = frozenset()
    codes: frozenset[str | int] = frozenset()
    content_type: str | None = "application/json"
    name_header: str | None = "file_ticket"
    headers: Mapping[str, str | bytes] = field(default_factory=dict)


def case(
    name: str,
    body: Callable[[str], bytes | Callable[[], AsyncIterator[bytes]]],
    statuses: tuple[int, ...] = (),
    codes: tuple[str | int, ...] = (),
    **options: Any,
) -> Case:
    return Case(name, body, frozenset(statuses), frozenset(codes), **options)


DEEP_LISTS = "[" * 10_000 + "]" * 10_000
DEEP_OBJECTS = '{"a":' * 10_000 + "1" + "}" * 10_000

CASES = [
    case(
        "an argument of the wrong type",
        lambda e: tool_call(e, "file_ticket", {"subject": 42}),
        (200,),
        ("INVALID_INPUT",),
    ),
    case("a required argument missing", lambda e: tool_call(e, "file_ticket", {}), (200,), ("INVALID_INPUT",)),
    case(
        "an extra argument",
        lambda e: tool_call(e, "file_ticket", {"subject": "x", "admin": True}),
        (200,),
        ("INVALID_INPUT",),
    ),
    case(
        "a string over maxLength",
        lambda e: tool_call(e, "file_ticket", {"subject": "x" * 81}),
        (200,),
        ("INVALID_INPUT",),
    ),
    case(
        "a Literal outside its values",
        lambda e: tool_call(e, "file_ticket", {"subject": "x", "priority": "p0"}),
        (200,),
        ("INVALID_INPUT",),
    ),
    case(
        "an integer of 400 digits",
        lambda e: raw_tool_call(e, "file_ticket", '{"subject":"x","count":' + "9" * 400 + "}"),
        (200,),
        ("INVALID_INPUT",),
    ),
    case(
        "a list of the wrong item type",
        lambda e: tool_call(e, "file_ticket", {"subject": "x", "tags": [1, {}]}),
        (200,),
        ("INVALID_INPUT",),
    ),
    case("arguments that are null", lambda e: tool_call(e, "file_ticket", None), (200,), ("INVALID_INPUT",)),
    case("arguments that are a list", lambda e: tool_call(e, "file_ticket", ["x"]), (200, 400), (-32602,)),
    case("arguments that are a string", lambda e: tool_call(e, "file_ticket", "subject=x"), (200, 400), (-32602,)),
    case(
        "an unknown tool",
        lambda e: tool_call(e, "drop_tables", {}),
        (200,),
        ("UNKNOWN_TOOL",),
        name_header="drop_tables",
    ),
    case("a tool name that is a number", lambda e: tool_call(e, 7, {}), (200, 400), (-32602, -32020), name_header=None),
    case(
        "a value over max_value_bytes",
        lambda e: tool_call(e, "keep", {"key": "k", "value": "x" * MAX_VALUE_BYTES}),
        (200,),
        ("REMEMBER_INVALID",),
        name_header="keep",
    ),
    case(
        "a value nested 65 levels deep",
        lambda e: raw_tool_call(e, "keep", '{"key":"k","value":' + "[" * 65 + "]" * 65 + "}"),
        (200,),
        ("REMEMBER_INVALID",),
        name_header="keep",
    ),
    case(
        "a NaN literal as the value",
        lambda e: raw_tool_call(e, "keep", '{"key":"k","value":NaN}'),
        (200, 400),
        ("REMEMBER_INVALID", -32700),
        name_header="keep",
    ),
    case(
        "a key with a lone surrogate",
        lambda e: raw_tool_call(e, "keep", '{"key":"\\ud800","value":1}'),
        name_header="keep",
    ),
    case(
        "a key with control characters",
        lambda e: tool_call(e, "keep", {"key": "a\x00b\x1b[31m", "value": 1}),
        (200,),
        ("REMEMBER_INVALID",),
        name_header="keep",
    ),
    case(
        "arguments nested 10,000 levels deep ([[[...]]])",
        lambda e: raw_tool_call(e, "file_ticket", DEEP_LISTS),
        (400,),
        (-32700,),
    ),
    case(
        "objects nested 10,000 levels deep", lambda e: raw_tool_call(e, "file_ticket", DEEP_OBJECTS), (400,), (-32700,)
    ),
    case(
        "a body over the 4 MiB limit (Content-Length)",
        lambda e: tool_call(e, "file_ticket", {"subject": "x" * (BODY_LIMIT + 1)}),
        (413,),
    ),
    case("a chunked body over the limit (no Content-Length)", lambda e: lambda: chunks(BODY_LIMIT + 64 * 1024), (413,)),
    case(
        "bytes that are not UTF-8",
        lambda e: tool_call(e, "file_ticket", {"subject": "x"}).replace(b'"x"', b'"\xff\xfe\xc0"'),
        (400,),
        (-32700,),
    ),
    case("random binary", lambda e: bytes(range(256)) * 4, (400,), (-32700,)),
    case("JSON cut off", lambda e: tool_call(e, "file_ticket", {"subject": "x"})[:40], (400,), (-32700,)),
    case("an empty body", lambda e: b"", (400,), (-32700,)),
    case("a JSON string, not an object", lambda e: b'"tools/call"', (400,), (-32600, -32602)),
    case(
        "a JSON-RPC batch",
        lambda e: (
            b"["
            + tool_call(e, "file_ticket", {"subject": "x"})
            + b","
            + tool_call(e, "file_ticket", {"subject": "y"})
            + b"]"
        ),
        (400,),
        (-32600, -32602),
    ),
    case("an empty batch", lambda e: b"[]", (400,), (-32600, -32602)),
    case(
        "jsonrpc 1.0",
        lambda e: tool_call(e, "file_ticket", {"subject": "x"}).replace(b'"2.0"', b'"1.0"'),
        (400,),
        (-32600, -32602),
    ),
    case(
        "an id that is an object",
        lambda e: json.dumps(
            envelope("tools/call", json.loads(tool_call(e, "file_ticket", {}))["params"], {"a": 1})
        ).encode(),
        (202, 400),
    ),
    case(
        "Content-Type text/plain",
        lambda e: tool_call(e, "file_ticket", {"subject": "x"}),
        (400, 415),
        content_type="text/plain",
    ),
    case("no Content-Type", lambda e: tool_call(e, "file_ticket", {"subject": "x"}), (400, 415), content_type=None),
    case(
        "Content-Type multipart/form-data",
        lambda e: b"--b\r\nContent-Disposition: form-data; name=x\r\n\r\ny\r\n--b--",
        (400, 415),
        content_type="multipart/form-data; boundary=b",
    ),
]


#: The classics again, against a real process: there uvicorn reads the bytes and headers first.
PROCESS_CASES = [
    *(c for c in CASES if c.statuses and c.statuses <= {400, 413, 415}),
    case(
        "Latin-1 bytes in Mcp-Name",
        lambda e: tool_call(e, "file_ticket", {"subject": "x"}),
        (200, 400),
        headers={"Mcp-Name": b"ticket\xe9"},
    ),
    case(
        "an Authorization header of 64 KiB",
        lambda e: tool_call(e, "file_ticket", {}),
        (400, 401, 431),
        headers={"Authorization": "Bearer " + "a" * 65_536},
    ),
]


def verdict(case_: Case, sent: Sent) -> list[str]:
    problems = wire_problems(sent)
    if case_.statuses and sent.status not in case_.statuses:
        problems.append(f"HTTP {sent.status}, expected one of {sorted(case_.statuses)}")
    if case_.codes and sent.code not in case_.codes:
        problems.append(f"code {sent.code!r}, expected one of {sorted(map(str, case_.codes))}")
    return problems


def internal(sent: Sent) -> bool:
    return sent.status >= 500 or sent.code in ("INTERNAL_ERROR", -32603, 0)


async def send_case(http: httpx2.AsyncClient, hostile: Case, era: str, session_id: str) -> Sent:
    headers: dict[str, str | bytes] = {**era_headers(era, session_id, name=hostile.name_header)}
    headers.pop("Content-Type")
    if hostile.content_type is not None:
        headers["Content-Type"] = hostile.content_type
    headers.update(hostile.headers)
    return await post(http, hostile.body(era), headers)


async def test_hand_made_hostile_requests_get_a_clear_refusal_in_both_eras_and_the_server_keeps_serving(
    figures: Figures,
) -> None:
    failures: dict[str, list[str]] = {}
    tried = internals = 0
    async with serving(make_server()) as http:
        session_id = await open_session(http)
        for era in (MODERN, LEGACY):
            for hostile in CASES:
                sent = await send_case(http, hostile, era, session_id)
                tried += 1
                internals += internal(sent)
                problems = verdict(hostile, sent)
                if problems:
                    failures[f"{era} / {hostile.name}"] = [*problems, sent.body[:200].decode("utf-8", "replace")]
        serving_after = [await a_normal_call_succeeds(http, era, session_id) for era in (MODERN, LEGACY)]

    figures.record(
        inputs=tried,
        internal_errors=internals,
        detail=f"{len(CASES)} hand-made hostile tools/call requests in both eras (the 2025-11-25 ones on a live "
        "session), in-process through the real HTTP app: each a 4xx or an isError result with an mcpkit code",
    )
    assert not failures, json.dumps(failures, indent=2)
    assert serving_after == [True, True]


async def test_a_2025_11_25_body_that_is_not_json_rpc_gets_fixed_text_not_pydantics_error() -> None:
    async with serving(make_server()) as http:
        session_id = await open_session(http)
        headers = era_headers(LEGACY, session_id)
        cut_off = await post(http, b'{"jsonrpc":"2.0",', headers)
        not_a_message = await post(http, b'{"method":{"secret-looking":"input"}}', headers)

    assert cut_off.status == 400
    assert cut_off.document["error"] == {
        "code": -32700,
        "message": "Parse error: the request body is not valid JSON, or nests too deeply.",
    }
    assert not_a_message.status == 400
    assert not_a_message.document["error"]["message"] == (
        "Invalid request: the body is not a single JSON-RPC request, notification or response object."
    )
    assert b"secret-looking" not in not_a_message.body  # pydantic's text echoed the input back


# -- fuzzing -----------------------------------------------------------------------------------------------------------

HEADER_SAFE = string.ascii_letters + string.digits + "/_-.:"
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=10,
)
REQUEST_IDS = st.one_of(
    st.integers(),
    st.integers(min_value=2**63),
    st.text(max_size=8),
    st.none(),
    st.floats(),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
METHODS = st.sampled_from(
    ["tools/call", "tools/list", "initialize", "ping", "notifications/initialized", "resources/read", "prompts/get"]
) | st.text(max_size=20)
ARGUMENTS = (
    st.fixed_dictionaries(
        {},
        optional={
            "subject": st.text(max_size=90) | JSON_VALUES,
            "priority": st.sampled_from(["low", "normal", "urgent", "p0"]) | JSON_VALUES,
            "count": st.integers() | JSON_VALUES,
            "tags": st.lists(st.text(max_size=5), max_size=3) | JSON_VALUES,
            "key": st.text(max_size=20) | JSON_VALUES,
            "value": JSON_VALUES,
        },
    )
    | JSON_VALUES
)
TICKET_ARGUMENTS = st.fixed_dictionaries(
    {"subject": st.text(max_size=90)},
    optional={
        "priority": st.sampled_from(["low", "normal", "urgent", "p0"]),
        "count": st.integers(-5, 105),
        "tags": st.lists(st.text(max_size=5), max_size=3) | JSON_VALUES,
    },
)
KEEP_ARGUMENTS = st.fixed_dictionaries(
    {"key": st.text(max_size=30), "value": JSON_VALUES | st.text(min_size=1000, max_size=1100)}
)
CALL_PARAMS = st.fixed_dictionaries(
    {"name": st.sampled_from(TOOLS) | st.text(max_size=12) | JSON_VALUES, "arguments": ARGUMENTS},
    optional={"_meta": st.just(META) | JSON_VALUES, "task": JSON_VALUES},
)
MESSAGES = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0") | JSON_VALUES, "method": METHODS, "params": CALL_PARAMS | JSON_VALUES},
    optional={"id": REQUEST_IDS},
)


@dataclass(frozen=True)
class Fuzzed:
    era: str  # MODERN, LEGACY (on a live session) or "legacy, no session"
    body: bytes
    method_header: str | None
    name_header: str | None


@st.composite
def fuzzed_requests(draw: st.DrawFn) -> Fuzzed:
    """Half well-formed ``tools/call`` envelopes with fuzzed names and arguments (they reach the dispatcher),
    a third arbitrary JSON-RPC-ish messages, the rest spliced or random bytes; headers mostly consistent."""
    era = draw(st.sampled_from([MODERN, MODERN, LEGACY, LEGACY, "legacy, no session"]))
    shape = draw(st.sampled_from(["envelope"] * 4 + ["message", "message", "bytes"]))
    if shape == "envelope":
        aim = draw(st.sampled_from(["file_ticket", "keep", "file_ticket", "keep", "any tool", "any name"]))
        name: Any
        arguments: Any
        if aim == "file_ticket":
            name, arguments = aim, draw(TICKET_ARGUMENTS)
        elif aim == "keep":
            name, arguments = aim, draw(KEEP_ARGUMENTS)
        else:
            name = draw(
                st.sampled_from(TOOLS) if aim == "any tool" else st.text(HEADER_SAFE, max_size=12) | JSON_VALUES
            )
            arguments = draw(ARGUMENTS)
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if era == MODERN and draw(st.sampled_from([True] * 9 + [False])):
            params["_meta"] = META
        message: Any = envelope("tools/call", params, draw(st.integers() | st.text(max_size=8)))
    else:
        message = draw(MESSAGES | JSON_VALUES)
    body = json.dumps(message).encode()
    if shape == "bytes":
        if draw(st.booleans()):
            at = draw(st.integers(0, len(body)))
            body = body[:at] + draw(st.binary(min_size=1, max_size=4)) + body[at + draw(st.integers(0, 3)) :]
        else:
            body = draw(st.binary(max_size=300))
    method = message.get("method") if isinstance(message, dict) else None
    params_sent = message.get("params") if isinstance(message, dict) else None
    name_sent = params_sent.get("name") if isinstance(params_sent, dict) else None

    def header(value: object) -> str | None:
        chosen = draw(st.sampled_from(["from the body"] * 8 + ["absent", "other"]))
        if chosen == "absent":
            return None
        if chosen == "other" or not isinstance(value, str) or not value or set(value) - set(HEADER_SAFE):
            return draw(st.sampled_from(["tools/call", "tools/list", "file_ticket", "x"]))
        return value

    return Fuzzed(era, body, header(method), header(name_sent))


async def send_fuzzed(http: httpx2.AsyncClient, request: Fuzzed, session_id: str) -> Sent:
    era = MODERN if request.era == MODERN else LEGACY
    headers = era_headers(era, session_id if request.era == LEGACY else None)
    if era == MODERN:
        headers.pop("Mcp-Method")
        headers |= {k: v for k, v in [("Mcp-Method", request.method_header), ("Mcp-Name", request.name_header)] if v}
    return await post(http, request.body, headers)


def test_fuzzed_json_rpc_bodies_never_get_a_5xx_an_internal_error_or_exception_text(
    figures: Figures, caplog: pytest.LogCaptureFixture
) -> None:
    tried: list[Fuzzed] = []
    statuses: dict[int, int] = {}
    caplog.set_level("ERROR")
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(serving(make_server())) as http:
        session_id = portal.call(open_session, http)

        @settings(
            max_examples=400,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(request=fuzzed_requests())
        def answered_cleanly(request: Fuzzed) -> None:
            sent = portal.call(send_fuzzed, http, request, session_id)
            tried.append(request)
            statuses[sent.status] = statuses.get(sent.status, 0) + 1
            problems = wire_problems(sent)
            assert not problems, (problems, request, sent.body[:300])

        answered_cleanly()
        serving_after = [portal.call(a_normal_call_succeeds, http, era, session_id) for era in (MODERN, LEGACY)]

    logged_errors = [record.getMessage() for record in caplog.records if record.levelname in ("ERROR", "CRITICAL")]
    figures.record(
        inputs=len(tried),
        internal_errors=len(logged_errors),
        detail=f"hypothesis: {len(tried)} fuzzed JSON-RPC bodies (arbitrary params, arguments, methods, ids, spliced "
        f"and random bytes; both eras) in-process; answers by status: {dict(sorted(statuses.items()))}",
    )
    assert serving_after == [True, True]
    assert not logged_errors, logged_errors[:5]
    assert len(tried) >= 300


# -- a real process ----------------------------------------------------------------------------------------------------


async def test_a_real_mcpkit_run_process_refuses_hostile_bytes_with_4xx_and_keeps_serving(
    tmp_path: Path, figures: Figures
) -> None:
    pythonpath = os.pathsep.join(p for p in (str(TESTS_DIR), os.environ.get("PYTHONPATH", "")) if p)
    failures: dict[str, list[str]] = {}
    tried = internals = 0
    target = "reliability.test_hostile_input:make_server"  # the very server of the in-process tests
    with serving_process(target, cwd=tmp_path, env={"PYTHONPATH": pythonpath}) as process:
        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{process.port}", timeout=30) as http:
            session_id = await open_session(http)
            for era in (MODERN, LEGACY):
                for hostile in PROCESS_CASES:
                    sent = await send_case(http, hostile, era, session_id)
                    tried += 1
                    internals += internal(sent)
                    problems = verdict(hostile, sent)
                    if problems:
                        failures[f"{era} / {hostile.name}"] = [*problems, sent.body[:200].decode("utf-8", "replace")]
            serving_after = [await a_normal_call_succeeds(http, era, session_id) for era in (MODERN, LEGACY)]
        alive = process.alive()
        log = process.log()

    figures.record(
        inputs=tried,
        internal_errors=internals,
        detail=f"{len(PROCESS_CASES)} hostile requests in both eras against `python -m mcpkit run` (uvicorn parses "
        "first): 400/413/415 or 401, the process alive and serving afterwards, no traceback in its log",
    )
    assert not failures, json.dumps(failures, indent=2)
    assert serving_after == [True, True]
    assert alive
    assert "Traceback" not in log, log[-2000:]
