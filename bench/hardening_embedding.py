"""``python -m bench.hardening --parts embedding``: what one caller's long values do to another caller's search by
meaning (issue 35).

A real memory server process (``python -m mcpkit_memoryserver --semantic``, the memory store, the semantic extra's
``MiniLM`` on every core, as a user runs it) serves two signed-in callers. The other caller keeps the labelled
set's memories and searches them one query after another: first alone (``quiet``), then while the writer sends
``writers`` ``write_memory`` calls at a time, each a 60,000-character value (the tool's largest) of English
sentences, ``values`` of them per writer (``attacked``). Reported: the other caller's ``search_memory``
p50/p99/worst and how many of its searches went by words alone (their ``note``), the writer's seconds per value,
and each value's windows (the model's 120-word windows of it) against those it embedded.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import random
import signal
import socket
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import mcpkit_storage.index._semantic as semantic_module
from bench.data.quality import MEMORIES, QUERIES
from bench.tokens import REMEMBER_SECRET, TOKENS
from mcpkit_search import document_chunks

__all__ = ["embedding"]

WRITER, SEARCHER = "u00", "u01"
VALUE_CHARS = 60_000
QUIET_SEARCHES = 60
ROOT = Path(__file__).resolve().parents[1]


def latencies(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "calls": len(ordered),
        "p50_ms": round(statistics.median(ordered) * 1000, 1),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 1),
        "worst_ms": round(ordered[-1] * 1000, 1),
    }


def conversation(rng: random.Random, chars: int = VALUE_CHARS) -> str:
    """English sentences (the labelled set's memories, shuffled) up to ``chars``: a long conversation's text."""
    sentences = list(MEMORIES.values())
    parts: list[str] = []
    size = 0
    while size < chars:
        sentence = rng.choice(sentences)
        parts.append(sentence + ".")
        size += len(sentence) + 2
    return " ".join(parts)[:chars]


class MemoryServer:
    """``python -m mcpkit_memoryserver --semantic`` on a free loopback port; ``stop`` ends it by its PID."""

    def __init__(self) -> None:
        self.port = _free_port()
        self.process: asyncio.subprocess.Process | None = None
        self.lines: list[str] = []  # what it printed: the model ready, the embedder's warnings
        self._reading: asyncio.Task[None] | None = None

    async def start(self, loading: float = 600.0) -> None:
        """Start the server and wait until its model has loaded (``loading``: seconds at most)."""
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(ROOT / "apps")]))
        env["MEMORY_KEYS"] = f"{WRITER}={TOKENS[WRITER]},{SEARCHER}={TOKENS[SEARCHER]}"
        env["REMEMBER_SECRET"] = REMEMBER_SECRET
        command = [
            sys.executable,
            "-m",
            "mcpkit_memoryserver",
            "--semantic",
            "--store",
            "memory",
            "--port",
            str(self.port),
        ]
        self.process = await asyncio.create_subprocess_exec(
            *command, cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
        ready = asyncio.Event()
        self._reading = asyncio.create_task(self._read(ready))
        try:
            await asyncio.wait_for(ready.wait(), loading)
        except TimeoutError:
            await self.stop()
            raise RuntimeError(f"the memory server's model did not load in {loading} s: {self.lines[-5:]}") from None

    async def _read(self, ready: asyncio.Event) -> None:
        assert self.process is not None
        assert self.process.stdout is not None
        async for raw in self.process.stdout:  # read to the end: a full pipe would stall the server
            line = raw.decode(errors="replace").rstrip()
            self.lines.append(line)
            if "search by meaning is ready" in line:
                ready.set()

    def count(self, words: str) -> int:
        """How many of the server's lines so far contain ``words``."""
        return sum(words in line for line in self.lines)

    async def stop(self) -> None:
        process = self.process
        if process is not None and process.returncode is None:
            process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), 15)
            except TimeoutError:
                process.kill()
                await process.wait()
        if self._reading is not None:
            await self._reading


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _client(http: httpx2.AsyncClient, port: int) -> Client:
    return Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http), mode="2026-07-28")


async def attack(port: int, writers: int, values: int) -> dict[str, Any]:
    rng = random.Random(35)
    queries = [query for query, _, _ in QUERIES]
    headers = {label: {"Authorization": f"Bearer {TOKENS[label]}"} for label in (WRITER, SEARCHER)}
    async with (
        httpx2.AsyncClient(headers=headers[WRITER], timeout=600) as writer_http,
        httpx2.AsyncClient(headers=headers[SEARCHER], timeout=600) as searcher_http,
        _client(writer_http, port) as writer,
        _client(searcher_http, port) as searcher,
    ):
        for key, value in MEMORIES.items():
            await searcher.call_tool("write_memory", {"key": key, "value": value})

        async def search(samples: list[float], notes: list[str]) -> None:
            began = time.monotonic()
            result = await searcher.call_tool("search_memory", {"query": rng.choice(queries)})
            samples.append(time.monotonic() - began)
            note = (result.structured_content or {}).get("note")
            if note:
                notes.append(note)

        quiet: list[float] = []
        quiet_notes: list[str] = []
        for _ in range(QUIET_SEARCHES):
            await search(quiet, quiet_notes)

        texts = [[conversation(rng) for _ in range(values)] for _ in range(writers)]
        per_value: list[float] = []

        async def write(number: int) -> None:
            for count, text in enumerate(texts[number]):
                began = time.monotonic()
                result = await writer.call_tool("write_memory", {"key": f"talk-{number}-{count}", "value": text})
                if result.is_error:
                    raise RuntimeError(f"write_memory failed: {result.content}")
                per_value.append(time.monotonic() - began)

        attacked: list[float] = []
        attacked_notes: list[str] = []
        writing = asyncio.gather(*(write(number) for number in range(writers)))
        started = time.monotonic()
        while not writing.done():
            await search(attacked, attacked_notes)
        await writing
        seconds = time.monotonic() - started
    windows = [len(document_chunks("talk-0-0", text)) for text in texts[0]]
    return {
        "writers": writers,
        "values_per_writer": values,
        "value_chars": VALUE_CHARS,
        "value_windows_p50": int(statistics.median(windows)),
        "windows_embedded_per_value": getattr(semantic_module, "MAX_WINDOWS_PER_VALUE", None),  # None: all
        "attack_seconds": round(seconds, 1),
        "writer_seconds_per_value": {
            "p50": round(statistics.median(per_value), 2),
            "worst": round(max(per_value), 2),
        },
        "other_search_quiet": latencies(quiet),
        "other_search_attacked": latencies(attacked),
        "other_searches_by_words_alone": len(attacked_notes),
    }


async def embedding(writers: int, values: int) -> dict[str, Any]:
    """The section: one memory server, the attack, and the embedder's warnings it logged meanwhile."""
    if importlib.util.find_spec("sentence_transformers") is None:
        return {"skipped": "the semantic extra is not installed: pip install 'mcpkit[semantic]'"}
    server = MemoryServer()
    await server.start()
    try:
        out = await attack(server.port, writers, values)
    finally:
        await server.stop()
    out["writes_and_searches_without_vectors"] = server.count("going on without")  # the embedder's warnings
    return out
