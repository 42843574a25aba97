"""The TypeScript SDK v1's own OAuth client signs in to ``python -m mcpkit_helpdesk --oauth`` (issue 27).

The issue's client stopped with "Protected resource http://127.0.0.1:8000/mcp does not match expected
http://localhost:8000/mcp". Here the SDK (1.32.2, pinned with the conformance toolchain), with its own
``OAuthClientProvider`` flow unmodified, meets the 401, reads the metadata, registers, sends the user to the
provider with PKCE and a resource indicator, trades the code and calls a tool that needs ``tickets:write``.
The SDK speaks the 2025-11-25 era only (its newest), so that is the era tested. The person at the browser is
``headless_user.py``, as for the Python client: the script hands it the authorization URL and gets the code back.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest
from headless_user import REDIRECT_URI, HeadlessUser
from oauth_help_desk import HelpDesk, oauth_help_desk

from mcpkit_helpdesk import DEMO_PASSWORDS
from node_toolchain import node_script

HERE = Path(__file__).resolve().parent
NODE_SECONDS = 90.0


@pytest.fixture(scope="module")
def help_desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HelpDesk]:
    with oauth_help_desk(tmp_path_factory.mktemp("oauth-typescript")) as desk:
        yield desk


async def typescript_client(url: str, user: HeadlessUser, ticket_id: str) -> dict[str, Any]:
    """Run ``ts_oauth_client.mjs`` against ``url``, answering its authorization URLs as ``user``: what it said last."""
    node, script = node_script(HERE / "ts_oauth_client.mjs")
    process = await asyncio.create_subprocess_exec(
        str(node),
        str(script),
        url,
        REDIRECT_URI,
        ticket_id,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    said: list[dict[str, Any]] = []
    try:
        async with asyncio.timeout(NODE_SECONDS):
            while line := await process.stdout.readline():
                said.append(json.loads(line))
                if "authorize" in said[-1]:
                    await user.redirect_handler(said[-1]["authorize"])
                    back = await user.callback_handler()
                    process.stdin.write(json.dumps({"code": back.code, "state": back.state}).encode() + b"\n")
                    await process.stdin.drain()
            errors = (await process.stderr.read()).decode(errors="replace")
            await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0, f"the TypeScript client failed: {errors}"
    assert said, errors
    return said[-1]


def claims(token: str) -> dict[str, Any]:
    return dict(jwt.decode(token, options={"verify_signature": False}))


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1"])
async def test_the_typescript_sdk_signs_in_and_sends_a_reply_that_needs_tickets_write(
    help_desk: HelpDesk, host: str
) -> None:
    url = help_desk.url.replace("127.0.0.1", host)
    user = HeadlessUser("sam", DEMO_PASSWORDS["sam"])
    seen = await typescript_client(url, user, "T-6")
    assert seen["protocolVersion"] == "2025-11-25"
    assert seen["saved"] == {"saved": "T-6"}
    assert seen["sent"] == {"sent": True, "text": "Signed in from TypeScript."}
    assert seen["authorizations"] == 1  # signed in once, with the scope the metadata lists
    assert seen["clientId"]  # registered dynamically (RFC 7591)
    assert len(user.pages_seen) == 2  # the sign-in page, then the consent page
    token = claims(seen["accessToken"])
    assert token["sub"] == "sam"
    assert token["iss"] == help_desk.issuer
    assert token["aud"] == url  # the resource indicator for the address the client used (RFC 8707)
    assert "tickets:write" in token["scope"].split()
