"""Real server processes for the reliability tests: ``mcpkit run TARGET --port N`` on 127.0.0.1, stopped by PID."""

from __future__ import annotations

import os
import resource
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

STARTUP_SECONDS = 20.0
STOP_SECONDS = 10.0


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class ServerProcess:
    """One ``mcpkit run`` subprocess; its output goes to a file the failure messages quote."""

    def __init__(
        self,
        target: str,
        *,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        port: int | None = None,
        args: Sequence[str] = (),
        open_files: int | None = None,
    ) -> None:
        self.target = target
        self.args = tuple(args)
        self.open_files = open_files
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.output = cwd / f"server-{self.port}-{time.monotonic_ns()}.log"
        self._cwd = cwd
        self._env = {**os.environ, **(env or {})}
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self._process is not None, "not started"
        return self._process.pid

    def start(self) -> ServerProcess:
        """Start it and wait until the port accepts connections (fails with the server's output)."""
        command = [
            sys.executable,
            "-m",
            "mcpkit",
            "run",
            self.target,
            "--port",
            str(self.port),
            "--log-level",
            "warning",
            *self.args,
        ]
        with self.output.open("ab") as sink:
            self._process = subprocess.Popen(
                command,
                cwd=self._cwd,
                env=self._env,
                stdout=sink,
                stderr=subprocess.STDOUT,
                preexec_fn=None if self.open_files is None else self._limit_open_files,
            )
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"{self.target} exited with {self._process.returncode}:\n{self.log()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return self
            except OSError:
                time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"{self.target} did not listen on {self.port} within {STARTUP_SECONDS}s:\n{self.log()}")

    def _limit_open_files(self) -> None:
        """In the child: soft and hard open-files limit ``open_files`` (the common 1,024), which it cannot raise."""
        assert self.open_files is not None
        resource.setrlimit(resource.RLIMIT_NOFILE, (self.open_files, self.open_files))

    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def stop(self) -> int:
        """A clean stop (SIGTERM, as systemd or Ctrl-C would); returns the exit code."""
        assert self._process is not None, "not started"
        if self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)
        return self._process.wait(timeout=STOP_SECONDS)

    def kill(self) -> None:
        """``kill -9``: no shutdown code runs."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait(timeout=STOP_SECONDS)

    def log(self) -> str:
        return self.output.read_text(errors="replace") if self.output.exists() else ""


@contextmanager
def serving(
    target: str,
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    args: Sequence[str] = (),
    open_files: int | None = None,
) -> Iterator[ServerProcess]:
    """A started ``ServerProcess`` that is killed (by its PID) when the block ends, whatever happened."""
    process = ServerProcess(target, cwd=cwd, env=env, args=args, open_files=open_files)
    try:
        yield process.start()
    finally:
        process.kill()
