"""Resource subscriptions are bounded (issue 29, point 4): anonymous 2025-11-25 sessions subscribing to 60 KiB URIs
held 470 MB with 3,000 of them, and kept it. A URI is at most ``max_uri_chars`` long; a session, a caller (an
anonymous one by address) and the server hold at most so many subscriptions; a session that ends drops its own.
Through the real HTTP app with the official client."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx2
import pytest
from listen_limits_server import KEYS as LISTEN_KEYS
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from mcpkit import ConfigurationError, ResourceContext, Server, SubscriptionLimits, app, resource
from reliability.processes import serving

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

LIMITS = SubscriptionLimits(max_uri_chars=200, per_session=3, per_caller=5, total=8)


@resource(uri="notes://{key}", name="note")
class Note(ResourceContext):
    async def read(self, key: str) -> str:
        return key


@app(id="notes", resources=[Note])
class Notes: ...


@contextlib.asynccontextmanager
async def served(server: Server) -> AsyncIterator[httpx2.AsyncClient]:
    web = server.http_app()
    async with web.router.lifespan_context(web):
        transport = httpx2.ASGITransport(app=web, client=("127.0.0.1", 4000))
        async with httpx2.AsyncClient(transport=transport, timeout=30) as http:
            yield http


def session(http: httpx2.AsyncClient) -> Client:
    return Client(streamable_http_client("http://127.0.0.1:8000/mcp", http_client=http), mode="legacy")


async def refusal(client: Client, uri: str) -> str:
    with pytest.raises(MCPError) as refused:
        await client.subscribe_resource(uri)
    assert refused.value.error.code == -32602
    return refused.value.error.message


async def test_a_uri_past_max_uri_chars_is_refused_with_the_limit() -> None:
    server = Server([Notes], allow_anonymous=True, subscription_limits=LIMITS)
    async with served(server) as http, session(http) as client:
        message = await refusal(client, "notes://" + "x" * 60_000)
        await client.subscribe_resource("notes://" + "x" * 150)
    assert "60,008 characters" in message
    assert "at most 200 (max_uri_chars)" in message


async def test_sessions_and_callers_hold_at_most_their_share_and_an_ended_session_drops_its_own() -> None:
    server = Server([Notes], allow_anonymous=True, subscription_limits=LIMITS)
    subscriptions = server._services.subscriptions
    async with served(server) as http:
        async with session(http) as first:
            for number in range(3):
                await first.subscribe_resource(f"notes://a{number}")
            await first.subscribe_resource("notes://a0")  # again: no second subscription
            per_session = await refusal(first, "notes://a3")
            async with session(http) as second:
                await second.subscribe_resource("notes://b0")
                await second.subscribe_resource("notes://b1")
                per_caller = await refusal(second, "notes://b2")  # the same anonymous address: 5 in all
                await second.unsubscribe_resource("notes://b1")
                await second.subscribe_resource("notes://b2")
            held_with_one_ended = subscriptions.watched()
        held_after = subscriptions.watched()
        async with session(http) as third:  # the address's subscriptions went with its sessions
            for number in range(3):
                await third.subscribe_resource(f"notes://c{number}")

    assert "this session watches 3 resources already" in per_session
    assert "(subscription limit per_session)" in per_session
    assert "Unsubscribe" in per_session
    assert "your sessions watch 5 resources already" in per_caller
    assert held_with_one_ended == 3
    assert held_after == 0


async def test_every_session_together_holds_at_most_the_total() -> None:
    server = Server([Notes], allow_anonymous=True, subscription_limits=LIMITS)
    web = server.http_app()
    async with web.router.lifespan_context(web), contextlib.AsyncExitStack() as stack:
        sessions = []
        for address in ("127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.3"):  # three callers, one with two
            transport = httpx2.ASGITransport(app=web, client=(address, 4000))
            http = await stack.enter_async_context(httpx2.AsyncClient(transport=transport, timeout=30))
            sessions.append(await stack.enter_async_context(session(http)))
        for number in range(3):
            await sessions[0].subscribe_resource(f"notes://x{number}")
            await sessions[1].subscribe_resource(f"notes://y{number}")
        await sessions[2].subscribe_resource("notes://z0")
        await sessions[3].subscribe_resource("notes://z1")
        message = await refusal(sessions[3], "notes://z2")
    assert "this server's sessions watch 8 resources already" in message
    assert "(subscription limit total)" in message


def test_limits_are_checked_when_the_server_is_built() -> None:
    with pytest.raises(ConfigurationError, match="per_session is a whole number, at least 1; not"):
        SubscriptionLimits(per_session=0)
    with pytest.raises(ConfigurationError, match="subscription_limits is a SubscriptionLimits"):
        Server([Notes], allow_anonymous=True, subscription_limits={"per_session": 3})  # type: ignore[arg-type]


# -- 2026-07-28 listen streams (a real ``mcpkit run`` server: a listen stream is an SSE response that stays open) --


@pytest.fixture(scope="module")
def listen_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    target = f"{Path(__file__).resolve().parent / 'listen_limits_server.py'}:server"
    with serving(target, cwd=tmp_path_factory.mktemp("listen-limits")) as server:
        yield server.url


@contextlib.asynccontextmanager
async def listener(url: str, who: str) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {LISTEN_KEYS[who]}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode="2026-07-28") as client,
    ):
        yield client


async def listen_refusal(client: Client, uris: list[str]) -> str:
    with pytest.raises(MCPError) as refused:
        async with client.listen(resource_subscriptions=uris):
            pass
    assert refused.value.error.code == -32602
    return refused.value.error.message


async def test_a_listen_stream_naming_too_many_or_too_long_uris_is_refused_with_the_limit(listen_url: str) -> None:
    async with listener(listen_url, "nour") as nour:
        message = await listen_refusal(nour, [f"notes://{n}" for n in range(4)])
        assert "names 4 resources" in message
        assert "at most 3 (subscription limit per_session)" in message
        message = await listen_refusal(nour, ["notes://" + "x" * 60_000])
        assert "60,008 characters" in message
        assert "at most 200 (max_uri_chars)" in message
        async with nour.listen(resource_subscriptions=["notes://a", "notes://b", "notes://c"]):
            pass  # three short ones are served


async def test_one_caller_holds_at_most_listen_per_caller_streams_and_others_still_listen(listen_url: str) -> None:
    async with (
        listener(listen_url, "nour") as nour,
        listener(listen_url, "sam") as sam,
        listener(listen_url, "lee") as lee,
        nour.listen(resource_subscriptions=["notes://a"]),
        nour.listen(resource_subscriptions=["notes://b"]),
    ):
        message = await listen_refusal(nour, ["notes://c"])  # a third of her own: refused, naming the limit
        assert "You have 2 listen streams open" in message
        assert "listen_per_caller" in message
        async with sam.listen(resource_subscriptions=["notes://plan"]) as watching:  # Sam still gets his
            await lee.call_tool("touch_note", {"key": "plan"})
            async with asyncio.timeout(10):
                event = await anext(aiter(watching))
            message = await listen_refusal(lee, ["notes://d"])  # the server's three are taken: refused, named
            assert "has 3 listen streams open" in message
            assert "listen_total" in message
        assert getattr(event, "uri", None) == "notes://plan"
    async with listener(listen_url, "nour") as nour, nour.listen(resource_subscriptions=["notes://c"]):
        pass  # her streams closed: she may listen again
