"""``--reload``: bind the socket once, serve from a child process, and start a new child when a watched file changes.

The supervisor never imports the server's code: a child (``python -m mcpkit._cli._child``) does, and serves on
the socket it inherits. Connections that arrive while one child stops and the next starts wait in the socket's
queue instead of being refused, and the port stays the same, so a client (the Inspector) carries on. A child that
fails (a syntax error, an import error, the first one included) leaves the supervisor waiting for the next change. A
child holds the read end of a pipe the supervisor never writes to, and stops when it ends: a supervisor killed
outright leaves no server behind on its port. Watching is ``watchfiles``'s (inotify,
FSEvents, ReadDirectoryChangesW), as uvicorn's reload uses.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from ..http import ACCEPT_BACKLOG, listening_socket, url_of
from ._target import CommandError, is_file_target, module_folder, split_target

__all__ = [
    "GRACE_SECONDS",
    "STOP_SECONDS",
    "Companion",
    "Supervisor",
    "add_reload_dirs",
    "stop_process",
    "watched_dirs",
]

#: How long a server gets to finish its requests after SIGTERM before SIGINT, on which uvicorn stops waiting for
#: open connections (a client's listen or GET stream never ends by itself); the plugins still stop in order.
GRACE_SECONDS = 2.0
#: How long a process is given to stop after that, before it is killed.
STOP_SECONDS = 10.0
#: How often the watcher wakes with nothing changed, to notice a child or companion that ended.
_WAKE_MS = 500


class Companion(Protocol):
    """A process that lives beside the served server for as long as the supervisor (the Inspector of ``dev``)."""

    def start(self, url: str) -> None: ...

    def ended(self) -> int | None: ...

    def stop(self) -> None: ...


def add_reload_dirs(command: argparse.ArgumentParser) -> None:
    """``--reload-dir DIR``, repeatable: what the supervisor watches."""
    command.add_argument(
        "--reload-dir",
        action="append",
        metavar="DIR",
        dest="reload_dirs",
        help="a folder to watch (repeat for several; default: TARGET's folder, or the current one)",
    )


def watched_dirs(target: str, app_dir: str | None, given: Sequence[Path]) -> list[Path]:
    """The folders ``--reload`` watches: those given, else TARGET's folder (a file) or the one its module is
    imported from (``--app-dir``, the current folder, or its ``src``)."""
    for folder in given:
        if not folder.is_dir():
            raise CommandError(f"--reload-dir {folder}: no such folder.")
    if given:
        return [folder.resolve() for folder in given]
    location, _ = split_target(target)
    if is_file_target(location):
        if not Path(location).is_file():
            raise CommandError(f"No such file: {location}")
        return [Path(location).resolve().parent]
    return [module_folder(location, app_dir)]


class Supervisor:
    """Serves TARGET on ``host:port`` from a child process, started again when a ``.py`` file in ``dirs`` changes."""

    def __init__(
        self,
        target: str,
        app_dir: str | None,
        host: str,
        port: int,
        options: dict[str, Any],
        dirs: Sequence[Path],
        companion: Companion | None = None,
    ) -> None:
        self._target = target
        self._app_dir = None if app_dir is None else str(Path(app_dir).resolve())
        self._host = host
        self._port = port
        self._options = options
        self._dirs = list(dirs)
        self._companion = companion
        self._pipe: tuple[int, int] | None = None  # (read, write): each child's lifeline to this process

    def serve(self) -> int:
        """Serve until Ctrl+C or SIGTERM (0), or until the companion ends (its exit code, at least 1)."""
        if sys.platform == "win32":
            raise CommandError(
                "--reload hands the bound socket to each new server process, which mcpkit does on Linux and macOS "
                "only: on Windows, restart `mcpkit run` yourself (or run it under WSL)."
            )
        import watchfiles  # only --reload pays for the watcher

        sock = listening_socket(self._host, self._port)
        stop = threading.Event()
        previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
        child: subprocess.Popen[bytes] | None = None
        try:
            sock.listen(ACCEPT_BACKLOG)  # from here on connections queue, whether a child is serving or not
            os.set_inheritable(sock.fileno(), True)
            shown = ", ".join(str(folder) for folder in self._dirs)
            _say(f"mcpkit: watching {shown} for changes to .py files; each restarts the server (Ctrl+C stops)")
            child = self._start(sock.fileno())
            if self._companion is not None:
                self._companion.start(url_of(sock))
            changes = watchfiles.watch(
                *self._dirs,
                watch_filter=watchfiles.PythonFilter(),
                stop_event=stop,
                rust_timeout=_WAKE_MS,
                yield_on_timeout=True,
                raise_interrupt=False,
            )
            said_down = False
            for changed in changes:
                if changed:
                    stop_process(child)
                    _say(f"mcpkit: restarting the server: {_names(path for _, path in changed)} changed")
                    child, said_down = self._start(sock.fileno()), False
                elif child.poll() is not None and not said_down:
                    _say(f"mcpkit: the server stopped (exit code {child.returncode}); a change starts it again")
                    said_down = True
                ended = self._companion.ended() if self._companion is not None else None
                if ended is not None:
                    return ended or 1
        except KeyboardInterrupt:
            pass
        finally:
            signal.signal(signal.SIGTERM, previous)
            if child is not None:
                stop_process(child)
            if self._companion is not None:
                self._companion.stop()
            sock.close()
            if self._pipe is not None:
                for end in self._pipe:
                    os.close(end)
        return 0

    def _start(self, fd: int) -> subprocess.Popen[bytes]:
        if self._pipe is None:
            self._pipe = os.pipe()  # never written: its end (this process's end) is what the child waits for
        lifeline = self._pipe[0]
        order = {
            "target": self._target,
            "app_dir": self._app_dir,
            "host": self._host,
            "fd": fd,
            "supervisor": lifeline,
            "options": self._options,
        }
        # -P: the current folder is not put first on sys.path, where a file of the user's named like a module
        # mcpkit imports (json.py, types.py) would shadow it; the user's folder goes there once mcpkit is loaded.
        command = [sys.executable, "-P", "-m", "mcpkit._cli._child", json.dumps(order)]
        return subprocess.Popen(command, pass_fds=(fd, lifeline))


def stop_process(process: subprocess.Popen[Any]) -> None:
    """SIGTERM; SIGINT after ``GRACE_SECONDS`` (uvicorn's "force quit"); SIGKILL ``STOP_SECONDS`` later. Waits."""
    for ask, wait in ((process.terminate, GRACE_SECONDS), (_interrupt(process), STOP_SECONDS)):
        if process.poll() is not None:
            return
        ask()
        try:
            process.wait(wait)
            return
        except subprocess.TimeoutExpired:
            pass
    _say(f"mcpkit: process {process.pid} did not stop within {GRACE_SECONDS + STOP_SECONDS:g} s; killing it")
    process.kill()
    process.wait()


def _interrupt(process: subprocess.Popen[Any]) -> Callable[[], None]:
    return lambda: process.send_signal(signal.SIGINT)


def _names(paths: Iterable[str]) -> str:
    names = sorted({Path(path).name for path in paths})
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
