"""``python -m mcpkit_helpdesk --oauth`` as the sign-in tests meet it: the help desk beside the identity provider."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from ci import missing
from mcpkit_helpdesk import IdentityProviderUnavailable, install_identity_provider
from reliability.processes import free_port

START_SECONDS = 60.0


@dataclass(frozen=True)
class HelpDesk:
    url: str  # the URL it printed, at 127.0.0.1
    issuer: str
    output: Path

    @property
    def at_localhost(self) -> str:
        """The same server under the name ``localhost``, which the issue's clients used."""
        return self.url.replace("127.0.0.1", "localhost")


@contextmanager
def oauth_help_desk(folder: Path) -> Iterator[HelpDesk]:
    """``python -m mcpkit_helpdesk --oauth`` on spare loopback ports, stopped by its PID (it stops the provider); skips
    (fails under ``CI=true``) when the provider cannot be installed."""
    try:
        install_identity_provider()
    except IdentityProviderUnavailable as exc:
        missing(f"the demo identity provider cannot be installed: {exc}")
    port, identity_port = free_port(), free_port()
    output = folder / "helpdesk.log"
    command = [
        sys.executable,
        "-m",
        "mcpkit_helpdesk",
        "--oauth",
        "--port",
        str(port),
        "--identity-port",
        str(identity_port),
    ]
    with output.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env={**os.environ, "CI": ""})
    try:
        deadline = time.monotonic() + START_SECONDS
        while "Stop with Ctrl+C." not in output.read_text(errors="replace"):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"python -m mcpkit_helpdesk --oauth did not start:\n{output.read_text(errors='replace')}")
            time.sleep(0.1)
        yield HelpDesk(f"http://127.0.0.1:{port}/mcp", f"http://127.0.0.1:{identity_port}", output)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)
