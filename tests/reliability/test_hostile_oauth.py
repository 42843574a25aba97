"""Hostile sign-ins against a server that takes OAuth tokens (issue 11), through the real HTTP app.

A token for another resource, a token from an unknown issuer, one from a second provider with the same
``sub``, a missing scope, a scope taken away at refresh, a revoked opaque token, a forged ``Origin`` and a
burst over a rate limit: each is refused with its coded answer, no refused call reaches a tool, and what
the allowed calls kept is all there, once.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any, ClassVar

import jwt
import pytest

from auth.introspection_server import CLIENT, IntrospectionServer
from mcpkit import IntrospectionAuth, JWTAuth, Server, ToolContext, app, tool
from mcpkit_remember import RememberPlugin
from reliability.callers import LEGACY, MODERN
from reliability.figures import Figures
from reliability.hostile import META, open_session, post, serving_in_process

URL = "http://127.0.0.1:8000/mcp"
STAFF, PARTNERS, OPAQUE = "https://staff.example.test", "https://partners.example.test", "https://opaque.example.test"
STAFF_SECRET = "staff-signing-secret-0123456789abcdef0123"
PARTNER_SECRET = "partner-signing-secret-0123456789abcdef01"


@tool(name="note", description="Adds a line to the caller's notes; returns them.", rate_limit="5/minute")
class Note(ToolContext):
    reached: ClassVar[list[str | None]] = []

    async def execute(self, line: str) -> dict[str, Any]:
        type(self).reached.append(self.caller.user_id)
        lines = await self.remember.update("notes", lambda kept: [*(kept or []), line], scope="user")
        return {"notes": lines}


@tool(name="close_ticket", description="Closes a ticket.", scopes=["tickets:write"])
class CloseTicket(ToolContext):
    async def execute(self, ticket: str) -> dict[str, Any]:
        Note.reached.append(self.caller.user_id)
        closed = await self.remember.update("closed", lambda kept: [*(kept or []), ticket], scope="user")
        return {"closed": closed}


@app(id="oauth-hostile", tools=[Note, CloseTicket], plugins=[RememberPlugin.init(type="memory")])
class OAuthApp: ...


@pytest.fixture
def provider() -> Iterator[IntrospectionServer]:
    server = IntrospectionServer()
    yield server
    server.close()


def make_server(provider: IntrospectionServer) -> Server:
    opaque = IntrospectionAuth(
        provider.url, client_id=CLIENT[0], client_secret=CLIENT[1], issuer=OPAQUE, cache_seconds=0
    )
    staff, partners = JWTAuth(secret=STAFF_SECRET, issuer=STAFF), JWTAuth(secret=PARTNER_SECRET, issuer=PARTNERS)
    return Server([OAuthApp], auth=[staff, partners, opaque], resource_url=URL)


def token(secret: str, issuer: str, sub: str = "nour", **claims: Any) -> str:
    full = {"sub": sub, "iss": issuer, "aud": URL, "exp": int(time.time()) + 600, "scope": "tickets:write", **claims}
    return jwt.encode(full, secret, algorithm="HS256")


async def call(http: Any, bearer: str, name: str, arguments: dict[str, Any], era: str, **headers: str) -> Any:
    """One tools/call in ``era`` (a 2025-11-25 call on a session opened with the same token)."""
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    sent = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    sent |= {"Authorization": f"Bearer {bearer}", **headers}
    if era == MODERN:
        message["params"]["_meta"] = META  # type: ignore[index]
        sent |= {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": name}
    else:
        init = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "hostile", "version": "1"}}
        opened = await post(
            http, json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}).encode(), sent
        )
        if opened.status != 200:
            return opened  # refused at the door: the session never opens
        sent |= {"Mcp-Session-Id": await open_session(http, f"Bearer {bearer}"), "MCP-Protocol-Version": LEGACY}
    return await post(http, json.dumps(message).encode(), sent)


def tool_error(sent: Any) -> str | None:
    """The coded tool error of a tools/call answered 200, else None."""
    if sent.status != 200:
        return None
    result = json.loads(sent.body)["result"]
    return str(result["_meta"]["mcpkit/error"]["code"]) if result.get("isError") else None


@pytest.mark.parametrize("era", [MODERN, LEGACY])
async def test_tokens_for_another_resource_issuer_or_scope_are_refused_and_reach_no_tool(
    provider: IntrospectionServer, era: str, figures: Figures
) -> None:
    Note.reached.clear()
    refused = {
        "for another resource": (token(STAFF_SECRET, STAFF, aud="https://billing.example.test/mcp"), 401),
        "from an unknown issuer": (token(STAFF_SECRET, "https://evil.example.test"), 401),
        "signed by one provider, claiming the other": (token(STAFF_SECRET, PARTNERS), 401),
        "a sub claiming a namespace": (token(STAFF_SECRET, STAFF, sub=f"iss:{PARTNERS}#nour"), 401),
        "without the tool's scope": (token(STAFF_SECRET, STAFF, scope="tickets:read"), 403),
    }
    calls = 0
    async with serving_in_process(make_server(provider)) as http:
        answers = {}
        for name, (bearer, _) in refused.items():
            answers[name] = await call(http, bearer, "close_ticket", {"ticket": "T-1"}, era)
            calls += 1
        leaks = len(Note.reached)
        allowed = await call(http, token(STAFF_SECRET, STAFF), "close_ticket", {"ticket": "T-2"}, era)
        calls += 1
        downgraded = await call(
            http, token(STAFF_SECRET, STAFF, scope="tickets:read"), "close_ticket", {"ticket": "T-3"}, era
        )
        again = await call(http, token(STAFF_SECRET, STAFF), "close_ticket", {"ticket": "T-4"}, era)
        calls += 2
    figures.record(
        inputs=len(refused) + 1,
        calls=calls,
        leaks=leaks + (downgraded.status != 403),
        lost=0 if json.loads(again.body)["result"]["structuredContent"]["closed"] == ["T-2", "T-4"] else 1,
        detail="tokens for another resource, from an unknown issuer, signed by one provider but claiming the other, "
        "with a reserved sub, without the scope, and with the scope taken away at refresh: 401 or 403 "
        "insufficient_scope, none reaches the tool; the allowed writes are all kept, once",
    )
    assert {name: answers[name].status for name in refused} == {name: status for name, (_, status) in refused.items()}
    assert 'error="insufficient_scope"' in answers["without the tool's scope"].headers["www-authenticate"]
    assert leaks == 0, Note.reached
    assert allowed.status == 200
    assert downgraded.status == 403
    assert json.loads(again.body)["result"]["structuredContent"]["closed"] == ["T-2", "T-4"]


async def test_another_providers_user_with_the_same_sub_and_a_revoked_opaque_token_reach_nothing_of_nours(
    provider: IntrospectionServer, figures: Figures
) -> None:
    Note.reached.clear()
    expires = int(time.time()) + 600
    provider.answers["opaque"] = {"active": True, "sub": "nour", "iss": OPAQUE, "aud": URL, "exp": expires}
    calls = 0
    async with serving_in_process(make_server(provider)) as http:
        staff = await call(http, token(STAFF_SECRET, STAFF), "note", {"line": "staff line"}, MODERN)
        partner = await call(http, token(PARTNER_SECRET, PARTNERS), "note", {"line": "partner line"}, MODERN)
        opaque = await call(http, "opaque", "note", {"line": "opaque line"}, MODERN)
        provider.answers["opaque"] = {"active": False}  # revoked at the provider
        revoked = await call(http, "opaque", "note", {"line": "after revocation"}, MODERN)
        calls += 4
    kept = {
        name: json.loads(sent.body)["result"]["structuredContent"]["notes"]
        for name, sent in (("staff", staff), ("partner", partner), ("opaque", opaque))
    }
    figures.record(
        callers=3,
        calls=calls,
        leaks=sum(len(lines) != 1 for lines in kept.values()) + (revoked.status != 401),
        detail="the same sub from two JWT providers and an introspected one: three users with one note each; "
        "the opaque token revoked at the provider is refused at the next call (cache_seconds=0)",
    )
    assert kept == {"staff": ["staff line"], "partner": ["partner line"], "opaque": ["opaque line"]}
    assert revoked.status == 401
    assert Note.reached == ["nour", f"iss:{PARTNERS}#nour", f"iss:{OPAQUE}#nour"]


async def test_a_forged_origin_is_refused_and_a_burst_over_the_rate_limit_keeps_exactly_what_was_allowed(
    provider: IntrospectionServer, figures: Figures
) -> None:
    Note.reached.clear()
    bearer = token(STAFF_SECRET, STAFF)
    calls = 0
    async with serving_in_process(make_server(provider)) as http:
        forged = [
            await call(http, bearer, "note", {"line": "from a page"}, era, Origin="https://evil.example.test")
            for era in (MODERN, LEGACY)
        ]
        burst = [await call(http, bearer, "note", {"line": f"line {n}"}, MODERN) for n in range(20)]
        calls += 22
    codes = [tool_error(sent) for sent in burst]
    allowed = [sent for sent in burst if tool_error(sent) is None]
    kept = json.loads(allowed[-1].body)["result"]["structuredContent"]["notes"]
    figures.record(
        calls=calls,
        leaks=sum(sent.status != 403 for sent in forged),
        lost=5 - len(kept),  # the limit's 5 calls, each kept once
        detail="a forged Origin in both eras: 403; 20 calls against a 5/minute limit: 5 kept in order, 15 "
        "RATE_LIMITED with a retry hint, nothing stored twice",
    )
    assert [sent.status for sent in forged] == [403, 403]
    assert codes == [None] * 5 + ["RATE_LIMITED"] * 15
    assert kept == [f"line {n}" for n in range(5)]
    assert Note.reached == ["nour"] * 5
    assert json.loads(burst[-1].body)["result"]["_meta"]["mcpkit/error"]["retry_after_seconds"] > 0
