"""Fixtures for the help-desk tests: the server under test, and a way to serve a second one."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest

# pyproject puts tests/ on sys.path, where this folder is a namespace package called
# "helpdesk" that would shadow the app installed in editable mode (its finder runs after
# sys.path's). With apps/ on sys.path the regular package apps/helpdesk wins.
_APPS = str(Path(__file__).resolve().parents[2] / "apps")
if _APPS not in sys.path:
    sys.path.append(_APPS)
if getattr(sys.modules.get("helpdesk"), "__file__", "") is None:  # already imported as the namespace
    del sys.modules["helpdesk"]

from helpdesk import DEMO_KEYS, create_server  # noqa: E402
from mcpkit import Server  # noqa: E402
from mcpkit.testing import CallAs  # noqa: E402

Serve = Callable[[Server], AbstractAsyncContextManager[CallAs]]


@pytest.fixture
def mcpkit_server() -> Server:
    """The help desk as ``python -m helpdesk`` serves it (memory store), with the demo keys."""
    return create_server(keys=DEMO_KEYS)


@pytest.fixture
def serve(mcp_protocol: str) -> Serve:
    """``async with serve(server) as call_as:`` runs another server (its own store) beside the fixture's."""

    @contextlib.asynccontextmanager
    async def serving(server: Server) -> AsyncIterator[CallAs]:
        app = server.http_app()
        async with app.router.lifespan_context(app):
            callers = CallAs(server, app, mcp_protocol)
            try:
                yield callers
            finally:
                await callers.aclose()

    return serving
