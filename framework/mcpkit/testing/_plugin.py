"""The pytest plugin (entry point ``pytest11``): fixtures that call tools as named users."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from ..base import ManualClock
from ..server import Server
from ._call_as import CallAs
from ._client import PROTOCOLS
from ._holder import Holder

try:
    import pytest_asyncio

    HAVE_PYTEST_ASYNCIO = True
except ImportError:  # pragma: no cover - exercised only without the dev extra
    HAVE_PYTEST_ASYNCIO = False


@pytest.fixture
def mcpkit_server() -> Server:
    """Override this fixture to return your server, built fresh for each test."""
    raise pytest.UsageError(
        "mcpkit's fixtures need your server: define a `mcpkit_server` fixture in conftest.py that "
        "returns a new mcpkit.Server for each test (for example `return create_server()`)."
    )


@pytest.fixture
def clock() -> ManualClock:
    """A clock the test moves with ``clock.advance(seconds)``; the server under test reads it."""
    return ManualClock()


@pytest.fixture(params=PROTOCOLS)
def mcp_protocol(request: pytest.FixtureRequest) -> str:
    """The protocol era of ``call_as`` clients; by default every test runs in both."""
    return str(request.param)


if HAVE_PYTEST_ASYNCIO:

    @pytest_asyncio.fixture
    async def mcpkit_app(mcpkit_server: Server, clock: ManualClock) -> AsyncIterator[object]:
        """The server's real HTTP app, running (plugins started), with its clock set to ``clock``."""
        mcpkit_server.clock = clock
        app = mcpkit_server.http_app()
        holder: Holder[Any] = Holder(lambda: app.router.lifespan_context(app))
        await holder.open()
        try:
            yield app
        finally:
            await holder.close()

    @pytest_asyncio.fixture
    async def call_as(mcpkit_server: Server, mcpkit_app: object, mcp_protocol: str) -> AsyncIterator[CallAs]:
        """``call_as("nour")``: a client that calls tools as Nour, through HTTP with her key."""
        callers = CallAs(mcpkit_server, mcpkit_app, mcp_protocol)  # type: ignore[arg-type]
        try:
            yield callers
        finally:
            await callers.aclose()

else:  # pragma: no cover

    @pytest.fixture
    def mcpkit_app() -> None:
        raise pytest.UsageError("mcpkit's fixtures need pytest-asyncio: pip install pytest-asyncio")

    @pytest.fixture
    def call_as() -> None:
        raise pytest.UsageError("mcpkit's fixtures need pytest-asyncio: pip install pytest-asyncio")
