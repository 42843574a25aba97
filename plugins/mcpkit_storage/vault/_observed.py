"""``ObservedVault``: a ``Vault`` that records each of its operations for the server's telemetry (a child span, a
duration point, an event on the call's span) and its audit log, with the store's kind, the operation and the scope;
never a value, a plain key or a caller's id (keys hashed with a key of the keyring's, callers by their owner hash)."""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from opentelemetry import context, trace
from opentelemetry.trace import Span, SpanKind, StatusCode

from mcpkit import Telemetry, current_call

from ..base import Place, without_namespace
from ..index import Semantic
from ..sealing import Keyring
from ..stores import Quota, QuotaExceededError, Store
from ._found import Found, Observed
from ._vault import Vault

__all__ = ["ObservedVault", "key_hash"]

#: What an operation does to memory, as the audit log and the events say it.
Kind = Literal["read", "write", "delete", "list", "search", "embed"]

#: The one lookup an unobserved operation makes (inline: a method call per operation is measurable).
_current_span = trace.get_current_span

#: The purpose the key-hashing key is derived for (never the sealing keys themselves).
_KEY_HASH_PURPOSE = "mcpkit telemetry key hash"


def key_hash(keyring: Keyring, bucket: str, key: str) -> str:
    """The hash a key appears as in spans and the audit log: HMAC-SHA256 under a key derived from the secret, of
    the bucket and the key, 16 hex digits (an operator with the secret computes it to find a key's lines)."""
    return _hash(keyring.derive_key(_KEY_HASH_PURPOSE), bucket, key)


def _hash(secret: bytes, bucket: str, key: str) -> str:
    return hmac.new(secret, f"{bucket}\0{key}".encode(), hashlib.sha256).hexdigest()[:16]


class ObservedVault(Vault):
    """Records what each read, write, delete, listing, search and embedding of a call did, where the server's
    telemetry records (a sampled span, a metrics SDK, an audit log); otherwise each goes straight to the ``Vault``."""

    def __init__(
        self,
        store: Store,
        keyring: Keyring,
        telemetry: Telemetry,
        system: str,
        *,
        search_all: bool = False,
        semantic: Semantic | None = None,
        search_keys: bool = True,
    ) -> None:
        super().__init__(store, keyring, search_all=search_all, semantic=semantic, search_keys=search_keys)
        self._telemetry = telemetry
        self._system = system
        self._secret = keyring.derive_key(_KEY_HASH_PURPOSE)
        #: Whether a metrics SDK records, looked up once when the server starts (a lookup per operation would cost
        #: more than the operation's own Python work); with it, or with an audit log, every operation is observed.
        self._metering = telemetry.metering()
        self._always = telemetry.audit is not None or self._metering

    def _note(self, operation: str, kind: Kind, place: Place | None) -> _Operation:
        return _Operation(self, operation, kind, place)

    # -- reads ------------------------------------------------------------------------

    async def read(self, place: Place, key: str, now: float) -> Found | None:
        if not (self._always or _current_span().is_recording()):
            return await super().read(place, key, now)
        with self._note("read", "read", place) as note:
            observed = await super().observe(place, key, now)
            note.keys((key, observed))
        return observed.found

    async def observe(self, place: Place, key: str, now: float) -> Observed:
        if not (self._always or _current_span().is_recording()):
            return await super().observe(place, key, now)
        with self._note("read", "read", place) as note:
            observed = await super().observe(place, key, now)
            note.keys((key, observed))
        return observed

    async def read_many(
        self, place: Place, keys: Sequence[str], now: float, *, in_thread: bool = False
    ) -> list[Found | None]:
        if not (self._always or _current_span().is_recording()):
            return await super().read_many(place, keys, now, in_thread=in_thread)
        with self._note("read_many", "read", place) as note:
            found = await super().read_many(place, keys, now, in_thread=in_thread)
            note.keys(*zip(keys, found, strict=True))
        return found

    async def payloads(self, place: Place, now: float) -> dict[str, Any]:
        if not (self._always or _current_span().is_recording()):
            return await super().payloads(place, now)
        with self._note("list", "list", place) as note:
            found = await super().payloads(place, now)
            note.count = len(found)
        return found

    # -- writes -----------------------------------------------------------------------

    async def write(
        self,
        place: Place,
        key: str,
        value_json: str,
        expires_at: float | None,
        now: float,
        quota: Quota | None,
        vector: bytes = b"",
    ) -> None:
        if not (self._always or _current_span().is_recording()):
            return await super().write(place, key, value_json, expires_at, now, quota, vector)
        with self._note("write", "write", place) as note:
            note.keys((key, len(value_json.encode())))
            await super().write(place, key, value_json, expires_at, now, quota, vector)

    async def write_many(
        self,
        place: Place,
        texts: Mapping[str, str],
        vectors: Sequence[bytes],
        expires_at: float | None,
        now: float,
        quota: Quota | None,
        clock: Callable[[], float],
    ) -> None:
        if not (self._always or _current_span().is_recording()):
            return await super().write_many(place, texts, vectors, expires_at, now, quota, clock)
        with self._note("write_many", "write", place) as note:
            note.keys(*((key, len(text.encode())) for key, text in texts.items()))
            await super().write_many(place, texts, vectors, expires_at, now, quota, clock)

    async def swap(
        self,
        place: Place,
        key: str,
        observed: Observed,
        value_json: str | bytes,
        expires_at: float | None,
        now: float,
        quota: Quota | None,
        *,
        written_at: float | None = None,
        indexed: bool | None = None,
        vector: bytes = b"",
    ) -> bool:
        if not (self._always or _current_span().is_recording()):
            return await super().swap(
                place,
                key,
                observed,
                value_json,
                expires_at,
                now,
                quota,
                written_at=written_at,
                indexed=indexed,
                vector=vector,
            )
        with self._note("swap", "write", place) as note:
            size = len(value_json) if isinstance(value_json, bytes) else len(value_json.encode())
            swapped = await super().swap(
                place,
                key,
                observed,
                value_json,
                expires_at,
                now,
                quota,
                written_at=written_at,
                indexed=indexed,
                vector=vector,
            )
            note.keys((key, size if swapped else None))
        return swapped

    async def delete(self, place: Place, key: str, now: float) -> bool:
        if not (self._always or _current_span().is_recording()):
            return await super().delete(place, key, now)
        with self._note("delete", "delete", place) as note:
            went = await super().delete(place, key, now)
            note.keys((key, went))
        return went

    async def delete_many(self, place: Place, keys: Sequence[str], now: float) -> int:
        if not (self._always or _current_span().is_recording()):
            return await super().delete_many(place, keys, now)
        with self._note("delete_many", "delete", place) as note:
            went = await super().delete_many(place, keys, now)
            note.keys(*((key, None) for key in keys))
            note.count = went
        return went

    async def delete_bucket(self, place: Place, now: float) -> int:
        if not (self._always or _current_span().is_recording()):
            return await super().delete_bucket(place, now)
        with self._note("delete_bucket", "delete", place) as note:
            went = await super().delete_bucket(place, now)
            note.count = went
        return went

    # -- search and embedding ---------------------------------------------------------

    def searching(self, place: Place, mode: str) -> _Operation | None:
        if not (self._always or _current_span().is_recording()):
            return None
        note = self._note("search", "search", place)
        note.mode = mode
        return note

    async def vector(self, place: Place, key: str, value_json: str, caller: str | None = None) -> bytes:
        if self.semantic is None or not (self._always or _current_span().is_recording()):
            return await super().vector(place, key, value_json, caller)
        with self._note("embed", "embed", place) as note:
            note.count = 1
            return await super().vector(place, key, value_json, caller)

    async def embed_many(self, place: Place, texts: Mapping[str, str], caller: str | None = None) -> list[bytes]:
        if self.semantic is None or not (self._always or _current_span().is_recording()):
            return await super().embed_many(place, texts, caller)
        with self._note("embed", "embed", place) as note:
            note.count = len(texts)
            return await super().embed_many(place, texts, caller)


class _Operation:
    """One observed operation: its child span (when the call's span records), its duration point, its event on the
    call's span and its audit lines, all made when it ends."""

    __slots__ = (
        "_found",
        "_kind",
        "_operation",
        "_parent",
        "_place",
        "_span",
        "_started",
        "_token",
        "_vault",
        "count",
        "mode",
    )

    def __init__(self, vault: ObservedVault, operation: str, kind: Kind, place: Place | None) -> None:
        self._vault = vault
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

    def keys(self, *found: tuple[str, object]) -> None:
        """The keys the operation touched, each with what it found: an ``Observed``/``Found`` (None: a miss), a size
        in bytes (written), True/False (deleted or not), or None (not known)."""
        self._found.extend(found)

    def __enter__(self) -> _Operation:
        if self._parent.is_recording():
            vault = self._vault
            span = vault._telemetry.tracer.start_span(
                f"{self._operation} {vault._system}",
                kind=SpanKind.CLIENT if self._kind != "embed" else SpanKind.INTERNAL,
            )
            self._span = span
            self._token = context.attach(trace.set_span_in_context(span))
        self._started = time.perf_counter()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, _: object) -> None:
        elapsed = time.perf_counter() - self._started
        vault, telemetry = self._vault, self._vault._telemetry
        system = vault._system
        error_type = None if error is None else type(error).__qualname__
        quota = error.limit if isinstance(error, QuotaExceededError) else None
        if vault._metering:
            instruments = telemetry.instruments
            point = {"db.system.name": system, "db.operation.name": self._operation}
            if self._kind == "search":
                instruments.search_duration.record(elapsed, {"mcpkit.search.mode": self.mode or "lexical"})
            elif self._kind == "embed":
                instruments.embedding_duration.record(elapsed, {"db.system.name": system})
            else:
                if error_type is not None:
                    point["error.type"] = error_type
                instruments.storage_duration.record(elapsed, point)
            if quota is not None:
                instruments.quota_refusals.add(1, {"mcpkit.quota.limit": str(quota)})
        attributes = self._attributes(system)
        lines = self._lines()
        if self._span is not None:
            span = self._span
            context.detach(self._token)  # type: ignore[arg-type]
            span.set_attributes(attributes)
            if len(lines) == 1:
                span.set_attributes({f"mcpkit.memory.{name}": value for name, value in lines[0].items()})
            if error_type is not None:
                span.set_attribute("error.type", error_type)
                span.set_status(StatusCode.ERROR)  # no description: an exception's text may carry a value
            span.end()
        if self._kind != "embed" and self._parent.is_recording():
            for line in lines or [{}]:
                event = {**attributes, **{f"mcpkit.memory.{name}": value for name, value in line.items()}}
                self._parent.add_event(f"mcpkit.memory.{self._kind}", event)
        audit = telemetry.audit
        if audit is not None and self._kind != "embed":
            self._audit(audit, attributes, lines, error_type)

    def _attributes(self, system: str) -> dict[str, str | int | bool]:
        attributes: dict[str, str | int | bool] = {
            "db.system.name": system,
            "db.operation.name": self._operation,
            "mcpkit.memory.operation": self._kind,
        }
        place = self._place
        if place is not None:
            rest = without_namespace(place.bucket)
            attributes["mcpkit.memory.scope"] = rest.partition(".")[0]
            attributes["mcpkit.memory.bucket"] = place.bucket
            if rest != place.bucket:
                attributes["mcpkit.memory.namespace"] = place.bucket[: -len(rest) - 1]
            if self._vault._telemetry.callers:
                attributes["mcpkit.memory.caller"] = self._vault.keyring.owner_for(place.identity)
        if self.count is not None:
            attributes["mcpkit.memory.count"] = self.count
        if self.mode is not None:
            attributes["mcpkit.search.mode"] = self.mode
        return attributes

    def _lines(self) -> list[dict[str, str | int | bool]]:
        """One entry per key: its hash (and label, where the app opts in), hit or miss, bytes."""
        place = self._place
        if place is None:
            return []
        secret = self._vault._secret
        labels = self._vault._telemetry.key_labels
        lines = []
        for key, seen in self._found:
            line: dict[str, str | int | bool] = {"key": _hash(secret, place.bucket, key)}
            if labels:
                line["key_label"] = key.partition(":")[0] if ":" in key else "-"
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

    def _audit(
        self, audit: Any, attributes: Mapping[str, object], lines: list[dict[str, str | int | bool]], error: str | None
    ) -> None:
        call = current_call()
        span = self._parent.get_span_context()
        common: dict[str, object] = {
            "operation": self._kind,
            "store": attributes["db.system.name"],
            "db_operation": self._operation,
        }
        for name in ("scope", "bucket", "namespace", "count"):
            value = attributes.get(f"mcpkit.memory.{name}")
            if value is not None:
                common[name] = value
        if self._place is not None:
            common["caller"] = self._vault.keyring.owner_for(self._place.identity)
        if call is not None:
            common.update(method=call.method, tool=call.tool, request_id=call.request_id, session=call.session)
        if span.is_valid:
            common["trace_id"] = format(span.trace_id, "032x")
        if self.mode is not None:
            common["mode"] = self.mode
        if error is not None:
            common["error"] = error
        for line in lines or [{}]:
            audit.write({**common, **line})
