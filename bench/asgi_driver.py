"""``python -m bench.asgi_driver KIND OPTIONS N``: N ``tools/call`` requests straight into a server's ASGI app.

No uvicorn, no sockets, no client library: the ASGI scope, ``receive`` and ``send`` are
built here, so what runs is the server app's own path (HTTP framework, MCP transport,
auth, the tool). ``bench.instructions`` runs this under callgrind to count instructions
per call, a figure that does not move with the load on a shared machine; with
``--callgrind-toggle`` only the measured calls are counted (start-up runs uncounted,
and about ten times faster under valgrind).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from typing import Any

from bench.serve import build_app, tokens_of
from bench.tokens import LABELS
from bench.wire import PROTOCOL, tool_body

__all__ = ["WARMUP_CALLS", "drive"]

#: Calls made before the measured ones (caches, first-call imports), so they cost the same in every run.
WARMUP_CALLS = 100

_IDLE = 3600.0


def _scope(token: str, body: bytes) -> dict[str, Any]:
    headers = {
        "host": "127.0.0.1:8000",
        "authorization": f"Bearer {token}",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": PROTOCOL,
        "mcp-method": "tools/call",
        "mcp-name": "increment",
        "content-length": str(len(body)),
    }
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [(name.encode(), value.encode()) for name, value in headers.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }


async def _call(app: Any, number: int, tokens: dict[str, str]) -> None:
    body = tool_body("increment", {}, number)
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.sleep(_IDLE)  # the client never disconnects
        return {"type": "http.disconnect"}

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(_scope(tokens[LABELS[number % len(LABELS)]], body), receive, send)
    status = sent[0].get("status") if sent else None
    answer = b"".join(message.get("body", b"") for message in sent[1:])
    if status != 200 or b'"count"' not in answer or b'"isError":true' in answer:
        raise RuntimeError(f"call {number} failed: HTTP {status} {answer[:300]!r}")


def _instrument(state: str) -> None:
    """Switch callgrind's counting on or off for this process (it was started with ``--instr-atstart=no``)."""
    subprocess.run(["callgrind_control", "-i", state, str(os.getpid())], check=True, capture_output=True, timeout=600)


async def drive(kind: str, options: dict[str, Any], calls: int, *, toggle: bool = False) -> None:
    """Start the app (its lifespan), make the warm-up calls, then ``calls`` more (counted, with ``toggle``)."""
    app = build_app(kind, options)
    tokens = tokens_of(kind, options)
    async with app.router.lifespan_context(app):
        for number in range(WARMUP_CALLS):
            await _call(app, number, tokens)
        if toggle:
            _instrument("on")
        for number in range(WARMUP_CALLS, WARMUP_CALLS + calls):
            await _call(app, number, tokens)
        if toggle:
            _instrument("off")


def main(argv: list[str]) -> int:
    kind, options, calls = argv[0], json.loads(argv[1]), int(argv[2])
    asyncio.run(drive(kind, options, calls, toggle="--callgrind-toggle" in argv[3:]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
