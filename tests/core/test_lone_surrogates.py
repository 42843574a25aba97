"""A lone surrogate ("\\ud83d", half an emoji) sent as a JSON escape: the same INVALID_INPUT in both eras.

Raw HTTP through the real app, because that is where the two eras differ: the SDK parses a
2025-11-25 body with pydantic's parser (which refuses the escape) and a 2026-07-28 body with
``json.loads`` (which lets it through to the tool). Bodies are written by hand, as a client would
send them; ``json.dumps`` writes the same escapes.
"""

from __future__ import annotations

from typing import Any

import httpx2
import mcp_types as types
import pytest

from core._support import ACCEPT, LEGACY, MODERN, NOUR_KEY, bearer, body_of, open_legacy_session, running
from mcpkit import Server, StaticKeys, ToolContext, app, tool

ERAS = [MODERN, LEGACY]


@tool(name="echo", description="Hands its arguments back, as structured content.")
class Echo(ToolContext):
    async def execute(
        self, text: str = "", items: list[str] | None = None, labels: dict[str, str] | None = None
    ) -> dict[str, Any]:
        return {"text": text, "items": items or [], "labels": labels or {}}


@tool(name="shout", description="Hands its text back in capitals, as text.")
class Shout(ToolContext):
    async def execute(self, text: str) -> str:
        return text.upper()


@app(id="echoes", tools=[Echo, Shout])
class EchoApp: ...


def make_server() -> Server:
    return Server([EchoApp], auth=StaticKeys({"nour": NOUR_KEY}))


def raw_call(era: str, tool_name: str, arguments: str) -> bytes:
    """A tools/call body with ``arguments`` as JSON text, escapes and all."""
    envelope = (
        f',"_meta":{{"io.modelcontextprotocol/protocolVersion":"{MODERN}",'
        '"io.modelcontextprotocol/clientCapabilities":{}}'
        if era == MODERN
        else ""
    )
    params = f'{{"name":"{tool_name}","arguments":{arguments}{envelope}}}'
    return f'{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{params}}}'.encode()


async def send(
    http: httpx2.AsyncClient, era: str, session_id: str, body: bytes, tool_name: str = "echo"
) -> httpx2.Response:
    headers = {**ACCEPT, **bearer(NOUR_KEY), "Content-Type": "application/json"}
    if era == MODERN:
        headers |= {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": tool_name}
    else:
        headers |= {"MCP-Protocol-Version": LEGACY, "Mcp-Session-Id": session_id}
    return await http.post("/mcp", content=body, headers=headers)


def refusal(response: httpx2.Response) -> tuple[str, str]:
    """The mcpkit error code and message of an error result."""
    assert response.status_code == 200, response.text
    result = body_of(response)["result"]
    assert result["isError"] is True, result
    error = result["_meta"]["mcpkit/error"]
    return error["code"], error["message"]


HALF = "half of a UTF-16 pair, such as half an emoji"

CASES = {
    "a lone high surrogate echoed back": ("echo", '{"text":"\\ud83d"}', "text"),
    "a lone low surrogate, upper-case hex": ("echo", '{"text":"a\\uDE00b"}', "text"),
    "a pair in the wrong order": ("echo", '{"text":"\\ude00\\ud83d"}', "text"),
    "a lone surrogate returned as text": ("shout", '{"text":"\\ud83d"}', "text"),
    "inside a list": ("echo", '{"items":["fine","\\ud800"]}', "items.1"),
    "inside an object's value": ("echo", '{"labels":{"team":"\\udfff"}}', "labels.team"),
    "in an object's key": ("echo", '{"labels":{"t\\ud83dm":"blue"}}', "labels (a key)"),
    "in an argument's name": ("echo", '{"te\\ud83dxt":"x"}', "(an argument name)"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
async def test_a_lone_surrogate_in_an_argument_is_invalid_input_naming_it_in_both_eras(
    case: str, caplog: pytest.LogCaptureFixture
) -> None:
    tool_name, arguments, place = CASES[case]
    async with running(make_server().http_app()) as http:
        session_id = await open_legacy_session(http, token=NOUR_KEY)
        answers = [await send(http, era, session_id, raw_call(era, tool_name, arguments), tool_name) for era in ERAS]

    modern, legacy = (refusal(answer) for answer in answers)
    assert modern == legacy
    code, message = modern
    assert code == "INVALID_INPUT"
    assert message == (
        f"Invalid input for tool {tool_name!r}: {place}: holds a lone surrogate ({HALF}); send whole characters. "
        "Fix the arguments and call again."
    )
    assert "Traceback" not in caplog.text
    assert "PydanticSerializationError" not in caplog.text


async def test_every_place_with_a_lone_surrogate_is_named() -> None:
    arguments = '{"text":"\\ud800","items":["\\ud801","ok","\\udc02"],"labels":{"\\ud803":"x"}}'
    async with running(make_server().http_app()) as http:
        session_id = await open_legacy_session(http, token=NOUR_KEY)
        answers = [refusal(await send(http, era, session_id, raw_call(era, "echo", arguments))) for era in ERAS]

    assert answers[0] == answers[1]
    message = answers[0][1]
    for place in ("text:", "items.0:", "items.2:", "labels (a key):"):
        assert place in message
    assert "items.1" not in message


@pytest.mark.parametrize(
    ("arguments", "echoed"),
    [
        ('{"text":"\\ud83d\\ude00"}', "\U0001f600"),  # a whole emoji, escaped as its pair
        ('{"text":"\\\\ud83d"}', "\\ud83d"),  # an escaped backslash: the six characters \ud83d, no surrogate
        ('{"text":"\\\\\\ud83d\\ude00!"}', "\\\U0001f600!"),
        ('{"text":"caf\\u00e9 \\ufffd"}', "caf\u00e9 \ufffd"),
    ],
    ids=["an emoji as a pair", "an escaped backslash", "a backslash, then an emoji", "other escapes"],
)
async def test_whole_characters_still_arrive_intact_in_both_eras(arguments: str, echoed: str) -> None:
    async with running(make_server().http_app()) as http:
        session_id = await open_legacy_session(http, token=NOUR_KEY)
        for era in ERAS:
            response = await send(http, era, session_id, raw_call(era, "echo", arguments))
            result = body_of(response)["result"]
            assert result["isError"] is False, result
            assert result["structuredContent"]["text"] == echoed


@pytest.mark.parametrize(
    ("tool_name", "extra"),
    [("ec\\ud83dho", ""), ("echo", ',"progressToken":"t\\ud83d"')],
    ids=["in the tool name", "in another parameter"],
)
async def test_a_lone_surrogate_outside_the_arguments_is_refused_with_400_in_both_eras(
    tool_name: str, extra: str
) -> None:
    async with running(make_server().http_app()) as http:
        session_id = await open_legacy_session(http, token=NOUR_KEY)
        answers = [
            await send(
                http,
                era,
                session_id,
                raw_call(era, tool_name, "{}").replace(b',"arguments"', f'{extra},"arguments"'.encode()),
            )
            for era in ERAS
        ]

    assert answers[0].json() == answers[1].json()
    assert answers[0].status_code == answers[1].status_code == 400
    error = answers[0].json()["error"]
    assert error["code"] == types.PARSE_ERROR
    assert error["message"].startswith(
        "Invalid text: the request holds a lone surrogate (half of a UTF-16 pair) at params."
    )


async def test_a_body_that_arrives_in_pieces_is_checked_whole() -> None:
    body = raw_call(MODERN, "echo", '{"text":"\\ud83d"}')
    cut = body.index(b"\\ud83d") + 3  # the escape itself is split between two pieces

    async def pieces() -> Any:
        yield body[:cut]
        yield body[cut:]

    async with running(make_server().http_app()) as http:
        headers = {**ACCEPT, **bearer(NOUR_KEY), "Content-Type": "application/json"}
        headers |= {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "echo"}
        response = await http.post("/mcp", content=pieces(), headers=headers)

    assert refusal(response)[0] == "INVALID_INPUT"
