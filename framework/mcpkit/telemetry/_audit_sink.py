"""``AuditSink``: where a server's memory audit goes (``AuditLog``, a file; ``AuditStore``, a table), and the two
questions an operator asks of it: what memory entered a call, and which calls changed a key."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = ["CHANGES", "AuditSink", "asked_by", "call_fields", "is_change", "matches"]

#: The operations that change a key (the answer to "which calls changed this key").
CHANGES = ("write", "delete")


class AuditSink(ABC):
    """Takes one record per memory operation (bounded fields: names, hashes, sizes; never a value) and answers the
    operator's questions over what it keeps; a subclass keeps them, the questions have a plain default here."""

    @abstractmethod
    def write(self, record: Mapping[str, Any]) -> None:
        """Keep ``record`` with its time ``at`` first."""

    def write_many(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Keep each of ``records`` (one operation's lines: a bulk operation has one per key), at one time."""
        for record in records:
            self.write(record)

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
        field, wanted = asked_by(key=key, label=label)
        return [line for line in self.lines() if is_change(line) and line.get(field) == wanted]


def is_change(record: Mapping[str, Any]) -> bool:
    """Whether ``record`` changed its key: a write or delete that was applied (a compare-and-set another writer won,
    a delete of nothing and a write a quota or the store refused changed nothing)."""
    return record.get("operation") in CHANGES and record.get("hit") is not False and "error" not in record


def call_fields(**given: str | None) -> dict[str, str]:
    """The fields an ``entered`` question gives (a trace id or a request id, at least)."""
    wanted = {field: str(value) for field, value in given.items() if value is not None}
    if not wanted.keys() & {"request_id", "trace_id"}:
        raise ValueError("Ask what entered a call by its request_id= or its trace_id= (session= and caller= narrow).")
    return wanted


def matches(line: Mapping[str, Any], wanted: Mapping[str, str]) -> bool:
    return all(str(line.get(field)) == value for field, value in wanted.items())


def asked_by(*, key: str | None, label: str | None) -> tuple[str, str]:
    """The record field a ``changed`` question looks at (``key`` or ``key_label``), and its value: exactly one."""
    if (key is None) == (label is None):
        raise ValueError("Ask which calls changed a key by exactly one of key= (its hash) or label= (its label).")
    return ("key", str(key)) if label is None else ("key_label", str(label))
