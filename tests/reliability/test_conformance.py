"""The official MCP conformance suite against a mcpkit server, once per protocol era.

``tests/conformance/run.py`` installs the pinned suite and Node from npm (cached),
serves ``tests/conformance/server.py`` as a real process and judges the results
against ``tests/conformance/expected-failures.yaml``. Without npm or the registry the
era tests skip locally and fail under ``CI=true``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ci import missing as _missing
from node_toolchain import RUN, runner
from reliability.callers import LEGACY, MODERN
from reliability.figures import Figures

ROOT = Path(__file__).resolve().parents[2]
#: Added to run.py's own worst case (``WORST_CASE_SECONDS``, the sum of its timeouts) for Python's start
#: and the steps it does not bound, so that run.py always reports its own timeouts first. Waiting for
#: another run's npm install (the cache lock) is not counted.
MARGIN_SECONDS = 60
EXIT_UNAVAILABLE = 3


def run_conformance(spec_version: str) -> subprocess.CompletedProcess[str]:
    """``run.py`` for ``spec_version``, in a process group of its own: on timeout the whole group is killed
    (run.py, its ``mcpkit run`` server, node and npm), and the test fails with the output so far."""
    timeout = runner().WORST_CASE_SECONDS + MARGIN_SECONDS
    command = [sys.executable, str(RUN), "--spec-version", spec_version]
    with subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate(timeout=30)  # the pipes close as the group dies
            pytest.fail(
                f"the conformance run for {spec_version} took over {timeout:.0f} s; killed its process group.\n"
                f"stdout:\n{stdout}\nstderr:\n{stderr}"
            )
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


@pytest.mark.parametrize("spec_version", [MODERN, LEGACY])
def test_the_official_suite_finds_no_unexpected_failure(spec_version: str, figures: Figures) -> None:
    done = run_conformance(spec_version)
    try:
        summary: dict[str, Any] = json.loads(done.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"run.py printed no JSON summary (exit {done.returncode}):\n{done.stdout}\n{done.stderr}")
    if done.returncode == EXIT_UNAVAILABLE:
        _missing(f"the conformance suite cannot run here: {summary['unavailable']}")
    assert "error" not in summary, summary["error"]

    expected: dict[str, str] = summary["expected_failures"]
    figures.record(
        inputs=summary["total"],
        detail=(
            f"{summary['conformance']} on Node {summary['node'].lstrip('v')}, protocol {spec_version}: "
            f"{summary['passed']} of {summary['total']} scenarios pass whole, {len(expected)} fail as expected "
            f"(features mcpkit does not offer); {summary['checks']['passed']} checks passed"
        ),
    )
    figures.attach(
        "conformance",
        {
            "spec_version": spec_version,
            "total": summary["total"],
            "passed": summary["passed"],
            "expected_failures": expected,
            "unexpected": summary["unexpected"],
        },
    )
    assert summary["unexpected"] == [], f"unexpected failures:\n{summary.get('transcript_tail', '')}"
    assert summary["stale"] == [], f"listed as expected failures but now passing: {summary['stale']}"
    assert summary["server_tracebacks"] == 0, "the fixture server logged a traceback during the run"
    assert done.returncode == 0, done.stderr


def test_every_expected_failure_gives_its_reason(tmp_path: Path) -> None:
    run = runner()
    listed = run.read_expected_failures(RUN.parent / "expected-failures.yaml")  # empty now: every scenario passes
    reasoned = tmp_path / "reasoned.yaml"
    reasoned.write_text("server:\n  - server-sse-polling  # no event store\n")
    bare = tmp_path / "bare.yaml"
    bare.write_text("server:\n  - server-sse-polling\n")

    assert all(reason.strip() for reason in listed.values())
    assert run.read_expected_failures(reasoned) == {"server-sse-polling": "no event store"}
    with pytest.raises(run.RunError, match="'server-sse-polling' has no reason; add one as a comment after it"):
        run.read_expected_failures(bare)


def test_results_are_judged_as_the_suite_judges_its_baseline() -> None:
    def check(check_id: str, status: str) -> dict[str, str]:
        return {"id": check_id, "status": status}

    results = {
        "tools-list": [check("tools-list", "SUCCESS"), check("wire-schema-valid", "SUCCESS")],
        "resources-list": [check("resources-list", "FAILURE")],
        "caching": [check("prompts-hints", "FAILURE"), check("tools-hints", "SUCCESS")],
        "sep-2164": [check("error-code", "WARNING"), check("note", "INFO")],
        "retried": [check("step", "SUCCESS"), check("step", "FAILURE")],
        "fixed": [check("now-passes", "SUCCESS")],
    }
    expected = {
        "resources-list": "no resources",
        "caching:prompts-hints": "no prompts",
        "fixed": "was broken",
        "tools-list:tools-list": "was broken too",
    }

    outcome = runner().judge(results, expected)

    assert outcome.expected == {"resources-list": "no resources", "caching": "no prompts (check prompts-hints)"}
    assert outcome.unexpected == ["retried", "sep-2164"]  # a warning fails; a repeated id takes its worst status
    assert outcome.stale == ["fixed", "tools-list:tools-list"]
    assert outcome.scenarios["tools-list"]["verdict"] == "passed"
    assert outcome.scenarios["caching"]["verdict"] == "expected"
