"""Redis for tests: the machine's shared server under a throwaway prefix, or a private one to stop and start.

Without Redis the tests that need it skip, with the reason; under ``CI=true`` they fail instead.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
import redis

from ci import missing as _missing

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
START_TIMEOUT_SECONDS = 10.0
#: Redis Cluster binds its bus on the client port plus this.
CLUSTER_BUS_OFFSET = 10_000


def _answers(url: str) -> bool:
    client = redis.Redis.from_url(url, socket_connect_timeout=1.0, socket_timeout=1.0)
    try:
        return bool(client.ping())
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        return False
    finally:
        client.close()


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The shared test Redis (env ``MCPKIT_TEST_REDIS_URL``, else the local default)."""
    url = os.environ.get("MCPKIT_TEST_REDIS_URL", DEFAULT_REDIS_URL)
    if not _answers(url):
        _missing(f"no Redis answers at {url}; start one or set MCPKIT_TEST_REDIS_URL")
    return url


def delete_prefix(url: str, prefix: str) -> None:
    """Delete every key under ``prefix`` in the Redis at ``url``."""
    client = redis.Redis.from_url(url)
    try:
        names = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if names:
            client.delete(*names)
    finally:
        client.close()


@pytest.fixture
def redis_prefix(redis_url: str) -> Iterator[str]:
    """A key prefix of this test's own; every key under it is deleted afterwards."""
    prefix = f"mcpkit-test:{uuid.uuid4().hex}:"
    yield prefix
    delete_prefix(redis_url, prefix)


class ExitedError(RuntimeError):
    """A ``redis-server`` that exited while starting (for one, a port taken meanwhile)."""


class PrivateRedis:
    """A ``redis-server`` this test started on a loopback port; stop and start it at will."""

    def __init__(self, binary: str, port: int, directory: Path, extra: Sequence[str] = ()) -> None:
        self.port = port
        self._binary = binary
        self._directory = directory
        self._extra = list(extra)
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start (again) on the same port and wait until it answers PING."""
        if self._process is not None:
            return
        command = [self._binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        command += ["--appendonly", "no", "--dir", str(self._directory), *self._extra]
        log = self._directory / f"redis-{self.port}.log"
        with log.open("ab") as sink:
            self._process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while not _answers(self.url):
            exited = self._process.poll() is not None
            if exited or time.monotonic() > deadline:
                self.stop()
                said = log.read_text(errors="replace").strip().splitlines()[-5:]
                raise (ExitedError if exited else RuntimeError)(
                    f"redis-server did not come up on port {self.port}; it said: " + " | ".join(said)
                )
            time.sleep(0.02)

    def freeze(self) -> None:
        """Suspend the server (SIGSTOP): connections stay open but nothing answers."""
        os.kill(self.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        """Resume a frozen server (SIGCONT)."""
        os.kill(self.pid, signal.SIGCONT)

    def stop(self) -> None:
        """Terminate the server this object started (by its PID) and wait for it to exit."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:  # never started, or exited by itself (and reaped)
            return
        os.kill(process.pid, signal.SIGCONT)  # a frozen server could not act on SIGTERM
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    @property
    def running(self) -> bool:
        """Whether the server this object started is still alive."""
        return self._process is not None and self._process.poll() is None

    def reap(self) -> None:
        """Forget a server that was killed from outside (``Cluster.kill``), after waiting for its exit."""
        process, self._process = self._process, None
        if process is not None:
            process.wait(timeout=5)

    @property
    def pid(self) -> int:
        if self._process is None:
            raise RuntimeError("the private redis-server is not running")
        return self._process.pid


def _free_port(highest: int = 65535) -> int:
    """A free loopback port no higher than ``highest``."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind(("127.0.0.1", 0))
            port: int = probe.getsockname()[1]
        if port <= highest:
            return port


def _free_cluster_port() -> int:
    """A free port whose cluster bus port (the port + 10000, which Redis Cluster also binds) is free too.

    Both are taken below the kernel's range of ephemeral ports, where no outgoing connection of this test run can
    take one between this check and ``redis-server`` binding it (seen: "redis-server did not come up"); each is
    handed out once per run.
    """
    lowest, highest = 10_000, _ephemeral_ports()[0] - CLUSTER_BUS_OFFSET - 1
    while True:
        port = random.randint(lowest, highest) if highest > lowest else _free_port(65535 - CLUSTER_BUS_OFFSET)
        if port in _HANDED_OUT:
            continue
        try:
            for candidate in (port, port + CLUSTER_BUS_OFFSET):
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
                    probe.bind(("127.0.0.1", candidate))
        except OSError:
            continue
        _HANDED_OUT.add(port)
        return port


_HANDED_OUT: set[int] = set()


def _ephemeral_ports() -> tuple[int, int]:
    """The kernel's range for outgoing connections' local ports (Linux's default where it cannot be read)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


@pytest.fixture
def make_private_redis(tmp_path: Path) -> Iterator[Callable[..., PrivateRedis]]:
    r"""``make_private_redis("--maxmemory", "2mb")``: started ``redis-server``\ s of this test's own, stopped after."""
    binary = shutil.which("redis-server")
    if binary is None:
        _missing("redis-server is not on PATH")
    started: list[PrivateRedis] = []

    def make(*extra: str) -> PrivateRedis:
        directory = tmp_path / f"redis-{len(started)}"
        directory.mkdir()
        port = _free_cluster_port() if "--cluster-enabled" in extra else _free_port()
        server = PrivateRedis(binary, port, directory, extra)
        started.append(server)
        server.start()
        return server

    try:
        yield make
    finally:
        for server in started:
            server.stop()


@pytest.fixture
def private_redis(make_private_redis: Callable[..., PrivateRedis]) -> PrivateRedis:
    """A fresh ``redis-server`` of this test's own, always stopped at teardown."""
    return make_private_redis()
