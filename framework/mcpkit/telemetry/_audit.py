"""``AuditLog``: a JSON Lines file of every memory operation (what a call read, wrote, deleted, searched), rotated by
size and age and kept for a bounded time; never a value, a plain key or a caller's name (docs/observability.md)."""

from __future__ import annotations

import glob
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..base import ConfigurationError
from ._audit_sink import AuditSink

__all__ = ["DEFAULT_KEEP", "DEFAULT_MAX_AGE", "DEFAULT_MAX_BYTES", "AuditLog", "CallNote", "current_call", "noted_call"]

#: The defaults of ``AuditLog``: a file rotates at 64 MiB or after a day, and seven rotated files are kept.
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_AGE = 86400.0
DEFAULT_KEEP = 7


@dataclass(frozen=True, slots=True)
class CallNote:
    """The call a memory operation belongs to, as the audit names it: the server's own names and ids only."""

    method: str
    tool: str | None
    request_id: str | None
    session: str | None = None


_CALL: ContextVar[CallNote | None] = ContextVar("mcpkit_audited_call", default=None)


def current_call() -> CallNote | None:
    """The call being served (noted only while a server has an audit log)."""
    return _CALL.get()


def noted_call(note: CallNote) -> object:
    """Note ``note`` as the current call; returns the token that ``forget_call`` takes."""
    return _CALL.set(note)


def forget_call(token: object) -> None:
    _CALL.reset(token)  # type: ignore[arg-type]


class AuditLog(AuditSink):
    """Appends one JSON line per memory operation to ``path``; the file rotates to ``path.1`` (``path.2``, ...) once
    it would pass ``max_bytes`` or its first line is ``max_age`` seconds old, and at most ``keep`` rotated files
    are kept (the oldest goes): the log takes at most ``(keep + 1) * max_bytes`` and covers about
    ``(keep + 1) * max_age`` seconds."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_age: float = DEFAULT_MAX_AGE,
        keep: int = DEFAULT_KEEP,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1024:
            raise ConfigurationError(
                f"AuditLog(max_bytes=...) is a whole number of bytes from 1024, not {max_bytes!r:.40}."
            )
        if isinstance(max_age, bool) or not isinstance(max_age, int | float) or not max_age > 0:
            raise ConfigurationError(f"AuditLog(max_age=...) is a number of seconds above 0, not {max_age!r:.40}.")
        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 0:
            raise ConfigurationError(f"AuditLog(keep=...) is a whole number of rotated files from 0, not {keep!r:.40}.")
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.max_age = float(max_age)
        self.keep = keep
        self._clock = clock
        self._file: IO[str] | None = None
        self._size = 0
        self._started = 0.0  # when the current file's first line was written

    def write(self, record: Mapping[str, Any]) -> None:
        """Append ``record`` (bounded fields: names, hashes, sizes) as one line, with its time ``at`` first."""
        now = self._clock()
        line = json.dumps({"at": round(now, 6), **record}, separators=(",", ":"), ensure_ascii=False) + "\n"
        size = len(line.encode())
        if self._file is None:
            self._open(now)
        if self._size and (self._size + size > self.max_bytes or now - self._started >= self.max_age):
            self._rotate(now)
        assert self._file is not None
        if not self._size:
            self._started = now
        self._file.write(line)
        self._file.flush()
        self._size += size

    def lines(self) -> Iterator[dict[str, Any]]:
        """Every kept line, oldest first (the rotated files, then the current one): what an operator's query reads."""
        for number in sorted(_rotated(self.path), reverse=True):  # every one there, not only ``keep``: a reader
            yield from _read(self.path.with_name(f"{self.path.name}.{number}"))  # may not know the server's keep
        yield from _read(self.path)

    def close(self) -> None:
        """Close the file (the next write opens it again)."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def _open(self, now: float) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # only the server's own user reads it (0600): the lines are hashes, but who called when is still the callers'
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._file = open(descriptor, "a", encoding="utf-8")  # noqa: SIM115 - kept open between writes
        self._size = self._file.tell()
        first = _first_at(self.path) if self._size else None
        self._started = now if first is None else first

    def _rotate(self, now: float) -> None:
        """``path`` becomes ``path.1``, each older one a number up, the one beyond ``keep`` deleted."""
        self.close()
        for number in range(self.keep, 0, -1):
            older = self.path.with_name(f"{self.path.name}.{number}")
            if not older.exists():
                continue
            if number == self.keep:
                older.unlink()
            else:
                older.replace(self.path.with_name(f"{self.path.name}.{number + 1}"))
        if self.keep:
            self.path.replace(self.path.with_name(f"{self.path.name}.1"))
        else:
            self.path.unlink()
        self._open(now)


def _rotated(path: Path) -> list[int]:
    """The numbers of ``path``'s rotated files (``path.1``, ``path.2``, ...) that are there."""
    prefix = f"{path.name}."
    return [
        int(name.removeprefix(prefix))
        for name in (found.name for found in path.parent.glob(f"{glob.escape(path.name)}.*"))
        if name.removeprefix(prefix).isdigit()
    ]


def _read(path: Path) -> Iterator[dict[str, Any]]:
    """The records of one file; a last line with no newline is one being written, not read yet."""
    if not path.exists():
        return
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.endswith("\n") or not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                record = None
            if not isinstance(record, dict):
                raise ValueError(f"{path}, line {number}, is not an audit record (a JSON object): is it an audit file?")
            yield record


def _first_at(path: Path) -> float | None:
    with open(path, encoding="utf-8") as lines:
        first = lines.readline()
    try:
        at = json.loads(first).get("at")
    except (ValueError, AttributeError):
        return None
    return float(at) if isinstance(at, int | float) else None
