"""``StreamingASGITransport``: an ``httpx2`` transport that hands each request to an ASGI app in-process and gives
the client the response's body as the app sends it, so a 2025-11-25 question (a live request on the call's stream)
reaches the client while the call waits for its answer. ``httpx2.ASGITransport`` buffers a body until it ends."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, MutableMapping
from typing import Any

import httpx2
from starlette.types import ASGIApp

__all__ = ["StreamingASGITransport"]

logger = logging.getLogger("mcpkit.testing")

#: How long a closed response's app may take to notice the client went away before it is cancelled.
_GRACE_SECONDS = 5.0


class _Body(httpx2.AsyncByteStream):
    """The chunks the app sends, as it sends them; closing it tells the app the client went away."""

    def __init__(self, chunks: asyncio.Queue[bytes | None], gone: asyncio.Event) -> None:
        self._chunks = chunks
        self._gone = gone

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while (chunk := await self._chunks.get()) is not None:
            yield chunk

    async def aclose(self) -> None:
        self._gone.set()


class StreamingASGITransport(httpx2.AsyncBaseTransport):
    """Requests go to ``app`` (from ``client``, an address and port); every app still running is ended on close."""

    def __init__(self, app: ASGIApp, client: tuple[str, int] = ("127.0.0.1", 123)) -> None:
        self.app = app
        self.client = client
        self._running: set[asyncio.Task[None]] = set()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = b"".join([chunk async for chunk in request.stream])  # type: ignore[union-attr]
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": request.method,
            "headers": [(key.lower(), value) for key, value in request.headers.raw],
            "scheme": request.url.scheme,
            "path": request.url.path,
            "raw_path": request.url.raw_path.split(b"?")[0],
            "query_string": request.url.query,
            "server": (request.url.host, request.url.port),
            "client": self.client,
            "root_path": "",
        }
        started: asyncio.Future[tuple[int, Any]] = asyncio.get_running_loop().create_future()
        chunks: asyncio.Queue[bytes | None] = asyncio.Queue()
        gone = asyncio.Event()
        sent_body = False

        async def receive() -> dict[str, Any]:
            nonlocal sent_body
            if not sent_body:
                sent_body = True
                return {"type": "http.request", "body": body, "more_body": False}
            await gone.wait()
            return {"type": "http.disconnect"}

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start" and not started.done():
                started.set_result((message["status"], message.get("headers", [])))
            elif message["type"] == "http.response.body" and not gone.is_set():
                if message.get("body") and request.method != "HEAD":
                    chunks.put_nowait(message["body"])
                if not message.get("more_body", False):
                    chunks.put_nowait(None)

        async def serve() -> None:
            try:
                await self.app(scope, receive, send)
            except Exception as exc:
                if not started.done():
                    started.set_exception(exc)
                else:
                    logger.exception("the app failed after it started its response")
            finally:
                chunks.put_nowait(None)
                if not started.done():
                    started.set_exception(RuntimeError("the app ended without a response"))

        task = asyncio.get_running_loop().create_task(serve())
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        status, headers = await started
        return httpx2.Response(status, headers=headers, stream=_Body(chunks, gone), request=request)

    async def aclose(self) -> None:
        """Wait for the apps still serving (a stream the client closed ends soon after), cancelling the laggards."""
        running = list(self._running)
        if not running:
            return
        _, pending = await asyncio.wait(running, timeout=_GRACE_SECONDS)
        for task in pending:
            task.cancel()
        for task in pending:
            with contextlib.suppress(asyncio.CancelledError):
                await task
