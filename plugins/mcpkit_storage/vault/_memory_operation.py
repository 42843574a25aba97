"""``MemoryOperation``: what one observed vault operation records when it ends: its child span (with one event per
key for a bulk operation), its duration point and its audit lines; keys hashed, callers by their owner hash, never a
value."""

from __future__ import annotations

import hmac
import logging
import time
from typing import Literal

from opentelemetry import context, trace
from opentelemetry.trace import Span, SpanKind, StatusCode

from mcpkit import AuditSink, Telemetry, current_call

from ..base import INTERNAL_KEY, Place, without_namespace
from ..sealing import Keyring
from ..stores import QuotaExceededError
from ._found import Found, Observed

logger = logging.getLogger("mcpkit.telemetry")

__all__ = ["KEY_HASH_DIGITS", "KEY_HASH_PURPOSE", "Kind", "MemoryOperation", "Observer", "hashed_key"]

#: What an operation does to memory, as the audit log and the events say it.
Kind = Literal["read", "write", "delete", "list", "search", "embed", "merge"]

#: The purpose the key-hashing key is derived for (never the sealing keys themselves).
KEY_HASH_PURPOSE = "mcpkit telemetry key hash"

#: How many hex digits of the HMAC a key's hash keeps (64 bits: no two keys of a bucket meet in practice).
KEY_HASH_DIGITS = 16

#: A bounded attribute value.
Value = str | int | bool


#: How many key hashes an observer keeps (the same keys come back call after call); past it, it starts again.
KEY_HASHES_KEPT = 4096


def hashed_key(secret: bytes, bucket: str, key: str) -> str:
    return hmac.digest(secret, f"{bucket}\0{key}".encode(), "sha256").hex()[:KEY_HASH_DIGITS]


class Observer:
    """What an observed vault's operations share: the server's telemetry, the store's ``db.system.name``, the
    keyring (owner hashes) and the key-hashing key; whether a metrics SDK records is looked up once, here, and the
    bounded attribute sets its spans and points start from are made once each."""

    __slots__ = (
        "always",
        "embedded",
        "hashes",
        "keyring",
        "metering",
        "opened",
        "points",
        "secret",
        "system",
        "telemetry",
    )

    def __init__(self, telemetry: Telemetry, system: str, keyring: Keyring, secret: bytes) -> None:
        self.telemetry = telemetry
        self.system = system
        self.keyring = keyring
        self.secret = secret
        self.metering = telemetry.metering()
        self.always = telemetry.audit is not None or self.metering
        #: (operation, error type) -> the attributes of its duration point, made once (they are bounded).
        self.points: dict[tuple[str, str | None], dict[str, Value]] = {}
        #: (operation, bucket) -> a span's name and the attributes it starts with (the bucket is the app's scope).
        self.opened: dict[tuple[str, str], tuple[str, dict[str, Value]]] = {}
        #: (bucket, key) -> the key's hash, up to ``KEY_HASHES_KEPT`` of them.
        self.hashes: dict[tuple[str, str], str] = {}
        #: The embedding duration's attributes.
        self.embedded: dict[str, Value] = {"db.system.name": system}

    def point(self, operation: str, error_type: str | None) -> dict[str, Value]:
        """The attributes of a storage duration point (the metrics SDK keys its series by them)."""
        found = self.points.get((operation, error_type))
        if found is None:
            found = {"db.system.name": self.system, "db.operation.name": operation}
            if error_type is not None:
                found["error.type"] = error_type
            self.points[operation, error_type] = found
        return found

    def opening(self, operation: str, place: Place | None) -> tuple[str, dict[str, Value]]:
        """A span's name and the attributes it starts with: the store, the operation, the scope and namespace."""
        bucket = "" if place is None else place.bucket
        found = self.opened.get((operation, bucket))
        if found is None:
            attributes: dict[str, Value] = {"db.system.name": self.system, "db.operation.name": operation}
            if place is not None:
                attributes.update(scope_attributes(place.bucket))
            name = "embed query" if operation == "embed_query" else f"{operation} {self.system}"
            found = self.opened[operation, bucket] = (name, attributes)
        return found

    def key_hash(self, bucket: str, key: str) -> str:
        """``hashed_key`` under this observer's secret, remembered (an HMAC per operation is measurable)."""
        found = self.hashes.get((bucket, key))
        if found is None:
            if len(self.hashes) >= KEY_HASHES_KEPT:
                self.hashes.clear()
            found = self.hashes[bucket, key] = hashed_key(self.secret, bucket, key)
        return found


def scope_attributes(bucket: str) -> dict[str, Value]:
    """A bucket's scope (and namespace) as span attributes."""
    rest = without_namespace(bucket)
    found: dict[str, Value] = {"mcpkit.memory.scope": rest.partition(".")[0]}
    if rest != bucket:
        found["mcpkit.memory.namespace"] = bucket[: -len(rest) - 1]
    return found


class MemoryOperation:
    """One observed operation, a context manager around it; ``keys``, ``count`` and ``mode`` say what it saw."""

    __slots__ = (
        "_found",
        "_kind",
        "_observer",
        "_operation",
        "_parent",
        "_place",
        "_placed",
        "_returned",
        "_span",
        "_started",
        "_token",
        "asked",
        "count",
        "mode",
        "model",
    )

    def __init__(self, observer: Observer, operation: str, kind: Kind, place: Place | None) -> None:
        self._observer = observer
        self._operation = operation
        self._kind = kind
        self._place = place
        self._found: list[tuple[str, object]] = []
        self._parent: Span = trace.get_current_span()
        self._span: Span | None = None
        self._token: object = None
        self._started = 0.0
        self.count: int | None = None
        self.mode: str | None = None
        #: A search's mode as asked, where it differs from the one used (``mode``); an embedding's model name.
        self.asked: str | None = None
        self.model: str | None = None
        self._placed: list[tuple[Place, str, object]] | None = None
        self._returned: list[str] | None = None

    def keys(self, *found: tuple[str, object]) -> None:
        """The keys the operation touched, each with what it found: an ``Observed``/``Found`` (None: a miss), a size
        in bytes (written), True/False (deleted or not), or None (not known)."""
        self._found.extend(found)

    def placed(self, place: Place, key: str, seen: object) -> None:
        """A key of another place than the operation's (``swap_many`` writes to several), with what it found."""
        if self._placed is None:
            self._placed = []
        self._placed.append((place, key, seen))

    def returned(self, keys: list[str], mode: str) -> None:
        """What a search returned (its matches' keys, best first) and the mode it used (``hybrid`` asked without a
        ready embedder is ``lexical``)."""
        if mode != self.mode:
            self.asked, self.mode = self.mode, mode
        self._returned = keys
        self.count = len(keys)

    def __enter__(self) -> MemoryOperation:
        if self._parent.is_recording():
            observer = self._observer
            name, attributes = observer.opening(self._operation, self._place)
            if observer.telemetry.callers and self._place is not None:
                attributes = {**attributes, "mcpkit.memory.caller": observer.keyring.owner_for(self._place.identity)}
            span = observer.telemetry.tracer.start_span(
                name, kind=SpanKind.CLIENT if self._kind != "embed" else SpanKind.INTERNAL, attributes=attributes
            )
            self._span = span
            if self._kind == "search" or self._kind == "write":  # the operations with spans of their own inside:
                self._token = context.attach(trace.set_span_in_context(span))  # a query's embedding, merges
        self._started = time.perf_counter()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, _: object) -> None:
        elapsed = time.perf_counter() - self._started
        observer = self._observer
        error_type = None if error is None else type(error).__qualname__
        if observer.metering:
            self._measured(elapsed, error, error_type)
        audit = observer.telemetry.audit
        if self._span is None and audit is None:
            return
        lines = self._lines()
        if self._span is not None:
            self._ended(self._span, lines, error_type)
        if audit is not None and self._kind != "embed" and self._kind != "merge":  # no memory entered or left
            self._audit(audit, self._where(), lines, error_type)

    def _measured(self, elapsed: float, error: BaseException | None, error_type: str | None) -> None:
        observer = self._observer
        instruments = observer.telemetry.instruments
        if self._kind == "search":
            instruments.search_duration.record(elapsed, {"mcpkit.search.mode": self.mode or "lexical"})
        elif self._kind == "embed":
            instruments.embedding_duration.record(elapsed, observer.embedded)
        else:
            instruments.storage_duration.record(elapsed, observer.point(self._operation, error_type))
        if isinstance(error, QuotaExceededError):
            instruments.quota_refusals.add(1, {"mcpkit.quota.limit": str(error.limit)})

    def _ended(self, span: Span, lines: list[dict[str, Value]], error: str | None) -> None:
        """What the operation saw, in one ``set_attributes`` (the store, operation and scope it started with)."""
        if self._token is not None:
            context.detach(self._token)  # type: ignore[arg-type]
        single = len(lines) == 1 and self._returned is None
        attributes = _prefixed(lines[0]) if single else {}
        if lines and not single:  # a bulk operation or a search: one event per key (a single key's is on the span)
            name = f"mcpkit.memory.{self._kind}"
            for line in lines:
                span.add_event(name, _prefixed(line))
        if self.count is not None:
            attributes["mcpkit.memory.count"] = self.count
        if self.mode is not None:
            attributes["mcpkit.search.mode"] = self.mode
        if self.asked is not None or self.model is not None:
            attributes.update(self._asked())
        if error is not None:
            attributes["error.type"] = error
            span.set_status(StatusCode.ERROR)  # no description: an exception's text may carry a value
        if attributes:
            span.set_attributes(attributes)  # once, and few: the SDK checks each attribute it is given
        span.end()

    def _where(self) -> dict[str, Value]:
        """The scope (and namespace), the caller where the app opts in, and what a listing or search saw."""
        place = self._place
        where: dict[str, Value] = {} if place is None else scope_attributes(place.bucket)
        if place is not None and self._observer.telemetry.callers:
            where["mcpkit.memory.caller"] = self._observer.keyring.owner_for(place.identity)
        if self.count is not None:
            where["mcpkit.memory.count"] = self.count
        if self.mode is not None:
            where["mcpkit.search.mode"] = self.mode
        if self.asked is not None or self.model is not None:
            where.update(self._asked())
        return where

    def _asked(self) -> dict[str, Value]:
        """A search's mode as asked (where it fell back), an embedding's model."""
        asked: dict[str, Value] = {}
        if self.asked is not None:
            asked["mcpkit.search.requested_mode"] = self.asked
        if self.model is not None:
            asked["mcpkit.embedding.model"] = self.model
        return asked

    def _lines(self) -> list[dict[str, Value]]:
        """One entry per key: its hash (and label, where the app opts in), hit or miss, bytes."""
        place = self._place
        if self._placed is not None or self._returned is not None:
            return self._other_lines()
        if place is None:
            return []
        observer, labels = self._observer, self._observer.telemetry.key_labels
        lines = []
        for key, seen in self._found:
            line: dict[str, Value] = {"key": observer.key_hash(place.bucket, key)}
            if labels:
                line["key_label"] = _label(key)
            if isinstance(seen, Observed):
                line["hit"] = seen.found is not None
                if seen.found is not None:
                    line["bytes"] = sum(len(stored) for _, stored in seen.seen if stored is not None)
            elif isinstance(seen, bool):
                line["hit"] = seen
            elif isinstance(seen, int):
                line["bytes"] = seen
            elif isinstance(seen, Found):
                line["hit"] = True
            elif seen is None and self._kind == "read":
                line["hit"] = False
            lines.append(line)
        return lines

    def _other_lines(self) -> list[dict[str, Value]]:
        """The lines of a search's returned keys (with their rank), or of a ``swap_many``'s keys (with their scope
        where they are in several places)."""
        observer, labels = self._observer, self._observer.telemetry.key_labels
        lines: list[dict[str, Value]] = []
        if self._returned is not None and self._place is not None:
            bucket = self._place.bucket
            for rank, key in enumerate(self._returned, start=1):
                line: dict[str, Value] = {"key": observer.key_hash(bucket, key), "rank": rank}
                if labels:
                    line["key_label"] = _label(key)
                lines.append(line)
        for place, key, seen in self._placed or ():
            line = {"key": observer.key_hash(place.bucket, key)}
            if self._place is None:  # several places: each line says its scope (the bucket goes to the audit only)
                line["scope"] = without_namespace(place.bucket).partition(".")[0]
            if labels:
                line["key_label"] = _label(key)
            if isinstance(seen, int) and not isinstance(seen, bool):
                line["bytes"] = seen
            elif isinstance(seen, bool):
                line["hit"] = seen
            lines.append(line)
        return lines

    def _audit(
        self, audit: AuditSink, where: dict[str, Value], lines: list[dict[str, Value]], error: str | None
    ) -> None:
        call = current_call()
        span = self._parent.get_span_context()
        common: dict[str, object] = {
            "operation": self._kind,
            "store": self._observer.system,
            "db_operation": self._operation,
            **{name.rpartition(".")[2]: value for name, value in where.items()},
        }
        if self._place is not None:
            common["bucket"] = self._place.bucket
            common["caller"] = self._observer.keyring.owner_for(self._place.identity)
        if call is not None:
            # the session as a hash: an anonymous session's id is all it takes to use its session-scope values
            session = None if call.session is None else hashed_key(self._observer.secret, "\0session", call.session)
            common.update(method=call.method, tool=call.tool, request_id=call.request_id, session=session)
        if span.is_valid:
            common["trace_id"] = format(span.trace_id, "032x")
        if error is not None:
            common["error"] = error
        if self._returned is not None:  # a search: one line, its returned keys (best first) in it
            records = [{**common, **_returned_fields(lines)}]
        else:
            records = [{**common, **line} for line in lines or [{}]]
        try:
            audit.write_many(records)
        except Exception:  # the memory was read or written: an audit that fails must not fail the call
            logger.exception("The memory audit %r could not keep a %s record", audit, self._operation)


def _label(key: str) -> str:
    """A key's family: its text up to the first ``:`` (``-`` without one); an internal key's kind (``versions``: a
    key's change history), without the byte that makes it internal."""
    family, colon, _ = key.removeprefix(INTERNAL_KEY).partition(":")
    return family if colon else "-"


def _returned_fields(lines: list[dict[str, Value]]) -> dict[str, object]:
    """A search's audit fields: the hashes of the keys it returned, best first (and their labels, opted in)."""
    fields: dict[str, object] = {"keys": [line["key"] for line in lines]}
    if lines and "key_label" in lines[0]:
        fields["key_labels"] = [line["key_label"] for line in lines]
    return fields


def _prefixed(line: dict[str, Value]) -> dict[str, Value]:
    return {f"mcpkit.memory.{name}": value for name, value in line.items()}
