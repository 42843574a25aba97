"""``AuditSink``: where a server's memory audit goes (``AuditLog``, a file; ``AuditStore``, a table), and the two
questions an operator asks of it: what memory entered a call, and which calls changed a key."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["CHANGES", "AuditSink", "asked_by", "call_fields", "matches"]

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

    def entered(
        self,
        *,
        request_id: str | None = None,
        trace_id: str | None = None,
        session: str | None = None,
        caller: str | None = None,
    ) -> list[dict[str, Any]]:
        """What memory entered a call (and what it wrote): its records, oldest first, by its trace id or its JSON-RPC
        request id (at least one). A request id is a client's counter, the same in every session: narrow it by the
        hashed ``session`` or ``caller`` a record of the call shows (or ask by trace id)."""
        wanted = call_fields(request_id=request_id, trace_id=trace_id, session=session, caller=caller)
        return [line for line in self.lines() if matches(line, wanted)]

    def changed(self, *, key: str | None = None, label: str | None = None) -> list[dict[str, Any]]:
        """Which calls changed a key (writes and deletes: when, by which tool and client), oldest first, by the key's
        hash (``mcpkit_storage.key_hash``) or its label (``Server(telemetry_key_labels=True)``; one of the two)."""
        field, wanted = asked_by(key=key, key_label=label)
        return [line for line in self.lines() if line.get("operation") in CHANGES and line.get(field) == wanted]


def call_fields(**given: str | None) -> dict[str, str]:
    """The fields an ``entered`` question gives (a trace id or a request id, at least)."""
    wanted = {field: str(value) for field, value in given.items() if value is not None}
    if not wanted.keys() & {"request_id", "trace_id"}:
        raise ValueError("Ask what entered a call by its request_id= or its trace_id= (session= and caller= narrow).")
    return wanted


def matches(line: Mapping[str, Any], wanted: Mapping[str, str]) -> bool:
    return all(str(line.get(field)) == value for field, value in wanted.items())


def asked_by(**given: str | None) -> tuple[str, str]:
    """The one field asked for, and its value: a question names exactly one."""
    asked = [(field, value) for field, value in given.items() if value is not None]
    if len(asked) != 1:
        names = " or ".join(f"{field}=" for field in given)
        raise ValueError(f"Ask the audit by exactly one of {names}, not {len(asked)} of them.")
    field, value = asked[0]
    return field, str(value)
