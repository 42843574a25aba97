"""``running(server)``: the server's HTTP app started in-process, for scripts, docs and notebooks."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from ..base import Clock
from ..core import under_test
from ..server import Server
from ._call_as import CallAs

__all__ = ["running"]


@contextlib.asynccontextmanager
async def running(
    server: Server, *, protocol: str = "2026-07-28", clock: Clock | None = None, store: str | None = "memory"
) -> AsyncIterator[CallAs]:
    """Start ``server`` in-process and yield ``call_as``; everything stops when the block ends.

    Calls go through the real HTTP app with real ``Authorization`` headers, as in
    the pytest fixtures. ``clock`` replaces the server's clock (a ``ManualClock``
    lets a script move time). Plugins that take their store from the environment
    keep their data in ``store`` instead (a store URL; None: the environment's).
    """
    if clock is not None:
        server.clock = clock
    app = server.http_app()
    with under_test(store):
        async with app.router.lifespan_context(app):
            callers = CallAs(server, app, protocol)
            try:
                yield callers
            finally:
                await callers.aclose()
