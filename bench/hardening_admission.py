"""Issue 35's admission attacks on the help desk (``python -m bench.hardening --parts admission``).

Per store (memory, SQLite, Redis), a real help desk (``mcpkit_helpdesk.create_server`` served by ``Server.run``, so
with mcpkit's connection guard, at ``max_connections=64``) pinned to core 0, and two agents on other
loopback addresses: Nour attacks from 127.0.0.2, Sam calls ``get_banner`` (a tool that touches no store) one call
after another from 127.0.0.3, each on a new connection — before the attack, and during it. Two attacks:

- ``held_questions``: on one 2025-11-25 session, Nour sends 1,000 ``send_reply`` calls and never answers the
  confirmation each one asks for (the streams stay open until the end).
- ``queued_reads``: on 2026-07-28, Nour keeps 64 ``search_history`` calls in flight on a 10 MB conversation (each
  sent again at once when it ends or is cut off; one refused with 429, which says she holds too much, waits its
  ``Retry-After`` first, as a client should, so the attack measures held calls, not a flood of refused ones).

Reported: Sam's p50/p99/worst and how many of his calls succeeded, quiet and attacked; what Nour's calls came to
(held, answered, refused with 429, refused at the connection cap, ended by a deadline).
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx2

from bench.procs import ROOT, child_env, pinned
from bench.search import WORDS
from bench.tokens import REMEMBER_SECRET

__all__ = ["admission"]

NOUR_KEY, SAM_KEY = "nour-demo-key", "sam-demo-key"
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
MODERN = "2026-07-28"
MAX_CONNECTIONS = 64
HELD = 1000
QUEUED = 64
CONVERSATION_BYTES = 10_000_000
MESSAGE_CHARS = 60_000

SERVE = """
import json, sys
from mcpkit_helpdesk import create_server
options = json.loads(sys.argv[1])
server = create_server(options["store"])
server.run(
    port=0,
    log_level="warning",
    max_connections=options["max_connections"],
    on_ready=lambda url: print(json.dumps({"url": url}), flush=True),
)
"""


class HelpDesk:
    """The help desk as a real process on a free loopback port, pinned to ``cpu``, stopped by its PID."""

    def __init__(self, store: str, log: Path, cpu: int = 0) -> None:
        self.store = store
        self.log = log
        self.cpu = cpu
        self.url = ""
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> HelpDesk:
        options = json.dumps({"store": self.store, "max_connections": MAX_CONNECTIONS})
        command, extra = pinned(self.cpu, [sys.executable, "-c", SERVE, options])
        if extra:  # no taskset: the child pins itself
            command = [sys.executable, "-c", f"import os; os.sched_setaffinity(0, {{{self.cpu}}})\n{SERVE}", options]
        env = child_env()
        env["PYTHONPATH"] = f"{ROOT / 'apps'}{os.pathsep}{env['PYTHONPATH']}"
        env["REMEMBER_SECRET"] = REMEMBER_SECRET
        with self.log.open("ab") as log:
            self._proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=log)
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the help desk exited at start; see {self.log}")
        self.url = json.loads(line)["url"]
        return self

    def __exit__(self, *exc: object) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)


def latencies(samples: list[float], succeeded: int) -> dict[str, Any]:
    ordered = sorted(samples)
    return {
        "calls": len(ordered),
        "succeeded": succeeded,
        "p50_ms": round(ordered[len(ordered) // 2] * 1000, 1),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 1),
        "worst_ms": round(ordered[-1] * 1000, 1),
    }


def client(address: str, connections: int = 10, timeout: float = 60) -> httpx2.AsyncClient:
    limits = httpx2.Limits(max_connections=connections, max_keepalive_connections=connections)
    transport = httpx2.AsyncHTTPTransport(local_address=address, limits=limits)
    return httpx2.AsyncClient(timeout=timeout, limits=limits, transport=transport)


def modern(tool: str, arguments: dict[str, Any], key: str, request_id: int) -> tuple[dict[str, Any], dict[str, str]]:
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": meta},
    }
    headers = {
        **HEADERS,
        "Authorization": f"Bearer {key}",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": tool,
    }
    return message, headers


async def banners(url: str, seconds: float) -> dict[str, Any]:
    """Sam's ``get_banner`` calls, one after another for ``seconds``, each on a new connection: an agent that arrives
    while the server is under attack (a connection opened before it would be an idle one, which the guard keeps)."""
    samples: list[float] = []
    succeeded = 0
    ends = time.monotonic() + seconds
    fresh = httpx2.Limits(max_connections=1, max_keepalive_connections=0)  # a new connection for every call
    transport = httpx2.AsyncHTTPTransport(local_address="127.0.0.3", limits=fresh)
    async with httpx2.AsyncClient(timeout=60, limits=fresh, transport=transport) as sam:
        while time.monotonic() < ends:
            message, headers = modern("get_banner", {}, SAM_KEY, len(samples))
            began = time.monotonic()
            try:
                response = await sam.post(url, json=message, headers=headers)
                succeeded += response.status_code == 200 and "result" in response.json()
            except httpx2.HTTPError:
                pass
            samples.append(time.monotonic() - began)
    return latencies(samples, succeeded)


async def held_questions(url: str, seconds: float) -> dict[str, Any]:
    outcomes: collections.Counter[str] = collections.Counter()
    let_go = asyncio.Event()
    async with client("127.0.0.2", HELD + 10, timeout=300) as nour:
        quiet = await banners(url, seconds)
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "attacker", "version": "1"},
            },
        }
        opened = await nour.post(url, json=init, headers={**HEADERS, "Authorization": f"Bearer {NOUR_KEY}"})
        session = {
            **HEADERS,
            "Authorization": f"Bearer {NOUR_KEY}",
            "Mcp-Session-Id": opened.headers["mcp-session-id"],
            "MCP-Protocol-Version": "2025-11-25",
        }
        await nour.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
        draft = {"name": "save_draft", "arguments": {"ticketId": "T-1001", "text": "On its way."}}
        await nour.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": draft}, headers=session)

        async def hold(request_id: int) -> None:
            send = {"name": "send_reply", "arguments": {"ticketId": "T-1001"}}
            message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": send}
            try:
                async with nour.stream("POST", url, json=message, headers=session) as response:
                    if response.status_code != 200:
                        outcomes[f"refused {response.status_code}"] += 1
                        return
                    async for line in response.aiter_lines():
                        if "elicitation/create" in line:
                            outcomes["held"] += 1
                            await let_go.wait()
                            return
                        if "INPUT_TIMEOUT" in line:
                            outcomes["ended by question_timeout"] += 1
                            return
                    outcomes["answered"] += 1
            except httpx2.TransportError:
                outcomes["refused at the connection cap"] += 1

        holding = [asyncio.create_task(hold(n)) for n in range(10, 10 + HELD)]
        for _ in range(600):  # every call held or refused, or 30 s
            if sum(outcomes.values()) >= HELD:
                break
            await asyncio.sleep(0.05)
        attacked = await banners(url, seconds)
        let_go.set()
        await asyncio.gather(*holding)
    return {"quiet": quiet, "attacked": attacked, "attacker": dict(outcomes)}


async def queued_reads(url: str, seconds: float) -> dict[str, Any]:
    rng = random.Random(35)
    outcomes: collections.Counter[str] = collections.Counter()
    async with client("127.0.0.2", QUEUED + 10, timeout=300) as nour:
        saved = 0
        while saved < CONVERSATION_BYTES:
            text = " ".join(rng.choice(WORDS) for _ in range(MESSAGE_CHARS // 7))[:MESSAGE_CHARS]
            messages = [{"role": "user", "content": text} for _ in range(3)]
            message, headers = modern("save_messages", {"conversation": "T-1001", "messages": messages}, NOUR_KEY, 1)
            response = await nour.post(url, json=message, headers=headers)
            if response.status_code != 200 or response.json()["result"].get("isError"):
                outcomes["fill stopped"] += 1
                break
            saved += 3 * MESSAGE_CHARS
        quiet = await banners(url, seconds)
        done = asyncio.Event()

        async def reading(number: int) -> None:
            while not done.is_set():
                query = {"query": rng.choice(WORDS), "conversation": "T-1001"}
                message, headers = modern("search_history", query, NOUR_KEY, number)
                try:
                    response = await nour.post(url, json=message, headers=headers)
                except httpx2.TransportError:
                    outcomes["refused at the connection cap"] += 1
                    continue
                if response.status_code != 200:
                    outcomes[f"refused {response.status_code}"] += 1
                    if response.status_code == 429:  # told it holds too much: it waits as told (not a flood)
                        await asyncio.sleep(float(response.headers.get("retry-after", "1")))
                    continue
                result = response.json().get("result", {})
                code = (result.get("_meta") or {}).get("mcpkit/error", {}).get("code")
                outcomes[code or "answered"] += 1

        readers = [asyncio.create_task(reading(n)) for n in range(QUEUED)]
        await asyncio.sleep(2)  # the queue fills
        attacked = await banners(url, seconds)
        done.set()
        await asyncio.gather(*readers)
    return {"conversation_mb": round(saved / 1e6, 1), "quiet": quiet, "attacked": attacked, "attacker": dict(outcomes)}


async def admission(stores: dict[str, str], tmp: Path, seconds: float) -> dict[str, Any]:
    """``stores``: name -> the help desk's ``--store`` for it."""
    out: dict[str, Any] = {"max_connections": MAX_CONNECTIONS, "held": HELD, "queued": QUEUED}
    for name, store in stores.items():
        out[name] = {}
        for attack in (held_questions, queued_reads):
            with HelpDesk(store, tmp / "helpdesk.log") as desk:
                out[name][attack.__name__] = await attack(desk.url, seconds)
            print(f"admission {name} {attack.__name__}: {json.dumps(out[name][attack.__name__])}", flush=True)
    return out
