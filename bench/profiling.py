"""Where a server's time goes: py-spy samples under load, folded into named parts of the call path.

``profile_server`` starts a fresh server, drives it at concurrency 16 from the load client and
records it with ``py-spy record --format raw``. Every sample (a stack) goes to its innermost
"owner" (``OWNERS``), so the parts add up to 100 %; a part's cost per call is its share times the
server CPU per call measured in the same run.
"""

from __future__ import annotations

import collections
import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from bench.procs import ROOT, ServerProcess, pinned

__all__ = ["INCLUSIVE", "OWNERS", "fold", "profile_server"]

#: Owners, innermost first: each sample goes to the first owner found walking its stack from the leaf
#: up, so library frames (pydantic, json, ...) count for the code that called them and the parts
#: add up to 100 %. py-spy prints paths relative to sys.path, e.g. ``(mcpkit/_gate.py:94)``; with
#: ``--native`` the C frames show too, so the cyclic garbage collector is its own part rather than a
#: cost of whichever line happened to allocate when it ran.
OWNERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("garbage collector (wherever it triggers)", ("gc_collect_main",)),
    ("remember: Keyring (AES-GCM seal/open, owner hash)", ("(mcpkit_remember/_keyring.py",)),
    ("remember: value checks + JSON (_values)", ("(mcpkit_remember/_values.py",)),
    ("remember: scope -> place (_scope)", ("(mcpkit_remember/_scope.py",)),
    (
        "remember: store",
        ("(mcpkit_remember/_memory_store.py", "(mcpkit_remember/_sqlite_store.py", "(mcpkit_remember/_redis_store.py"),
    ),
    ("remember: Vault", ("(mcpkit_remember/_vault.py",)),
    ("remember: Remember.increment/update", ("(mcpkit_remember/_remember.py",)),
    ("remember: plugin (remember_for)", ("(mcpkit_remember/",)),
    ("tool body (bench server code)", ("(bench/servers/",)),
    ("mcpkit: output conversion (_output)", ("(mcpkit/_output.py",)),
    ("mcpkit: ToolContext attributes (_context)", ("(mcpkit/_context.py",)),
    ("mcpkit: dispatch (caller, input validation, hooks)", ("(mcpkit/_dispatch.py", "(mcpkit/_results.py")),
    ("mcpkit: AuthGate + StaticKeys", ("(mcpkit/_gate.py", "(mcpkit/_static_keys.py")),
    ("mcpkit: other", ("(mcpkit/",)),
    ("fastmcp", ("(fastmcp/", "(key_value/", "(uncalled_for/")),
    ("SDK: MCPServer tools (func metadata, validation, conversion)", ("(mcp/server/mcpserver/",)),
    ("SDK: auth (bearer backend, verifier, context)", ("(mcp/server/auth/",)),
    (
        "SDK: HTTP transport (modern handler, session manager, security)",
        ("(mcp/server/_streamable_http_modern.py", "(mcp/server/streamable_http", "(mcp/server/transport_security.py"),
    ),
    ("SDK: JSON-RPC dispatch (runner, lowlevel, connection, types)", ("(mcp/", "(mcp_types/")),
    ("Starlette (apps, middleware, routing, requests)", ("(starlette/",)),
    ("uvicorn + h11 (HTTP/1.1)", ("(uvicorn/", "(h11/")),
    ("event loop (asyncio, anyio)", ("(asyncio/", "(anyio/", "(selectors.py")),
)

#: Inclusive figures worth reading beside the partition (a sample counts if any frame matches).
INCLUSIVE: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("incl. all of mcpkit_remember", ("(mcpkit_remember/",)),
    ("incl. mcpkit Dispatcher.call_tool", ("Dispatcher.call_tool (mcpkit/",)),
    ("incl. SDK MCPServer tool call", ("(mcp/server/mcpserver/",)),
    ("incl. pydantic (anywhere)", ("(pydantic/", "(pydantic_core/")),
)


def _owner(frames: list[str]) -> str:
    for frame in reversed(frames):
        for owner, needles in OWNERS:
            if any(needle in frame for needle in needles):
                return owner
    return "other"


def fold(raw: str) -> dict[str, Any]:
    """Owner shares, inclusive shares and the costliest leaf functions from py-spy's raw output."""
    total = 0
    owners: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    leaves: collections.Counter[str] = collections.Counter()
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        total += count
        frames = stack.split(";")
        owners[_owner(frames)] += count
        for name, needles in INCLUSIVE:
            if any(needle in frame for frame in frames for needle in needles):
                inclusive[name] += count
        python = [frame for frame in frames if ".py:" in frame or "(<frozen" in frame]
        leaves[python[-1] if python else frames[-1]] += count
    if not total:
        return {"samples": 0, "parts": {}, "leaves": []}
    names = [owner for owner, _ in OWNERS] + ["other"] + [name for name, _ in INCLUSIVE]
    shares = {
        **{o: owners[o] / total for o in names[: len(OWNERS) + 1]},
        **{n: inclusive[n] / total for n, _ in INCLUSIVE},
    }
    return {
        "samples": total,
        "parts": shares,
        "leaves": [{"function": name, "share": n / total} for name, n in leaves.most_common(15)],  # innermost Python
    }


def profile_server(
    name: str, kind: str, options: dict[str, Any], seconds: float, out: Path, server_cpu: int, client_cpu: int
) -> dict[str, Any]:
    """Profile one fresh server under concurrency-16 load; returns the folded shares and the run's numbers."""
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(py_spy).exists():
        return {"error": "py-spy is not installed (pip install py-spy)"}
    server = ServerProcess(kind, options, server_cpu, out / "servers.log")
    server.start()
    raw_path = out / f"profile-{name}.txt"
    try:
        from bench.cases import CASES
        from bench.checks import pre_check

        case = next(c for c in CASES if c.server == name or c.name == name)
        expected, problems = pre_check(case, server.port, "profile")
        if problems:
            return {"error": f"check failed before profiling: {problems}"}
        job = {
            "port": server.port,
            "server_pid": server.pid,
            "tool": case.tool,
            "concurrency": 16,
            "warmup": 1.0,
            "duration": seconds,
            "max_calls": 10**7,
            "expected": expected,
            "tag": "profile",
        }
        command, _ = pinned(client_cpu, [sys.executable, "-m", "bench.client"])
        load_result: dict[str, Any] = {}

        def load() -> None:
            done = subprocess.run(
                command, cwd=ROOT, input=json.dumps(job), capture_output=True, text=True, timeout=seconds + 60
            )
            load_result.update(json.loads(done.stdout))

        thread = threading.Thread(target=load)
        thread.start()
        record, _ = pinned(client_cpu, [py_spy, "record", "--pid", str(server.pid), "--duration", str(int(seconds))])
        record += ["--rate", "250", "--native", "--format", "raw", "--output", str(raw_path)]
        threading.Event().wait(1.2)  # past the client's warm-up
        subprocess.run(record, cwd=ROOT, capture_output=True, text=True, timeout=seconds + 60, check=True)
        thread.join()
    finally:
        server.stop()
    folded = fold(raw_path.read_text())
    cpu_ms = load_result.get("server_cpu_ms_per_call", float("nan"))
    folded["server_cpu_ms_per_call"] = cpu_ms
    folded["calls_per_s"] = load_result.get("calls_per_s")
    folded["ms_per_call"] = {part: share * cpu_ms for part, share in folded["parts"].items()}
    folded["raw"] = str(raw_path.relative_to(ROOT))
    folded["errors"] = load_result.get("errors", [])
    return folded
