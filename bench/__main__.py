"""``python -m bench``: every server side by side under load, the micro-benchmarks, targets, and the report.

Full run (about 12-15 minutes): ``python -m bench``. Development: ``python -m bench --quick`` (about 2).
Writes ``docs/benchmarks.md``, ``docs/img/benchmarks.png`` and ``bench/results/latest.json``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from importlib import metadata
from pathlib import Path
from typing import Any

from bench.cases import CASES, like_for_like, server_specs
from bench.checks import official_client_call, post_check, pre_check
from bench.imports import import_costs
from bench.page import render
from bench.procs import ROOT, TASKSET, ServerProcess, pinned
from bench.report import RUN_FIGURES, evaluate_targets, summarise, write_chart
from bench.search_report import search_targets

SERVER_CPU, CLIENT_CPU = 0, 1
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
RESULTS = ROOT / "bench" / "results"


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="one short round and small micro sizes (~2 min)")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 5, quick 1)")
    parser.add_argument("--warmup", type=float, help="seconds of warm-up per run (default 1, quick 0.5)")
    parser.add_argument("--duration", type=float, help="measured seconds per run (default 3, quick 1.5)")
    parser.add_argument("--cases", help="comma-separated case names (default: all)")
    parser.add_argument(
        "--pairs", type=int, help="back-to-back mcpkit/SDK pairs for the CPU target (default 12, quick 2; 0: none)"
    )
    parser.add_argument("--skip-micro", action="store_true")
    parser.add_argument("--skip-search", action="store_true", help="skip the search benchmarks (about 6 minutes)")
    parser.add_argument("--skip-history", action="store_true", help="skip the conversation history benchmarks")
    parser.add_argument(
        "--skip-portability", action="store_true", help="skip export and import (a 1,000,000-value export: minutes)"
    )
    parser.add_argument("--skip-cluster", action="store_true", help="skip the Redis Cluster benchmarks (a minute)")
    parser.add_argument("--skip-capacity", action="store_true", help="skip bytes per value on every store (a minute)")
    parser.add_argument("--skip-imports", action="store_true")
    parser.add_argument(
        "--skip-instructions", action="store_true", help="skip the callgrind instruction counts (about 3 minutes)"
    )
    parser.add_argument(
        "--profile",
        choices=["auto", "always", "never"],
        default="auto",
        help="py-spy profiles of the bare SDK and mcpkit (memory): when a server target fails (auto)",
    )
    parser.add_argument(
        "--base", metavar="REV", help="also count the plain call's instructions at this git revision and now"
    )
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md and the chart")
    parser.add_argument("--render", metavar="JSON", help="only rewrite the page and chart from a saved results file")
    args = parser.parse_args(argv)
    args.rounds = args.rounds or (1 if args.quick else 5)
    args.warmup = args.warmup if args.warmup is not None else (0.5 if args.quick else 1.0)
    args.duration = args.duration or (1.5 if args.quick else 3.0)
    args.pairs = args.pairs if args.pairs is not None else (2 if args.quick else 12)
    args.pair_duration = 1.5 if args.quick else 2.0
    return args


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "absent"


def _redis_info() -> dict[str, Any]:
    import redis

    client = redis.Redis.from_url(REDIS_URL)
    try:
        return dict(client.info("server"))
    finally:
        client.close()


def _git() -> str:
    """HEAD's short hash, with "+ uncommitted library changes" when framework/, plugins/ or apps/ differ."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "framework", "plugins", "apps", "pyproject.toml"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
    except OSError:
        return "unknown"
    return head.stdout.strip() + (" + uncommitted library changes" if dirty.stdout.strip() else "")


def machine(args: argparse.Namespace, argv: list[str]) -> dict[str, Any]:
    import sqlite3

    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor() or "unknown",
    )
    versions = {
        name: _version(name)
        for name in (
            "mcpkit",
            "mcp",
            "mcp-types",
            "fastmcp",
            "starlette",
            "uvicorn",
            "h11",
            "pydantic",
            "cryptography",
            "redis",
        )
    }
    versions["redis-server"] = str(_redis_info().get("redis_version", "?"))
    versions["sqlite"] = sqlite3.sqlite_version
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python -m bench" + "".join(f" {shlex.quote(a)}" for a in argv),
        "commit": _git(),
        "python_executable": sys.executable,
        "mode": "quick" if args.quick else "full",
        "nproc": os.cpu_count(),
        "cpu_model": model,
        "kernel": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "versions": versions,
        "loadavg_start": " ".join(f"{v:.2f}" for v in os.getloadavg()),
        "pinning": "taskset -c N" if TASKSET else "os.sched_setaffinity",
        "server_cpu": SERVER_CPU,
        "client_cpu": CLIENT_CPU,
        "rounds": args.rounds,
        "warmup_s": args.warmup,
        "duration_s": args.duration,
    }


def run_client(job: dict[str, Any]) -> dict[str, Any]:
    command, _ = pinned(CLIENT_CPU, [sys.executable, "-m", "bench.client"])
    timeout = job["warmup"] + job["duration"] + 120
    done = subprocess.run(command, cwd=ROOT, input=json.dumps(job), capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        return {"calls": 0, "errors": [f"client exited {done.returncode}: {done.stderr[-500:]}"]} | _EMPTY
    return json.loads(done.stdout)


_EMPTY: dict[str, Any] = {key: float("nan") for key in ("window_s", *RUN_FIGURES)} | {
    "extra_cpu_ms_per_call": {},
    "per_user_calls": {},
    "last": {},
}


def verify_with_official_client(servers: dict[str, ServerProcess], cases: list[Any]) -> None:
    for name, server in servers.items():
        tool = next(case.tool for case in cases if case.server == name)
        if tool == "increment":
            got = official_client_call(server.port, "increment", {})
            assert isinstance(got.get("count"), int), got
        else:
            official_client_call(server.port, "set_signature", {"signature": "official client"})
            got = official_client_call(server.port, "draft_reply", {"ticketId": "T-1", "text": "hello"})
            assert str(got.get("reply", "")).endswith("official client"), got
        print(f"  official mcp client -> {name}: ok ({got})", flush=True)


def measure(
    case: Any, server: ServerProcess, concurrency: int, warmup: float, duration: float, tag: str, redis_pid: int
) -> dict[str, Any]:
    """One closed-loop run of ``case``, checked before and after; the client's result with its problems."""
    expected, problems = pre_check(case, server.port, tag)
    extra = {"redis-server": redis_pid} if case.server == "mcpkit-redis" and redis_pid else {}
    job = {
        "port": server.port,
        "server_pid": server.pid,
        "tool": case.tool,
        "concurrency": concurrency,
        "warmup": warmup,
        "duration": duration,
        "max_calls": 200_000,
        "expected": expected,
        "tag": tag,
        "extra_pids": extra,
    }
    result = run_client(job)
    problems += post_check(case, server.port, expected, result)
    result["problems"] = problems
    for heavy in ("per_user_calls", "last"):
        result.pop(heavy, None)
    return result


def _line(label: str, case: Any, result: dict[str, Any]) -> str:
    problems = result["problems"]
    status = "ok" if not problems else f"CHECK FAILED: {problems[:2]}"
    return (
        f"  {label} {case.name:<19} {result['calls_per_s']:7.0f} calls/s  p50 {result['p50_ms']:6.2f} ms"
        f"  server {result['server_cpu_ms_per_call']:.3f} ms/call (busy {result['server_busy'] * 100:3.0f} %)  {status}"
    )


def run_load(args: argparse.Namespace, cases: list[Any], servers: dict[str, ServerProcess]) -> dict[str, Any]:
    redis_pid = int(_redis_info().get("process_id", 0))
    load: dict[str, dict[str, list[dict[str, Any]]]] = {case.name: {"1": [], "16": []} for case in cases}
    for round_no in range(args.rounds):
        for concurrency in (1, 16):
            for case in cases:
                tag = f"r{round_no}c{concurrency}"
                result = measure(case, servers[case.server], concurrency, args.warmup, args.duration, tag, redis_pid)
                result["round"] = round_no
                load[case.name][str(concurrency)].append(result)
                print(_line(f"round {round_no + 1}/{args.rounds} c={concurrency:<2}", case, result), flush=True)
    return load


def run_pairs(args: argparse.Namespace, cases: list[Any], servers: dict[str, ServerProcess]) -> dict[str, Any]:
    """mcpkit, the bare SDK and FastMCP back to back at c=16 (A B C, then C B A, ...), for the ratio targets.

    The load rounds put other cases between them, and this shared machine changes speed by up to
    1.8x from one minute to the next; runs seconds apart, in alternating order, see the same machine.
    """
    by_name = {case.name: case for case in cases}
    group = [by_name.get(name) for name in (like_for_like()["mcpkit-memory"], "mcpkit-memory", "fastmcp")]
    present = [case for case in group if case is not None]
    if len(present) < 2 or by_name.get("mcpkit-memory") is None:
        return {}
    cpu: dict[str, list[float]] = {case.name: [] for case in present}
    rate: dict[str, list[float]] = {case.name: [] for case in present}
    problems: list[str] = []
    for pair in range(args.pairs):
        for case in present if pair % 2 == 0 else reversed(present):
            result = measure(case, servers[case.server], 16, args.warmup, args.pair_duration, f"p{pair}", 0)
            problems += result["problems"]
            cpu[case.name].append(result["server_cpu_ms_per_call"])
            rate[case.name].append(result["calls_per_s"])
            print(_line(f"back to back {pair + 1}/{args.pairs} c=16", case, result), flush=True)
    return {"server_cpu_ms_per_call": cpu, "calls_per_s": rate, "problems": problems}


def clean_redis(prefix: str) -> int:
    from bench.micro import clean_redis as clean

    return clean(prefix)


def _run_part(module: str, args: argparse.Namespace, timeout: int, *, quick: bool = True) -> dict[str, Any]:
    """``python -m bench.<module>`` in its own process, pinned to the server core; its JSON, or the error."""
    command, extra = pinned(SERVER_CPU, [sys.executable, "-m", f"bench.{module}"])
    command += extra + (["--quick"] if quick and args.quick else [])
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        print(done.stderr[-3000:], file=sys.stderr)
        return {"error": done.stderr[-1000:]}
    return dict(json.loads(done.stdout))


def run_micro(args: argparse.Namespace) -> dict[str, Any]:
    return _run_part("micro", args, 900)


def run_search(args: argparse.Namespace) -> dict[str, Any]:
    return _run_part("search", args, 2400)


def run_history(args: argparse.Namespace) -> dict[str, Any]:
    return _run_part("history", args, 1800, quick=False)


def run_portability(args: argparse.Namespace) -> dict[str, Any]:
    return _run_part("portability", args, 3600)


def run_cluster(args: argparse.Namespace) -> dict[str, Any]:
    return _run_part("cluster", args, 900)


def run_capacity(args: argparse.Namespace) -> dict[str, Any]:
    """Bytes per value on every store (``bench.capacity``), saved for docs/scaling.md as well."""
    results = _run_part("capacity", args, 1800, quick=False)
    if "error" not in results:
        (ROOT / "bench" / "results" / "capacity.json").write_text(json.dumps(results, indent=1) + "\n")
    return results


def findings_for(results: dict[str, Any]) -> list[str]:
    """Plain sentences for each failed target, from the profiles and micro-benchmarks of this run."""
    out: list[str] = []
    failed = {t["target"].split(",")[0] for t in results["targets"] if t["result"] == "FAIL"}
    profiles = results.get("profiles", {})
    kit, sdk = profiles.get("mcpkit-memory", {}), profiles.get(like_for_like()["mcpkit-memory"], {})
    if any(name.startswith(("CPU/call", "calls/s")) for name in failed) and "parts" in kit and "parts" in sdk:
        owners = [p for p in kit["parts"] if not p.startswith("incl.")]
        diffs = sorted(((kit["ms_per_call"][p] - sdk["ms_per_call"].get(p, 0.0), p) for p in owners), reverse=True)
        gap = kit["server_cpu_ms_per_call"] - sdk["server_cpu_ms_per_call"]
        out.append(
            f"- Server CPU per call while profiled: mcpkit {kit['server_cpu_ms_per_call']:.3f} ms, bare SDK"
            f" {sdk['server_cpu_ms_per_call']:.3f} ms (same json_response; gap {gap:+.3f} ms)."
            " Parts where mcpkit spends more than the SDK (ms/call): "
            + "; ".join(f"{p} {d:+.3f}" for d, p in diffs if d > 0.01)
            + ". Parts where it spends less: "
            + "; ".join(f"{p} {d:+.3f}" for d, p in reversed(diffs) if d < -0.01)
            + f". All of mcpkit_remember (inclusive): {kit['ms_per_call']['incl. all of mcpkit_remember']:.3f} ms;"
            f" Dispatcher.call_tool (inclusive): {kit['ms_per_call']['incl. mcpkit Dispatcher.call_tool']:.3f} ms;"
            f" the SDK's MCPServer tool call (inclusive): {sdk['ms_per_call']['incl. SDK MCPServer tool call']:.3f} ms."
        )
    pairs = results.get("micro", {}).get("pairs", {})
    pair, share = pairs.get("set+get memory/on"), pairs.get("keyring seal+open")
    if any(name.startswith("set+get") for name in failed) and pair and share:
        off = pairs.get("set+get memory/off", {})
        out.append(
            f"- set+get, memory store (best runs): {pair['min_us']:.1f} us with encryption,"
            f" {off.get('min_us', float('nan')):.1f} us with the bench's pass-through keyring; one AES-GCM seal+open"
            f" on its own {share['min_us']:.1f} us. The function-level split is in the micro-benchmark section"
            " (cProfile of the pair)."
        )
    return out


def targets_for(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Every target's verdict from one run's results (what was not measured counts as missing)."""
    return evaluate_targets(
        results["summary"],
        results.get("micro", {}),
        results.get("imports", {}),
        results.get("instructions"),
        results.get("back_to_back"),
    ) + search_targets(results.get("search", {}))


def write_docs(results: dict[str, Any]) -> list[str]:
    meta = results["meta"]
    findings = findings_for(results)
    write_chart(
        results["summary"],
        ROOT / "docs" / "img" / "benchmarks.png",
        f"mcpkit benchmarks, {meta['date']} ({meta['mode']}), one uvicorn worker on one core",
    )
    page = ROOT / "docs" / "benchmarks.md"
    page.write_text(render(results, findings, page.read_text() if page.exists() else None))
    capacity = results.get("capacity")
    if capacity and "error" not in capacity:
        from bench.scaling import PAGE, rewrite

        PAGE.write_text(rewrite(PAGE.read_text(), capacity, results))
    return findings


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse(argv)
    if args.render:
        results = json.loads(Path(args.render).read_text())
        results["targets"] = targets_for(results)
        write_docs(results)
        print(f"rewrote docs/benchmarks.md and docs/img/benchmarks.png from {args.render}")
        return 0
    started = time.monotonic()
    os.sched_setaffinity(0, {CLIENT_CPU})
    RESULTS.mkdir(parents=True, exist_ok=True)
    log = RESULTS / "servers.log"
    log.write_text("")
    meta = machine(args, argv)
    print(f"mcpkit bench ({meta['mode']}): {meta['nproc']} cores, {meta['cpu_model']}, load {meta['loadavg_start']}")
    wanted = set(args.cases.split(",")) if args.cases else None
    cases = [case for case in CASES if wanted is None or case.name in wanted]
    tmp = tempfile.mkdtemp(prefix="mcpkit-bench-")
    prefix = f"mcpkit-bench:{uuid.uuid4().hex[:12]}:"
    specs = server_specs(tmp, REDIS_URL, prefix)
    servers: dict[str, ServerProcess] = {}
    results: dict[str, Any] = {"meta": meta}
    try:
        for name in dict.fromkeys(case.server for case in cases):
            spec = specs[name]
            server = ServerProcess(spec.kind, spec.options, SERVER_CPU, log)
            servers[name] = server
            server.start()
            affinity = server.affinity()
            if affinity != {SERVER_CPU}:
                raise RuntimeError(f"server {name} runs on cores {affinity}, not {{{SERVER_CPU}}}")
            print(f"  started {name} (pid {server.pid}, port {server.port}, cores {sorted(affinity)})", flush=True)
        verify_with_official_client(servers, cases)
        results["load"] = run_load(args, cases, servers)
        if args.pairs:
            results["back_to_back"] = run_pairs(args, cases, servers)
    finally:
        for server in servers.values():
            server.stop()
        results["redis_keys_cleaned"] = clean_redis(prefix)
        shutil.rmtree(tmp, ignore_errors=True)
    results["summary"] = summarise(results["load"])
    if not args.skip_micro:
        print("  micro-benchmarks ...", flush=True)
        results["micro"] = run_micro(args)
    if not args.skip_search:
        print("  search benchmarks ...", flush=True)
        results["search"] = run_search(args)
    if not args.skip_history:
        print("  conversation history benchmarks ...", flush=True)
        results["history"] = run_history(args)
    if not args.skip_portability:
        print("  export and import ...", flush=True)
        results["portability"] = run_portability(args)
    if not args.skip_cluster:
        print("  Redis Cluster benchmarks ...", flush=True)
        results["cluster"] = run_cluster(args)
    if not args.skip_capacity:
        print("  bytes per value on every store ...", flush=True)
        results["capacity"] = run_capacity(args)
    if not args.skip_imports:
        print("  import times ...", flush=True)
        results["imports"] = import_costs(3 if args.quick else 7, SERVER_CPU)
    if not args.skip_instructions:
        from bench.instructions import GATE_CASES, available, count_all

        if available():
            print("  instructions per call (callgrind) ...", flush=True)
            counted = {case.server: specs[case.server] for case in cases}
            if "mcpkit-memory" in counted:  # the OAuth gate's cost, beside mcpkit with static keys
                counted |= {name: specs[name] for name in GATE_CASES}
            results["instructions"] = count_all(counted)
            print("  the tasks extension and a plain call (callgrind) ...", flush=True)
            from bench.tasks import measure as tasks_cost

            results["tasks"] = tasks_cost()
        else:
            print("  valgrind not installed: no instruction counts", flush=True)
    if args.base:
        from bench.instructions import available
        from bench.revisions import compare

        if available():
            print(f"  the plain call at {args.base} and now (callgrind) ...", flush=True)
            results["revisions"] = compare(args.base, specs["mcpkit-memory"])
    results["targets"] = targets_for(results)
    server_failed = any(
        t["result"] == "FAIL" and t["target"].startswith(("CPU/call", "calls/s")) for t in results["targets"]
    )
    if args.profile == "always" or (args.profile == "auto" and server_failed):
        from bench.profiling import profile_server

        sdk_name = like_for_like()["mcpkit-memory"]
        print(f"  profiling {sdk_name} and mcpkit-memory with py-spy ...", flush=True)
        results["profiles"] = {}
        for name in (sdk_name, "mcpkit-memory"):
            spec = specs[name]
            results["profiles"][name] = profile_server(
                name, spec.kind, spec.options, 6.0 if args.quick else 15.0, RESULTS, SERVER_CPU, CLIENT_CPU
            )
    meta["loadavg_end"] = " ".join(f"{v:.2f}" for v in os.getloadavg())
    meta["commit_end"] = _git()
    meta["elapsed_s"] = time.monotonic() - started
    (RESULTS / ("quick.json" if args.quick else "latest.json")).write_text(json.dumps(results, indent=1))
    findings = findings_for(results) if args.no_docs else write_docs(results)
    from bench.report import load_table, targets_table

    print("\n".join(["", *load_table(results["summary"]), "", *targets_table(results["targets"]), "", *findings]))
    print(f"\nwrote docs/benchmarks.md, docs/img/benchmarks.png in {meta['elapsed_s'] / 60:.1f} minutes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
