"""``send_reply`` asks 2025-11-25 clients on the default server (issue 27): the official Python client in legacy
mode and the TypeScript SDK v1, each against a real ``mcpkit run`` help desk, confirm before the draft goes; a
client that declares no elicitation sends as the tutorial did."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from mcpkit_helpdesk import DEMO_KEYS
from node_toolchain import node_script
from reliability.processes import ServerProcess, serving

HERE = Path(__file__).resolve().parent
DESK = "mcpkit_helpdesk:create_server"  # the demo's own factory: memory store, the demo keys
DRAFT = "Your refund is on its way."
NODE_SECONDS = 60


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with serving(DESK, cwd=tmp_path_factory.mktemp("desk")) as server:
        yield server


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # the client's, for 2025-11-25
@pytest.mark.parametrize(("confirm", "sent", "left"), [(True, True, None), (False, False, DRAFT)])
async def test_the_python_client_in_legacy_mode_is_asked_before_the_reply_goes(
    desk: ServerProcess, confirm: bool, sent: bool, left: str | None
) -> None:
    asked: list[str] = []

    async def elicitation(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": confirm})

    headers = {"Authorization": f"Bearer {DEMO_KEYS['sam']}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(
            streamable_http_client(desk.url, http_client=http), mode="legacy", elicitation_callback=elicitation
        ) as c,
    ):
        await c.call_tool("save_draft", {"ticketId": "T-9", "text": DRAFT})
        result = await c.call_tool("send_reply", {"ticketId": "T-9"})
        draft = await c.call_tool("get_draft", {"ticketId": "T-9"})
    assert asked == [f"Send this reply to T-9?\n\n{DRAFT}"]
    assert result.structured_content == ({"sent": True, "text": DRAFT} if sent else {"sent": False})
    assert draft.structured_content == {"draft": left}


def agent(desk: ServerProcess, key: str, answer: str) -> dict[str, Any]:
    node, script = node_script(HERE / "ts_agent.mjs")
    done = subprocess.run(
        [str(node), str(script), desk.url, key, answer],
        capture_output=True,
        text=True,
        timeout=NODE_SECONDS,
        check=False,
    )
    assert done.returncode == 0, f"{done.stderr}\n{desk.log()}"
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    ("label", "answer", "asked", "sent", "left"),
    [
        ("nour", "yes", True, {"sent": True, "text": DRAFT}, None),
        ("sam", "no", True, {"sent": False}, DRAFT),
        ("nour", "none", False, {"sent": True, "text": DRAFT}, None),  # cannot be asked: sends as before
    ],
)
def test_the_typescript_sdk_is_asked_before_the_reply_goes(
    desk: ServerProcess, label: str, answer: str, asked: bool, sent: dict[str, Any], left: str | None
) -> None:
    seen = agent(desk, DEMO_KEYS[label], answer)
    assert seen["protocolVersion"] == "2025-11-25"
    assert seen["asked"] == ([f"Send this reply to T-4?\n\n{DRAFT}"] if asked else [])
    assert seen["sent"] == sent
    assert seen["left"] == {"draft": left}


MISTYPED = "nour-demo-kye"
WHY = "invalid_token: The bearer token is not a key or token this server accepts."


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
@pytest.mark.parametrize("era", ["2026-07-28", "legacy"])
async def test_the_python_client_with_a_mistyped_key_shows_invalid_token_and_why(desk: ServerProcess, era: str) -> None:
    """Issue 27: it showed only "Server returned an error response"."""
    with pytest.raises(ExceptionGroup) as raised:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {MISTYPED}"}, timeout=30) as http,
            Client(streamable_http_client(desk.url, http_client=http), mode=era) as client,
        ):
            await client.list_tools()
    assert raised.group_contains(MCPError, match=f"^{WHY}$")


def test_the_typescript_sdk_with_a_mistyped_key_shows_invalid_token_and_why(desk: ServerProcess) -> None:
    node, script = node_script(HERE / "ts_wrong_key.mjs")
    done = subprocess.run(
        [str(node), str(script), desk.url, MISTYPED], capture_output=True, text=True, timeout=NODE_SECONDS, check=False
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["connected"] is False
    assert seen["code"] == 401
    assert WHY in seen["message"]  # the SDK puts the 401's body in its message
