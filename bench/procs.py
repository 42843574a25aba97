"""Starting and stopping benchmark processes, each pinned to one core; CPU readings from /proc."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["ROOT", "ServerProcess", "child_env", "pinned"]

ROOT = Path(__file__).resolve().parents[1]
TASKSET = shutil.which("taskset")


def pinned(cpu: int, argv: list[str]) -> tuple[list[str], list[str]]:
    """(command, extra args): ``taskset -c CPU`` in front when present, else ``--cpu CPU`` for the child."""
    if TASKSET is not None:
        return [TASKSET, "-c", str(cpu), *argv], []
    return argv, ["--cpu", str(cpu)]


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("FASTMCP_LOG_LEVEL", "WARNING")
    env["PYTHONUNBUFFERED"] = "1"
    return env


class ServerProcess:
    """One ``python -m bench.serve KIND`` process on 127.0.0.1, pinned to ``cpu``; stop() ends it by PID."""

    def __init__(self, kind: str, options: dict[str, Any], cpu: int, log: Path) -> None:
        self.kind = kind
        self.options = options
        self.cpu = cpu
        self.log = log
        self.port = 0
        self.pid = 0
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30.0) -> None:
        command, extra = pinned(self.cpu, [sys.executable, "-m", "bench.serve", self.kind])
        command += ["--options", json.dumps(self.options), *extra]
        with self.log.open("ab") as log:
            self._proc = subprocess.Popen(command, cwd=ROOT, env=child_env(), stdout=subprocess.PIPE, stderr=log)
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(f"server {self.kind} exited at start; see {self.log}")
        info = json.loads(line)
        self.port, self.pid = int(info["port"]), int(info["pid"])
        if self.pid != self._proc.pid:
            raise RuntimeError(f"server {self.kind}: pid {self.pid} is not the started process {self._proc.pid}")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"server {self.kind} exited while starting; see {self.log}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"server {self.kind} did not listen on {self.port} within {timeout}s")

    def affinity(self) -> set[int]:
        return os.sched_getaffinity(self.pid)

    def stop(self) -> None:
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        if proc.stdout is not None:
            proc.stdout.close()
