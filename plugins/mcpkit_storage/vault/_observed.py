"""``ObservedVault``: a ``Vault`` whose every operation, where something reads what it records, is a
``MemoryOperation``: a child span (an event per key for a bulk one), a duration point, audit lines."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from opentelemetry import trace

from mcpkit import Telemetry

from ..base import Place
from ..index import Semantic
from ..sealing import Keyring
from ..stores import Quota, QuotaExceededError, Store
from ._found import Found, Inspected, Observed, found
from ._memory_operation import KEY_HASH_PURPOSE, Kind, MemoryOperation, Observer, hashed_key
from ._vault import Vault
from ._writer import Swap

__all__ = ["ObservedVault", "key_hash"]

#: The one lookup an unobserved operation makes (inline: a method call per operation is measurable).
_current_span = trace.get_current_span


def key_hash(keyring: Keyring, bucket: str, key: str) -> str:
    """The hash a key appears as in spans and the audit log: HMAC-SHA256 under a key derived from the secret, of
    the bucket and the key, 16 hex digits (an operator with the secret computes it to find a key's lines)."""
    return hashed_key(keyring.derive_key(KEY_HASH_PURPOSE), bucket, key)


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
        self._observer = observer = Observer(telemetry, system, keyring, keyring.derive_key(KEY_HASH_PURPOSE))
        #: Whether every operation is observed (a metrics SDK, an audit log), else only those of a recording span.
        self._always = observer.always
        self.vectors.merging = self._merging
        watch_merges = getattr(store, "watch_merges", None)  # SQLite's search index merges in steps after changes
        if watch_merges is not None and telemetry.mode == "native":
            watch_merges(self._index_merged, self._observed)

    def _note(self, operation: str, kind: Kind, place: Place | None) -> MemoryOperation:
        return MemoryOperation(self._observer, operation, kind, place)

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

    async def inspect(self, place: Place, key: str, now: float) -> Inspected | None:
        if not (self._always or _current_span().is_recording()):
            return await super().inspect(place, key, now)
        return await self._inspected(place, key, now)

    async def _inspected(self, place: Place, key: str, now: float) -> Inspected | None:
        """``inspect`` (``remember.info``: a value with its provenance) as a read: hit or miss, the bytes seen."""
        with self._note("inspect", "read", place) as note:
            best, seen = await self.inspect_seen(place, key, now)
            note.keys((key, Observed(None if best is None else found(best.payload), seen)))
        return best

    async def observe_beside(
        self, place: Place, key: str, beside: str, now: float, *, opened: bool = False
    ) -> tuple[Observed, Observed]:
        if not (self._always or _current_span().is_recording()):
            return await super().observe_beside(place, key, beside, now, opened=opened)
        with self._note("read", "read", place) as note:
            seen, observed = await super().observe_beside(place, key, beside, now, opened=opened)
            # A value read and not opened (a set's) has no hit or miss to tell.
            note.keys(*(((key, seen),) if opened else ()), (beside, observed))
        return seen, observed

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
        meta: bytes = b"",
    ) -> None:
        if not (self._always or _current_span().is_recording()):
            return await super().write(place, key, value_json, expires_at, now, quota, vector, meta)
        with self._note("write", "write", place) as note:
            note.keys((key, len(value_json.encode())))
            await super().write(place, key, value_json, expires_at, now, quota, vector, meta)

    async def write_many(
        self,
        place: Place,
        texts: Mapping[str, str],
        vectors: Sequence[bytes],
        expires_at: float | None,
        now: float,
        quota: Quota | None,
        clock: Callable[[], float],
        meta: bytes = b"",
    ) -> None:
        if not (self._always or _current_span().is_recording()):
            return await super().write_many(place, texts, vectors, expires_at, now, quota, clock, meta)
        with self._note("write_many", "write", place) as note:
            note.keys(*((key, len(text.encode())) for key, text in texts.items()))
            await super().write_many(place, texts, vectors, expires_at, now, quota, clock, meta)

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
        meta: bytes = b"",
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
                meta=meta,
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
                meta=meta,
            )
            note.keys((key, size if swapped else False))  # not swapped: another writer won, nothing changed
        return swapped

    async def swap_many(
        self, swaps: Sequence[Swap], now: float, quota: Quota | None, *, whole: bool = False
    ) -> list[bool | QuotaExceededError]:
        if not swaps or not (self._always or _current_span().is_recording()):
            return await super().swap_many(swaps, now, quota, whole=whole)
        return await self._swapped_many(swaps, now, quota, whole)

    async def _swapped_many(
        self, swaps: Sequence[Swap], now: float, quota: Quota | None, whole: bool
    ) -> list[bool | QuotaExceededError]:
        """``swap_many`` as one write span: one event (and audit line) per key, its bytes where it was written."""
        place = swaps[0].place
        shared = all(swap.place == place for swap in swaps)
        with self._note("swap_many", "write", place if shared else None) as note:
            results = await super().swap_many(swaps, now, quota, whole=whole)
            for swap, result in zip(swaps, results, strict=True):
                size = len(swap.value_json) if isinstance(swap.value_json, bytes) else len(swap.value_json.encode())
                note.placed(swap.place, swap.key, size if result is True else False)
        return results

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

    def _observed(self) -> bool:
        """Whether what an operation now does is recorded (a metrics SDK, an audit log, or a recording span)."""
        return self._always or _current_span().is_recording()

    def _merging(self, place: Place, count: int) -> MemoryOperation | None:
        """A merge of ``count`` changes into the place's vector shards (a write's, or a search's filling them)."""
        if not (self._always or _current_span().is_recording()):
            return None
        note = self._note("merge_shards", "merge", place)
        note.count = count
        return note

    def _index_merged(self, started: int, ended: int, more: bool) -> None:
        """A step of the store's search index merge, on its worker thread in the context of the change that made it:
        a span of that change's (from ``started`` to ``ended``, ns), and a duration point."""
        observer = self._observer
        if observer.metering:
            point = observer.point("merge_index", None)
            observer.telemetry.instruments.storage_duration.record((ended - started) / 1e9, point)
        if not _current_span().is_recording():
            return
        span = observer.telemetry.tracer.start_span(
            f"merge_index {observer.system}", kind=trace.SpanKind.INTERNAL, start_time=started
        )
        span.set_attributes(
            {"db.system.name": observer.system, "db.operation.name": "merge_index", "mcpkit.index.more": more}
        )
        span.end(end_time=ended)

    def searching(self, place: Place, mode: str) -> MemoryOperation | None:
        if not (self._always or _current_span().is_recording()):
            return None
        note = self._note("search", "search", place)
        note.mode = mode
        return note

    async def query_vector(self, place: Place, query: str, caller: str) -> bytes | None:
        if not (self._always or _current_span().is_recording()):
            return await super().query_vector(place, query, caller)
        with self._note("embed_query", "embed", place) as note:
            note.count = 1
            note.model = self.semantic.name if self.semantic is not None else None
            return await super().query_vector(place, query, caller)

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
