"""A bounded hypothesis run over the JSON-RPC body of ``tools/call``: no 5xx, no internal error, no exception text."""

from __future__ import annotations

import json
import string
from dataclasses import dataclass
from typing import Any

import httpx2
import pytest
from anyio.from_thread import start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliability.callers import LEGACY, MODERN
from reliability.figures import Figures
from reliability.hostile import (
    META,
    TOOLS,
    Sent,
    a_normal_call_succeeds,
    envelope,
    era_headers,
    make_server,
    open_session,
    post,
    serving_in_process,
    wire_problems,
)

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
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(serving_in_process(make_server())) as http,
    ):
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
