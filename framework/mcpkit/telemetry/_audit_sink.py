"""``AuditSink``: where a server's memory audit goes (``AuditLog``, a file; ``AuditStore``, a table), and the two
questions an operator asks of it: what memory entered a call, and which calls changed a key."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["CHANGES", "AuditSink", "asked_by"]

#: The operations that change a key (the answer to "which calls changed this key").
CHANGES = ("write", "delete")


class AuditSink(ABC):
    """Takes one record per memory operation (bounded fields: names, hashes, sizes; never a value) and answers the
    operator's questions over what it keeps; a subclass keeps them, the questions have a plain default here."""

    @abstractmethod
    def write(self, record: Mapping[str, Any]) -> None:
        """Keep ``record`` with its time ``at`` first."""

    @abstractmethod
    def lines(self) -> Iterator[dict[str, Any]]:
        """Every kept record, oldest first."""

    @abstractmethod
    def close(self) -> None:
        """Release what the sink holds open (it opens again at the next write)."""

    def entered(self, *, request_id: str | None = None, trace_id: str | None = None) -> list[dict[str, Any]]:
        """What memory entered a call (and what it wrote): its records, oldest first, by the call's JSON-RPC request
        id or its trace id (one of the two)."""
        field, wanted = asked_by(request_id=request_id, trace_id=trace_id)
        return [line for line in self.lines() if str(line.get(field)) == wanted]

    def changed(self, *, key: str | None = None, label: str | None = None) -> list[dict[str, Any]]:
        """Which calls changed a key (writes and deletes: when, by which tool and client), oldest first, by the key's
        hash (``mcpkit_storage.key_hash``) or its label (``Server(telemetry_key_labels=True)``; one of the two)."""
        field, wanted = asked_by(key=key, key_label=label)
        return [line for line in self.lines() if line.get("operation") in CHANGES and line.get(field) == wanted]


def asked_by(**given: str | None) -> tuple[str, str]:
    """The one field asked for, and its value: a question names exactly one."""
    asked = [(field, value) for field, value in given.items() if value is not None]
    if len(asked) != 1:
        names = " or ".join(f"{field}=" for field in given)
        raise ValueError(f"Ask the audit by exactly one of {names}, not {len(asked)} of them.")
    field, value = asked[0]
    return field, str(value)
