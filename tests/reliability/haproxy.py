"""HAProxy from Debian's package in front of server processes, on loopback, stopped by its PID.

``Balancer`` writes a configuration with one frontend and a round-robin backend over the given ports, checked
every 200 ms (one failed check takes a server out); ``sticky=True`` pins each 2025-11-25 session to the instance
that created it, by its ``Mcp-Session-Id`` (learned from the initialize response, looked up on every request).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from reliability.processes import free_port

__all__ = ["Balancer", "haproxy"]


def haproxy() -> str | None:
    return shutil.which("haproxy") or ("/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists() else None)


class Balancer:
    def __init__(self, binary: str, ports: Sequence[int], folder: Path, *, sticky: bool) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._binary = binary
        self._config = folder / f"haproxy-{self.port}.cfg"
        servers = "\n".join(
            f"    server instance{number} 127.0.0.1:{port} check inter 200ms fall 1 rise 1"
            for number, port in enumerate(ports)
        )
        stickiness = (
            "    stick-table type string len 64 size 100k expire 30m\n"
            "    stick on req.hdr(mcp-session-id)\n"
            "    stick store-response res.hdr(mcp-session-id)\n"
            if sticky
            else ""
        )
        self._config.write_text(
            "global\n    maxconn 2000\n"
            "defaults\n    mode http\n    timeout connect 2s\n    timeout client 30s\n    timeout server 30s\n"
            "    option redispatch\n    retries 2\n"
            f"frontend mcp\n    bind 127.0.0.1:{self.port}\n    default_backend instances\n"
            f"backend instances\n    balance roundrobin\n{stickiness}{servers}\n"
        )
        self._process: subprocess.Popen[bytes] | None = None
        self._log = folder / f"haproxy-{self.port}.log"

    def start(self) -> Balancer:
        check = subprocess.run([self._binary, "-c", "-f", str(self._config)], capture_output=True, text=True)
        if check.returncode != 0:
            raise RuntimeError(f"haproxy refused its configuration:\n{check.stdout}{check.stderr}")
        with self._log.open("ab") as sink:
            self._process = subprocess.Popen(
                [self._binary, "-db", "-f", str(self._config)], stdout=sink, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"haproxy did not listen on {self.port}: {self._log.read_text(errors='replace')}")

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            self._process.wait(timeout=10)
