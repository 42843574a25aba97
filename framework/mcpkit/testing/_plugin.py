"""The pytest plugin (entry point ``pytest11``): fixtures that call tools as named users, each test on a store of its
own, with nothing to configure: the ``async def`` tests that use them run on asyncio (pytest-asyncio)."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from ..base import ManualClock
from ..core import under_test
from ..server import Server
from ._call_as import CallAs
from ._client import PROTOCOLS
from ._holder import Holder

try:
    import pytest_asyncio

    HAVE_PYTEST_ASYNCIO = True
except ImportError:  # pragma: no cover - exercised only without the dev extra
    HAVE_PYTEST_ASYNCIO = False

#: The fixtures that run on an event loop: a test that uses one (directly or through another) is an asyncio test.
_ASYNC_FIXTURES = frozenset({"call_as", "mcpkit_app"})
#: pytest-asyncio's setting for the loop of async fixtures, which warns when unset: ours run on the test's own loop.
_LOOP_SCOPE = "asyncio_default_fixture_loop_scope"
_parser: pytest.Parser | None = None


def pytest_addoption(parser: pytest.Parser) -> None:
    global _parser
    _parser = parser


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Give async fixtures the test's own loop unless the project says otherwise (before pytest-asyncio reads it)."""
    if HAVE_PYTEST_ASYNCIO and _parser is not None:
        _parser.addini(_LOOP_SCOPE, "default scope of the event loop of async fixtures", "string", default="function")


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Mark ``async def`` tests that use mcpkit's fixtures as asyncio tests, so no ``asyncio_mode`` is needed."""
    if not HAVE_PYTEST_ASYNCIO or not inspect.iscoroutinefunction(metafunc.function):
        return
    if _ASYNC_FIXTURES.isdisjoint(metafunc.fixturenames) or metafunc.definition.get_closest_marker("asyncio"):
        return
    pytest.mark.asyncio(metafunc.function)


@pytest.fixture
def mcpkit_server() -> Server:
    """Override this fixture to return your server, built fresh for each test."""
    raise pytest.UsageError(
        "mcpkit's fixtures need your server: define a `mcpkit_server` fixture in conftest.py that "
        "returns a new mcpkit.Server for each test (for example `return create_server()`)."
    )


@pytest.fixture
def mcpkit_store() -> str:
    """Where plugins that take their store from the environment keep the test's data: a new memory store per test.

    Override it (``return f"sqlite:///{tmp_path / 'test.db'}"``) to run the tests on another store.
    """
    return "memory"


@pytest.fixture(autouse=True)
def _mcpkit_store_under_test(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that uses ``mcpkit_server`` builds and starts it on ``mcpkit_store``, whatever ``REMEMBER_STORE`` says."""
    if "mcpkit_server" not in request.fixturenames:
        yield
        return
    with under_test(str(request.getfixturevalue("mcpkit_store"))):
        yield


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
