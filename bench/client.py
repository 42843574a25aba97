"""``python -m bench.client``: a lean closed-loop load generator (asyncio, raw keep-alive HTTP/1.1).

Reads a JSON job on stdin and prints a JSON result on stdout. Worker ``w`` of ``c`` calls
users ``w, w+c, w+2c, ...`` in turn, so no user ever has two calls in flight and every
response can be checked exactly (the counter is one more than the last one this user saw).
Server CPU is read from ``/proc/PID/stat`` at the start and the end of the measured window.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from bench.tokens import LABELS, TOKENS
from bench.wire import request_bytes, result_of, tool_body

__all__ = ["main", "proc_cpu_seconds"]

_TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat", "rb") as handle:
        fields = handle.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


@dataclass
class Job:
    port: int
    server_pid: int
    tool: str  # increment | draft_reply | set_signature
    concurrency: int
    warmup: float
    duration: float
    max_calls: int
    expected: dict[str, Any]  # increment: label -> last count; draft_reply: label -> signature
    tag: str = "r"
    extra_pids: dict[str, int] = field(default_factory=dict)  # other processes to meter (e.g. redis-server)


@dataclass
class State:
    phase: int = 0  # 0 warm-up, 1 measured, 2 stop
    latencies: list[int] = field(default_factory=list)
    measured: int = 0
    calls: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    done: asyncio.Event = field(default_factory=asyncio.Event)


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, str, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split(b" ", 2)[1])
    length = -1
    chunked = False
    content_type = ""
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        lowered = name.lower()
        if lowered == b"content-length":
            length = int(value)
        elif lowered == b"transfer-encoding" and b"chunked" in value.lower():
            chunked = True
        elif lowered == b"content-type":
            content_type = value.decode().strip()
    if chunked:
        parts = []
        while True:
            size = int((await reader.readuntil(b"\r\n"))[:-2].split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                break
            parts.append(await reader.readexactly(size + 2))
        return status, content_type, b"".join(part[:-2] for part in parts)
    return status, content_type, await reader.readexactly(length) if length > 0 else b""


def _arguments(job: Job, label: str, seq: int) -> dict[str, Any]:
    if job.tool == "draft_reply":
        return {"ticketId": "T-1", "text": "Thanks for writing in."}
    if job.tool == "set_signature":
        return {"signature": f"{label} {job.tag}.{seq}"}
    return {}


def _check(job: Job, label: str, seq: int, last: dict[str, Any], result: dict[str, Any] | None) -> str | None:
    """None when the result is exactly what this call should return; else what is wrong."""
    if result is None or result.get("isError"):
        return f"{label}: error result {result!r}"[:300]
    data = result.get("structuredContent") or {}
    if job.tool == "increment":
        want = last[label] + 1
        if data.get("count") != want:
            return f"{label}: count {data.get('count')!r}, expected {want}"
        last[label] = want
    elif job.tool == "draft_reply":
        if not str(data.get("reply", "")).endswith("\n\n" + last[label]):
            return f"{label}: reply {data.get('reply')!r} is not signed {last[label]!r}"
    elif data.get("signature") != f"{label} {job.tag}.{seq}":
        return f"{label}: signature echo {data.get('signature')!r}"
    else:
        last[label] = data["signature"]
    return None


async def _worker(job: Job, state: State, users: list[str], last: dict[str, Any]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", job.port)
    writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    perf = time.perf_counter_ns
    index = 0
    try:
        while state.phase < 2:
            label = users[index % len(users)]
            index += 1
            seq = state.calls.get(label, 0) + 1
            body = tool_body(job.tool, _arguments(job, label, seq), index)
            start = perf()
            writer.write(request_bytes(job.port, TOKENS[label], job.tool, body))
            status, content_type, raw = await _read_response(reader)
            elapsed = perf() - start
            phase = state.phase
            problem = _check(job, label, seq, last, result_of(status, content_type, raw))
            if problem is not None:
                state.errors.append(f"HTTP {status}: {problem}")
                if len(state.errors) > 20:
                    state.phase = 2
                    state.done.set()
                break
            state.calls[label] = seq
            if phase == 1:
                state.latencies.append(elapsed)
                state.measured += 1
                if state.measured >= job.max_calls:
                    state.done.set()
    finally:
        writer.close()


async def run(job: Job) -> dict[str, Any]:
    state = State()
    last = dict(job.expected)
    workers = [
        asyncio.create_task(_worker(job, state, list(LABELS[w :: job.concurrency]), last))
        for w in range(job.concurrency)
    ]
    await asyncio.sleep(job.warmup)
    extra0 = {name: proc_cpu_seconds(pid) for name, pid in job.extra_pids.items()}
    server0, client0, wall0 = proc_cpu_seconds(job.server_pid), time.process_time(), time.perf_counter()
    state.phase = 1
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(state.done.wait(), job.duration)
    wall1, server1, client1 = time.perf_counter(), proc_cpu_seconds(job.server_pid), time.process_time()
    extra = {name: (proc_cpu_seconds(pid) - extra0[name]) * 1000 for name, pid in job.extra_pids.items()}
    measured = state.measured
    state.phase = 2
    await asyncio.gather(*workers, return_exceptions=False)
    latencies = sorted(state.latencies[:measured])
    window = wall1 - wall0

    def pct(q: float) -> float:
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))] / 1e6 if latencies else float("nan")

    return {
        "calls": measured,
        "window_s": window,
        "calls_per_s": measured / window if window > 0 else 0.0,
        "p50_ms": pct(0.50),
        "p99_ms": pct(0.99),
        "server_cpu_ms_per_call": (server1 - server0) * 1000 / measured if measured else float("nan"),
        "server_busy": (server1 - server0) / window if window > 0 else 0.0,
        "client_cpu_ms_per_call": (client1 - client0) * 1000 / measured if measured else float("nan"),
        "extra_cpu_ms_per_call": {name: ms / measured for name, ms in extra.items()} if measured else {},
        "per_user_calls": state.calls,
        "last": last,
        "errors": state.errors,
    }


def main() -> int:
    job = Job(**json.loads(sys.stdin.read()))
    result = asyncio.run(run(job))
    json.dump(result, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
