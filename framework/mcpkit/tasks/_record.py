"""``TaskRecord``: one task as it is kept (JSON, sealed by the store that keeps it) and as the client sees it."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..base import iso_time

__all__ = ["TERMINAL", "TaskRecord", "TaskStatus"]

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})

#: The layout of a kept record; a record of another layout is not read (it cannot be this server's).
LAYOUT = 1
#: The bytes a task that has not ended keeps free for the note that may end it (every note the server writes, the
#: longest a crash or removal of a 128-character tool, is under 500 bytes): so ending a task never grows its record,
#: and a caller at its byte limit still sees every task end.
NOTE_ROOM = 1024


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """A task: the call it runs (tool and arguments, re-run from the start after each answer), where it is, and
    what it ended with. ``lease`` is when the instance running it must have said it still does (None while nobody
    runs it: waiting for input, or ended); past it, the worker is taken for dead and the task reported failed."""

    id: str
    tool: str
    arguments: Mapping[str, Any]
    status: TaskStatus
    created: float
    updated: float
    ttl: float | None
    poll_ms: int
    message: str | None = None
    result: Mapping[str, Any] | None = None
    error: Mapping[str, Any] | None = None
    requests: Mapping[str, Any] = field(default_factory=dict)  # key -> input request (wire form), unanswered
    answers: Mapping[str, Any] = field(default_factory=dict)  # key -> answer (wire form), every round's
    lease: float | None = None

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def expires_at(self) -> float | None:
        return None if self.ttl is None else self.created + self.ttl

    def but(self, now: float, **changes: Any) -> TaskRecord:
        """This record changed at ``now``."""
        return dataclasses.replace(self, updated=now, **changes)

    def leased(self, until: float | None) -> TaskRecord:
        """This record with its worker's lease until ``until`` (not a change the client sees: ``updated`` stays)."""
        return dataclasses.replace(self, lease=until)

    def ended(self, now: float, status: TaskStatus, message: str | None = None, **changes: Any) -> TaskRecord:
        """This record in a terminal ``status``: no worker, no questions left, and no call to run again (its
        arguments and answers are not kept)."""
        unrun: dict[str, Any] = {"arguments": {}, "answers": {}, "requests": {}, "lease": None}
        return self.but(now, status=status, message=message, **unrun, **changes)

    # -- kept ------------------------------------------------------------------------

    def kept(self) -> dict[str, Any]:
        """The record as stored: the lease at a fixed width (a renewal never changes the record's size), and until it
        ends, ``NOTE_ROOM`` bytes less its contents in spaces, the room of the note that may end it."""
        kept = {
            "layout": LAYOUT,
            "id": self.id,
            "tool": self.tool,
            "arguments": dict(self.arguments),
            "status": self.status,
            "created": self.created,
            "updated": self.updated,
            "ttl": self.ttl,
            "poll_ms": self.poll_ms,
            "message": self.message,
            "result": self.result,
            "error": self.error,
            "requests": dict(self.requests),
            "answers": dict(self.answers),
            "lease": None if self.lease is None else f"{self.lease:014.3f}",
            "room": "",
        }
        if not self.terminal:
            contents = [kept[name] for name in ("arguments", "message", "result", "error", "requests", "answers")]
            kept["room"] = " " * max(0, NOTE_ROOM - len(json.dumps(contents)))
        return kept

    @classmethod
    def from_kept(cls, kept: Mapping[str, Any]) -> TaskRecord | None:
        """The record kept as ``kept``, or None when it is not a record this server wrote."""
        if not isinstance(kept, Mapping) or kept.get("layout") != LAYOUT:
            return None
        try:
            return cls(
                id=kept["id"],
                tool=kept["tool"],
                arguments=kept["arguments"],
                status=kept["status"],
                created=float(kept["created"]),
                updated=float(kept["updated"]),
                ttl=None if kept["ttl"] is None else float(kept["ttl"]),
                poll_ms=int(kept["poll_ms"]),
                message=kept["message"],
                result=kept["result"],
                error=kept["error"],
                requests=kept["requests"],
                answers=kept["answers"],
                lease=None if kept["lease"] is None else float(kept["lease"]),
            )
        except (KeyError, TypeError, ValueError):
            return None

    # -- on the wire -----------------------------------------------------------------

    def task(self) -> dict[str, Any]:
        """The ``Task`` fields: what ``CreateTaskResult`` carries (with ``resultType: "task"``)."""
        wire: dict[str, Any] = {
            "taskId": self.id,
            "status": self.status,
            "createdAt": iso_time(self.created),
            "lastUpdatedAt": iso_time(self.updated),
            "ttlMs": None if self.ttl is None else round(self.ttl * 1000),
            "pollIntervalMs": self.poll_ms,
        }
        if self.message is not None:
            wire["statusMessage"] = self.message
        return wire

    def detailed(self) -> dict[str, Any]:
        """The ``DetailedTask`` of ``tasks/get``: the task, with its questions, result or error inlined."""
        wire = self.task()
        if self.status == "input_required":
            wire["inputRequests"] = dict(self.requests)
        elif self.status == "completed" and self.result is not None:
            wire["result"] = dict(self.result)
        elif self.status == "failed" and self.error is not None:
            wire["error"] = dict(self.error)
        return wire
