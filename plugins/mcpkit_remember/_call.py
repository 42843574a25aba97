"""``CallPlaces``: the state of one call's ``self.remember`` that its operations share (``Remember`` builds on it)."""

from __future__ import annotations

from collections.abc import Callable

from mcpkit import Caller
from mcpkit_storage import (
    SOURCES,
    TRUST,
    Event,
    Found,
    Observed,
    Place,
    RememberInvalidError,
    Source,
    Swap,
    check_scope,
    check_ttl,
    is_event_time,
    place_for,
    record,
    seal_meta,
    swap_versioned,
    versions_key,
    write_many_versioned,
    write_versioned,
)

from ._policy import RememberPolicy

__all__ = ["CallPlaces"]


def _no_origin() -> bytes:
    return b""


class CallPlaces:
    """What every operation of one call's ``Remember`` shares: the caller's places per scope, the provenance its
    writes seal, their deadlines, whose share of the embedder they take, and the change history they add to."""

    __slots__ = ("_caller", "_metas", "_namespace", "_origin", "_origin_of", "_places", "_policy", "_source", "_tool")

    def __init__(
        self,
        policy: RememberPolicy,
        caller: Caller,
        tool_name: str | None,
        namespace: str = "",
        *,
        source: Source = "tool",
        origin: Callable[[], bytes] = _no_origin,
    ) -> None:
        self._policy = policy
        self._caller = caller
        self._tool = tool_name
        self._namespace = namespace
        self._places: dict[str, Place] = {}  # scope -> place: the caller and tool are fixed for this call
        self._source = source  # what a write without ``source=`` says of itself
        self._origin_of = origin  # who writes (sealed with each value), worked out at the call's first write
        self._origin: bytes | None = None
        self._metas: dict[object, bytes] = {}  # source (None: the default) -> the meta of a write without ``at``

    @property
    def user_id(self) -> str | None:
        """The caller's resolved identity (None when anonymous); it never comes from tool arguments."""
        return self._caller.user_id

    def _place(self, scope: object) -> Place:
        place = self._places.get(scope) if isinstance(scope, str) else None
        if place is None:  # first use of this scope in this call (or not a scope at all: check_scope says so)
            checked = check_scope(scope)
            place = place_for(checked, self._caller, self._tool, self._namespace)
            self._places[checked] = place
        return place

    def _meta(self, source: object, at: object) -> bytes:
        """The sealed provenance of a value written now by this call (``sealing.seal_meta``): the same bytes for
        every write of the call from one source with no ``at``, made once."""
        if at is None:
            made = self._metas.get(source)  # a source not made yet is checked below
            if made is not None:
                return made
        key = source
        if source is None:
            source = self._source
        elif source not in TRUST:
            raise RememberInvalidError(f"source is one of {', '.join(SOURCES)}; not {source!r:.40}.")
        if at is not None and not is_event_time(at):
            raise RememberInvalidError(
                f"at is when it happened, in seconds since the epoch (1970 to the year 9999), or None; not {at!r:.40}."
            )
        origin = self._origin
        if origin is None:
            origin = self._origin = self._origin_of()
        meta = seal_meta(source, at, origin)  # type: ignore[arg-type]  # checked above
        if at is None:
            self._metas[key] = meta
        return meta

    async def _recorded(
        self, place: Place, key: str, event: Event | None, text: str | None, deadline: float | None, meta: bytes
    ) -> None:
        """Add a version to the key's change history, when the plugin keeps one (``history=N``)."""
        keep = self._policy.history
        if keep:
            now = self._policy.clock().now()
            await record(self._policy.vault, place, key, event, text, deadline, now, meta, keep, self._policy.quota)

    async def _versioned(
        self,
        place: Place,
        key: str,
        source: object,
        text: str,
        deadline: float | None,
        now: float,
        meta: bytes,
        vector: bytes,
    ) -> None:
        """Keep the value and add its version to the key's change history in one store call, all or nothing."""
        policy = self._policy
        event: Event | None = "import" if source == "import" else None
        keep, quota = policy.history, policy.quota
        await write_versioned(policy.vault, place, key, event, text, deadline, now, meta, keep, quota, vector)

    async def _versioned_many(
        self, place: Place, items: list[tuple[str, str, bytes]], source: object, deadline: float | None, meta: bytes
    ) -> None:
        """``_versioned`` of each (key, text, vector), in order, batched (``write_many_versioned``)."""
        policy = self._policy
        event: Event | None = "import" if source == "import" else None
        moment = policy.clock().now
        vault, keep, quota = policy.vault, policy.history, policy.quota
        await write_many_versioned(vault, place, items, event, deadline, moment, meta, keep, quota)

    async def _observed(self, place: Place, key: str, now: float) -> tuple[Observed, Observed | None]:
        """The value under ``key`` and what its compare-and-set expects, with its change history when one is kept:
        one store call either way (one address per key)."""
        vault = self._policy.vault
        if not self._policy.history:
            return await vault.observe(place, key, now), None
        return await vault.observe_beside(place, key, versions_key(key), now, opened=True)

    async def _swapped(self, value: Swap, now: float, history: Observed | None = None) -> bool:
        """The compare-and-set of ``value``; with a change history (``history``, read beside the value, or read now),
        with its version added, all or nothing (False: another writer came first)."""
        policy = self._policy
        vault, quota = policy.vault, policy.quota
        if not policy.history:
            return await vault.swap(*value[:5], now, quota, vector=value.vector, meta=value.meta)
        if history is None:
            history = await vault.observe(value.place, versions_key(value.key), now)
        event: Event = "set" if value.observed.found is None else "update"
        return await swap_versioned(vault, value, history, event, now, policy.history, quota)

    def _share(self, place: Place) -> str:
        """Whose share of the embedder this call's embeddings take: the signed-in user's (whatever the scope or
        session), else the session's, else the place owner's."""
        caller = self._caller
        if caller.user_id is not None:
            return f"u {caller.user_id}"
        return place.identity if caller.session_id is None else f"s {caller.session_id}"

    def _deadline(self, place: Place, ttl: object, now: float, kept: Found | None = None) -> float | None:
        """When a value written now expires: ``ttl``, else what ``kept`` had, else the default; capped for sessions."""
        seconds = check_ttl(ttl)
        if seconds is not None:
            deadline: float | None = now + seconds
        elif kept is not None:
            deadline = kept.expires_at  # an update without a ttl keeps the deadline
        else:
            deadline = None if self._policy.default_ttl is None else now + self._policy.default_ttl
        cap = self._policy.session_ttl
        if place.session and cap is not None and (deadline is None or deadline > now + cap):
            deadline = now + cap
        return deadline
