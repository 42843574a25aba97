"""Sign-in as real MCP clients do it, with parts nobody here wrote (issue 11).

``python -m mcpkit_helpdesk --oauth`` runs the help desk beside oidc-provider (the certified OpenID Connect
server, from the npm registry, under Node 22); the official ``mcp`` client's ``OAuthClientProvider``,
unmodified, finds the metadata from the 401, registers, runs the authorization code flow with PKCE and
a resource indicator, and calls tools as Nour and as Sam. The only stand-in is the person at the
browser (``headless_user.py``), who answers the sign-in and consent pages over HTTP.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import urlencode

import httpx2
import jwt
import pytest
from headless_user import REDIRECT_URI, HeadlessUser, SignInRefused
from mcp import Client, MCPError
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from oauth_help_desk import HelpDesk, oauth_help_desk

from mcpkit_helpdesk import DEMO_PASSWORDS
from reliability.processes import free_port

ERAS = ("2026-07-28", "legacy")
CALL_SECONDS = 30.0


@pytest.fixture(scope="module")
def help_desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HelpDesk]:
    with oauth_help_desk(tmp_path_factory.mktemp("oauth")) as desk:
        yield desk


class MemoryTokens:
    """The client's token storage for one test (a real client would keep it on disk)."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


def oauth(url: str, user: HeadlessUser, storage: MemoryTokens) -> OAuthClientProvider:
    metadata = OAuthClientMetadata(
        client_name=f"mcpkit tests ({user.login})",
        redirect_uris=[REDIRECT_URI],  # type: ignore[list-item]  # pydantic parses the string
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(
        url,
        metadata,
        storage,
        redirect_handler=user.redirect_handler,
        callback_handler=user.callback_handler,
    )


@asynccontextmanager
async def signed_in(
    desk: HelpDesk, login: str, era: str, storage: MemoryTokens | None = None, *, url: str | None = None
) -> AsyncIterator[Client]:
    """The official client, signed in as ``login`` through the provider's pages, connected to ``url`` (default: the
    URL the help desk printed)."""
    url = url or desk.url
    user = HeadlessUser(login, DEMO_PASSWORDS[login])
    auth = oauth(url, user, storage or MemoryTokens())
    async with (
        httpx2.AsyncClient(auth=auth, timeout=CALL_SECONDS) as http,
        Client(streamable_http_client(url, http_client=http), mode=era) as client,
    ):
        yield client


async def structured(client: Client, name: str, arguments: dict[str, object]) -> dict[str, object]:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result
    assert isinstance(result.structured_content, dict)
    return result.structured_content


@pytest.mark.parametrize("era", ERAS)
async def test_nour_and_sam_sign_in_and_keep_their_own_signatures(help_desk: HelpDesk, era: str) -> None:
    signatures = {"nour": f"Nour, tier 2 ({era})", "sam": f"Sam, billing ({era})"}
    for login, signature in signatures.items():
        async with signed_in(help_desk, login, era) as client:
            assert await structured(client, "set_signature", {"signature": signature}) == {"signature": signature}
    for login, signature in signatures.items():
        async with signed_in(help_desk, login, era) as client:
            reply = await structured(client, "draft_reply", {"ticketId": "T-1", "text": "Hello"})
            assert reply["reply"] == f"Hello\n\n{signature}"


async def test_the_token_is_a_jwt_for_this_server_from_the_provider(help_desk: HelpDesk) -> None:
    storage = MemoryTokens()
    async with signed_in(help_desk, "nour", "2026-07-28", storage) as client:
        await structured(client, "save_draft", {"ticketId": "T-7", "text": "On its way."})
        # send_reply needs tickets:write: the client asked for what the metadata lists, and consent granted it
        assert await structured(client, "send_reply", {"ticketId": "T-7"}) == {"sent": True, "text": "On its way."}
    assert storage.tokens is not None
    assert storage.client_info is not None
    claims = jwt.decode(storage.tokens.access_token, options={"verify_signature": False})
    assert claims["sub"] == "nour"
    assert claims["iss"] == help_desk.issuer
    assert claims["aud"] == help_desk.url  # the resource indicator (RFC 8707) the client sent
    assert "tickets:write" in claims["scope"].split()
    assert storage.client_info.client_id  # registered dynamically (RFC 7591)
    assert storage.tokens.refresh_token


async def test_a_stored_token_is_reused_without_signing_in_again(help_desk: HelpDesk) -> None:
    storage = MemoryTokens()
    async with signed_in(help_desk, "sam", "2026-07-28", storage) as client:
        await structured(client, "work_on", {"ticketId": "T-3"})
    user = HeadlessUser("sam", "not-asked-for")  # would fail if the pages came up again
    async with (
        httpx2.AsyncClient(auth=oauth(help_desk.url, user, storage), timeout=CALL_SECONDS) as http,
        Client(streamable_http_client(help_desk.url, http_client=http), mode="2026-07-28") as client,
    ):
        assert (await structured(client, "current_ticket", {}))["ticketId"] == "T-3"
    assert user.pages_seen == []


async def test_a_wrong_password_gets_no_token(help_desk: HelpDesk) -> None:
    user = HeadlessUser("nour", "sam-demo-password")
    storage = MemoryTokens()
    with pytest.raises(Exception) as raised:  # noqa: PT011 (the client wraps it; found below)
        async with (
            httpx2.AsyncClient(auth=oauth(help_desk.url, user, storage), timeout=CALL_SECONDS) as http,
            Client(streamable_http_client(help_desk.url, http_client=http), mode="2026-07-28") as client,
        ):
            await client.list_tools()
    refusals = [error for error in leaves(raised.value) if isinstance(error, SignInRefused)]
    assert refusals
    assert "sign-in page came back for 'nour'" in str(refusals[0])
    assert storage.tokens is None


def leaves(error: BaseException) -> Iterator[BaseException]:
    """The exceptions inside ``error``'s groups, and their causes."""
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from leaves(inner)
        return
    yield error
    if error.__cause__ is not None:
        yield from leaves(error.__cause__)


async def test_without_a_token_the_server_points_at_its_metadata(help_desk: HelpDesk) -> None:
    async with httpx2.AsyncClient(timeout=CALL_SECONDS) as http:
        refused = await http.post(help_desk.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert refused.status_code == 401
        metadata_url = f"{help_desk.url.rsplit('/mcp', 1)[0]}/.well-known/oauth-protected-resource/mcp"
        assert f'resource_metadata="{metadata_url}"' in refused.headers["www-authenticate"]
        metadata = (await http.get(metadata_url)).json()
        assert metadata["authorization_servers"] == [help_desk.issuer]
        discovery = (await http.get(f"{help_desk.issuer}/.well-known/openid-configuration")).json()
        assert discovery["registration_endpoint"]
        assert "S256" in discovery["code_challenge_methods_supported"]


def test_without_npm_the_oauth_mode_says_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from mcpkit_helpdesk.__main__ import main

    monkeypatch.setenv("MCPKIT_IDENTITY_PROVIDER_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("PATH", str(tmp_path))  # no npm on it
    assert main(["--oauth", "--port", str(free_port())]) == 1
    error = capsys.readouterr().err
    assert "the demo identity provider cannot run" in error
    assert "npm is not on PATH" in error


def audience(storage: MemoryTokens) -> object:
    assert storage.tokens is not None
    return jwt.decode(storage.tokens.access_token, options={"verify_signature": False})["aud"]


@pytest.mark.parametrize("era", ERAS)
async def test_a_client_that_connects_as_localhost_signs_in_there(help_desk: HelpDesk, era: str) -> None:
    """Issue 27: the client used to stop at "Protected resource http://127.0.0.1:.../mcp does not match expected
    http://localhost:.../mcp"; the metadata now names the address it used, and the token is asked for it."""
    storage = MemoryTokens()
    async with signed_in(help_desk, "sam", era, storage, url=help_desk.at_localhost) as client:
        await structured(client, "save_draft", {"ticketId": "T-5", "text": "Done."})
        assert await structured(client, "send_reply", {"ticketId": "T-5"}) == {"sent": True, "text": "Done."}
    assert audience(storage) == help_desk.at_localhost
    assert f"It answers as {help_desk.at_localhost}" in help_desk.output.read_text()  # said at start


async def test_a_token_asked_for_localhost_is_refused_at_127_0_0_1_and_the_client_signs_in_again(
    help_desk: HelpDesk,
) -> None:
    storage = MemoryTokens()
    async with signed_in(help_desk, "nour", "2026-07-28", storage, url=help_desk.at_localhost) as client:
        await structured(client, "work_on", {"ticketId": "T-8"})
    assert storage.tokens is not None
    localhost_token = storage.tokens.access_token
    async with httpx2.AsyncClient(timeout=CALL_SECONDS) as http:
        refused = await http.post(
            help_desk.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Authorization": f"Bearer {localhost_token}", "MCP-Protocol-Version": "2026-07-28"},
        )
    assert refused.status_code == 401
    assert refused.json()["error"]["data"]["error_description"].endswith(f"tokens here must be for {help_desk.url}")
    # the official client, holding the localhost token, meets that 401 at 127.0.0.1 and signs in for this address
    user = HeadlessUser("nour", DEMO_PASSWORDS["nour"])
    async with (
        httpx2.AsyncClient(auth=oauth(help_desk.url, user, storage), timeout=CALL_SECONDS) as http,
        Client(streamable_http_client(help_desk.url, http_client=http), mode="2026-07-28") as client,
    ):
        assert (await structured(client, "current_ticket", {}))["ticketId"] == "T-8"  # the same Nour
    assert user.pages_seen  # it signed in again
    assert audience(storage) == help_desk.url


@pytest.mark.parametrize("era", ERAS)
async def test_a_mistyped_token_shows_invalid_token_and_why_in_the_official_client(
    help_desk: HelpDesk, era: str
) -> None:
    """Issue 27: the client showed only "Server returned an error response"."""
    with pytest.raises(ExceptionGroup) as raised:
        async with (
            httpx2.AsyncClient(headers={"Authorization": "Bearer eyJ-mistyped"}, timeout=CALL_SECONDS) as http,
            Client(streamable_http_client(help_desk.url, http_client=http), mode=era) as client,
        ):
            await client.list_tools()
    assert raised.group_contains(MCPError, match=r"^invalid_token: The bearer token (was refused|is not)")


async def ask_without_scope(
    desk: HelpDesk, http: httpx2.AsyncClient, user: HeadlessUser, sent_as: str
) -> dict[str, str]:
    """Register a client, send an authorization request without ``scope`` as ``sent_as`` says, answer the pages as
    ``user``, and trade the code for tokens: the token response."""
    registered = await http.post(
        f"{desk.issuer}/reg", json={"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"}
    )
    client_id = registered.json()["client_id"]
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    request = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT_URI,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": desk.url,
        "state": "no-scope",
    }  # and no "scope"
    if sent_as == "GET /auth":
        await user.redirect_handler(f"{desk.issuer}/auth?{urlencode(request)}")
    elif sent_as == "POST /auth":
        await user.submit(f"{desk.issuer}/auth", request)
    else:  # a pushed authorization request (RFC 9126), then /auth with the request_uri it answered
        pushed = await http.post(f"{desk.issuer}/request", data=request)
        assert pushed.status_code == 201, pushed.text
        query = {"client_id": client_id, "request_uri": pushed.json()["request_uri"]}
        await user.redirect_handler(f"{desk.issuer}/auth?{urlencode(query)}")
    form = {
        "grant_type": "authorization_code",
        "code": (await user.callback_handler()).code,
        "redirect_uri": REDIRECT_URI,
        "client_id": client_id,
        "code_verifier": verifier,
        "resource": desk.url,
    }
    tokens: dict[str, str] = (await http.post(f"{desk.issuer}/token", data=form)).json()
    return tokens


@pytest.mark.parametrize("sent_as", ["GET /auth", "POST /auth", "POST /request"])
async def test_a_request_without_scope_is_granted_the_scopes_the_metadata_lists(
    help_desk: HelpDesk, sent_as: str
) -> None:
    """Issue 27: oidc-provider answered an authorization request without ``scope`` with a bare access_denied,
    whether its parameters came in the query, in a form (OAuth 2.0 allows POST) or pushed beforehand."""
    user = HeadlessUser("sam", DEMO_PASSWORDS["sam"])
    async with httpx2.AsyncClient(timeout=CALL_SECONDS) as http:
        metadata_url = help_desk.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
        scopes_supported = (await http.get(metadata_url)).json()["scopes_supported"]
        tokens = await ask_without_scope(help_desk, http, user, sent_as)
    assert tokens["scope"].split() == scopes_supported == ["tickets:write"]
    claims = jwt.decode(tokens["access_token"], options={"verify_signature": False})
    assert claims["aud"] == help_desk.url
    consent = user.page_texts[-1]
    assert re.findall(r"<li>([^<]*)</li>", consent) == ["tickets:write"]  # each scope once


async def test_an_authorization_request_that_is_not_a_form_is_refused_saying_so(help_desk: HelpDesk) -> None:
    async with httpx2.AsyncClient(timeout=CALL_SECONDS) as http:
        refused = await http.post(f"{help_desk.issuer}/auth", json={"response_type": "code"})
        too_long = await http.post(f"{help_desk.issuer}/auth", data={"state": "x" * 9000})
    assert refused.status_code == too_long.status_code == 400
    assert refused.json() == {
        "error": "invalid_request",
        "error_description": "POST /auth takes a form (Content-Type: application/x-www-form-urlencoded), "
        "not application/json",
    }
    assert too_long.json()["error_description"] == (
        "the form sent to POST /auth is over 8192 bytes; push a longer one to POST /request"
    )


def test_a_first_start_says_it_is_installing_the_provider(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], help_desk: HelpDesk
) -> None:
    from mcpkit_helpdesk.__main__ import main

    monkeypatch.setenv("MCPKIT_IDENTITY_PROVIDER_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("PATH", str(tmp_path))  # no npm on it: the install is announced, then fails saying why
    assert main(["--oauth", "--port", str(free_port())]) == 1
    error = capsys.readouterr().err
    assert error.startswith("mcpkit-helpdesk: Installing the demo identity provider, once: oidc-provider 9.13.3")
    assert str(tmp_path / "empty-cache") in error
    assert "npm is not on PATH" in error
    assert "Installing" not in help_desk.output.read_text()  # an installed provider starts without a word of it


def test_the_provider_and_the_help_desk_on_one_port_is_refused_before_anything_starts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from mcpkit_helpdesk.__main__ import main

    port = free_port()
    assert main(["--oauth", "--port", str(port), "--identity-port", str(port)]) == 2
    error = capsys.readouterr().err
    assert error == (
        f"mcpkit-helpdesk: --identity-port {port} is the help desk's own --port: the identity provider needs a port "
        "of its own (by default 9400).\n"
    )
