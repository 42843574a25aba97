"""Hostile input against the real HTTP app: a clear 4xx or error result, never a 500, never exception text.

Hand-made bad requests in both protocol eras (wrong, missing and extra arguments, 10,000 levels of
nesting, bodies over the limit with and without Content-Length, bytes that are not UTF-8, broken JSON,
batches, wrong Content-Type, values over ``max_value_bytes``), then the same classics against a real
``python -m mcpkit run`` process, where uvicorn parses the bytes first. After each batch, a normal call
still succeeds. The hypothesis run over the JSON-RPC body is in test_fuzz.py.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from reliability.callers import LEGACY, MODERN
from reliability.figures import Figures
from reliability.hostile import (
    BODY_LIMIT,
    MAX_VALUE_BYTES,
    TESTS_DIR,
    Sent,
    a_normal_call_succeeds,
    chunks,
    envelope,
    era_headers,
    make_server,
    open_session,
    post,
    raw_tool_call,
    serving_in_process,
    tool_call,
    wire_problems,
)
from reliability.processes import serving

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
        (200,),
        ("INVALID_INPUT",),
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


async def attack(http: httpx2.AsyncClient, cases: list[Case]) -> tuple[int, int, dict[str, list[str]], list[bool]]:
    """Send every case in both eras (2025-11-25 on a live session), then one normal call per era.

    Returns (requests sent, internal errors, failed verdicts by era and case, whether each era still serves).
    """
    failures: dict[str, list[str]] = {}
    tried = internals = 0
    session_id = await open_session(http)
    for era in (MODERN, LEGACY):
        for hostile in cases:
            sent = await send_case(http, hostile, era, session_id)
            tried += 1
            internals += internal(sent)
            problems = verdict(hostile, sent)
            if problems:
                failures[f"{era} / {hostile.name}"] = [*problems, sent.body[:200].decode("utf-8", "replace")]
    serving_after = [await a_normal_call_succeeds(http, era, session_id) for era in (MODERN, LEGACY)]
    return tried, internals, failures, serving_after


async def test_hand_made_hostile_requests_get_a_clear_refusal_in_both_eras_and_the_server_keeps_serving(
    figures: Figures,
) -> None:
    async with serving_in_process(make_server()) as http:
        tried, internals, failures, serving_after = await attack(http, CASES)

    figures.record(
        inputs=tried,
        internal_errors=internals,
        detail=f"{len(CASES)} hand-made hostile tools/call requests in both eras (the 2025-11-25 ones on a live "
        "session), in-process through the real HTTP app: each a 4xx or an isError result with an mcpkit code",
    )
    assert not failures, json.dumps(failures, indent=2)
    assert serving_after == [True, True]


async def test_a_2025_11_25_body_that_is_not_json_rpc_gets_fixed_text_not_pydantics_error() -> None:
    async with serving_in_process(make_server()) as http:
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


# -- a real process ----------------------------------------------------------------------------------------------------


async def test_a_real_mcpkit_run_process_refuses_hostile_bytes_with_4xx_and_keeps_serving(
    tmp_path: Path, figures: Figures
) -> None:
    pythonpath = os.pathsep.join(p for p in (str(TESTS_DIR), os.environ.get("PYTHONPATH", "")) if p)
    target = "reliability.hostile:make_server"  # the very server of the in-process tests
    with serving(target, cwd=tmp_path, env={"PYTHONPATH": pythonpath}) as process:
        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{process.port}", timeout=30) as http:
            tried, internals, failures, serving_after = await attack(http, PROCESS_CASES)
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
