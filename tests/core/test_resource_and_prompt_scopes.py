"""Scopes on resources and prompts (issues 11 and 12): reading a resource or getting a prompt whose scopes the token
lacks is 403 insufficient_scope naming them (step-up) in both eras, before anything runs; where the gate cannot see
the request, the handler refuses it itself; the metadata lists every scope; static keys are not limited."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import jwt
import pytest
from mcp.client.auth.utils import extract_scope_from_www_auth

import mcpkit.auth._gate as gate
from core._support import (
    ACCEPT,
    JWT_SECRET,
    NOUR_KEY,
    URL,
    body_of,
    open_legacy_session,
    post_modern,
    running,
)
from mcpkit import JWTAuth, PromptContext, ResourceContext, Server, StaticKeys, app, prompt, resource

ISSUER = "http://127.0.0.1:9000/"


@resource(uri="tickets://internal-notes", name="internal-notes", scopes=["notes:read"])
class InternalNotes(ResourceContext):
    async def read(self) -> str:
        return "internal"


@resource(uri="tickets://{number}/audit", name="audit", scopes=["audit:read"])
class Audit(ResourceContext):
    async def read(self, number: int) -> str:
        return f"audit of {number}"


@resource(uri="tickets://faq", name="faq")
class Faq(ResourceContext):
    async def read(self) -> str:
        return "faq"


@prompt(name="escalate", description="Escalate a ticket.", scopes=["tickets:escalate"])
class Escalate(PromptContext):
    async def render(self) -> str:
        return "Escalate it."


@app(id="tickets", resources=[InternalNotes, Audit, Faq], prompts=[Escalate])
class TicketsApp: ...


def make_server() -> Server:
    auth = [JWTAuth(secret=JWT_SECRET, issuer=ISSUER), StaticKeys({"nour": NOUR_KEY})]
    return Server([TicketsApp], auth=auth, resource_url=URL)


def token(scope: str) -> str:
    claims: Mapping[str, Any] = {"sub": "sam", "iss": ISSUER, "aud": URL, "exp": int(time.time()) + 600, "scope": scope}
    return jwt.encode(dict(claims), JWT_SECRET, algorithm="HS256")


REQUESTS = [
    ("resources/read", {"uri": "tickets://internal-notes"}, "notes:read", "Reading tickets://internal-notes"),
    ("resources/read", {"uri": "tickets://7/audit"}, "audit:read", "Reading tickets://7/audit"),
    ("prompts/get", {"name": "escalate"}, "tickets:escalate", "The prompt 'escalate'"),
]


@pytest.mark.parametrize(("method", "params", "scope", "what"), REQUESTS)
async def test_2026_07_28_without_the_scope_is_403_and_with_it_the_request_runs(
    method: str, params: dict[str, Any], scope: str, what: str
) -> None:
    name = params.get("uri") or params.get("name")
    async with running(make_server().http_app()) as http:
        refused = await post_modern(http, method, params, token=token("other"), name=name)
        assert refused.status_code == 403
        assert extract_scope_from_www_auth(refused) == scope
        assert refused.json()["error"]["data"]["error_description"].startswith(
            f"{what} needs the OAuth scope(s) {scope}"
        )
        allowed = await post_modern(http, method, params, token=token(scope), name=name)
        assert allowed.status_code == 200, allowed.text
        assert "result" in body_of(allowed)
        keys = await post_modern(http, method, params, token=NOUR_KEY, name=name)
        assert "result" in body_of(keys)  # static keys are not limited by scope


@pytest.mark.parametrize(("method", "params", "scope", "what"), REQUESTS)
async def test_2025_11_25_reads_the_body_the_same_way(
    method: str, params: dict[str, Any], scope: str, what: str
) -> None:
    async with running(make_server().http_app()) as http:
        bearer = token("other")
        session = await open_legacy_session(http, token=bearer)
        headers = {**ACCEPT, "Authorization": f"Bearer {bearer}", "Mcp-Session-Id": session}
        message = {"jsonrpc": "2.0", "id": 5, "method": method, "params": params}
        refused = await http.post("/mcp", json=message, headers=headers)
        assert refused.status_code == 403
        assert extract_scope_from_www_auth(refused) == scope


async def test_an_unscoped_resource_and_the_metadata() -> None:
    async with running(make_server().http_app()) as http:
        faq = await post_modern(http, "resources/read", {"uri": "tickets://faq"}, token=token(""), name="tickets://faq")
        assert body_of(faq)["result"]["contents"][0]["text"] == "faq"
        metadata = (await http.get("/.well-known/oauth-protected-resource/mcp")).json()
    assert metadata["scopes_supported"] == ["audit:read", "notes:read", "tickets:escalate"]


async def test_where_the_gate_cannot_see_the_request_the_handler_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    async def blind(scope: Any, receive: Any, limit: int) -> tuple[None, None, Any]:
        return None, None, receive

    monkeypatch.setattr(gate, "_called", blind)
    async with running(make_server().http_app()) as http:
        for method, params, scope, what in REQUESTS:
            name = params.get("uri") or params.get("name")
            error = body_of(await post_modern(http, method, params, token=token("other"), name=name))["error"]
            assert error["data"] == {"code": "INSUFFICIENT_SCOPE"}
            assert error["message"].startswith(f"{what} needs the OAuth scope(s) {scope}")
