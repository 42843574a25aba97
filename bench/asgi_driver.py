"""``python -m bench.asgi_driver KIND OPTIONS N [--era 2025-11-25]``: N ``tools/call`` requests straight into a
server's ASGI app (2026-07-28 requests by default; with ``--era 2025-11-25``, in one session opened first).

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
from bench.wire import LEGACY, PROTOCOL, legacy_body, tool_body

__all__ = ["WARMUP_CALLS", "drive"]

#: Calls made before the measured ones (caches, first-call imports), so they cost the same in every run.
WARMUP_CALLS = 100

_IDLE = 3600.0


def _scope(token: str, body: bytes, session: str | None) -> dict[str, Any]:
    headers = {
        "host": "127.0.0.1:8000",
        "authorization": f"Bearer {token}",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "content-length": str(len(body)),
    }
    if session is None:  # 2026-07-28: the routing headers
        headers.update({"mcp-protocol-version": PROTOCOL, "mcp-method": "tools/call", "mcp-name": "increment"})
    elif session:  # 2025-11-25, after the handshake (an empty session: the initialize request itself)
        headers.update({"mcp-protocol-version": LEGACY, "mcp-session-id": session})
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


async def _post(app: Any, token: str, body: bytes, session: str | None) -> tuple[int | None, bytes, dict[bytes, bytes]]:
    """One POST into the app: its status, body and headers."""
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

    await app(_scope(token, body, session), receive, send)
    status = sent[0].get("status") if sent else None
    headers = dict(sent[0].get("headers", [])) if sent else {}
    return status, b"".join(message.get("body", b"") for message in sent[1:]), headers


async def _call(
    app: Any, number: int, tokens: dict[str, str], sessions: dict[str, str] | None, tasks: bool = False
) -> None:
    label = LABELS[number % len(LABELS)]
    session = None if sessions is None else sessions[label]
    body = tool_body("increment", {}, number, tasks=tasks) if session is None else legacy_body("increment", {}, number)
    status, answer, _ = await _post(app, tokens[label], body, session)
    if status != 200 or b'"count"' not in answer or b'"isError":true' in answer:
        raise RuntimeError(f"call {number} failed: HTTP {status} {answer[:300]!r}")


async def _open_sessions(app: Any, tokens: dict[str, str]) -> dict[str, str]:
    """A 2025-11-25 session per caller: ``initialize``, then ``notifications/initialized``."""
    sessions: dict[str, str] = {}
    for label in LABELS:
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
        }
        status, answer, headers = await _post(app, tokens[label], json.dumps(init).encode(), "")
        if status != 200 or b"mcp-session-id" not in headers:
            raise RuntimeError(f"initialize for {label} failed: HTTP {status} {answer[:300]!r}")
        session = headers[b"mcp-session-id"].decode()
        done = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
        status, answer, _ = await _post(app, tokens[label], done, session)
        if status != 202:
            raise RuntimeError(f"notifications/initialized for {label} failed: HTTP {status} {answer[:300]!r}")
        sessions[label] = session
    return sessions


def _instrument(state: str) -> None:
    """Switch callgrind's counting on or off for this process (it was started with ``--instr-atstart=no``)."""
    subprocess.run(["callgrind_control", "-i", state, str(os.getpid())], check=True, capture_output=True, timeout=600)


async def drive(kind: str, options: dict[str, Any], calls: int, *, toggle: bool = False, era: str = PROTOCOL) -> None:
    """Start the app (its lifespan), make the warm-up calls, then ``calls`` more (counted, with ``toggle``)."""
    app = build_app(kind, options)
    tokens = tokens_of(kind, options)
    async with app.router.lifespan_context(app):
        sessions = None if era == PROTOCOL else await _open_sessions(app, tokens)
        for number in range(WARMUP_CALLS):
            await _call(app, number, tokens, sessions, bool(options.get("declare", options.get("tasks"))))
        if toggle:
            _instrument("on")
        for number in range(WARMUP_CALLS, WARMUP_CALLS + calls):
            await _call(app, number, tokens, sessions, bool(options.get("declare", options.get("tasks"))))
        if toggle:
            _instrument("off")


def main(argv: list[str]) -> int:
    kind, options, calls = argv[0], json.loads(argv[1]), int(argv[2])
    era = argv[argv.index("--era") + 1] if "--era" in argv else PROTOCOL
    if era not in (PROTOCOL, LEGACY):
        raise SystemExit(f"--era is {PROTOCOL} or {LEGACY}, not {era!r}")
    asyncio.run(drive(kind, options, calls, toggle="--callgrind-toggle" in argv[3:], era=era))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
