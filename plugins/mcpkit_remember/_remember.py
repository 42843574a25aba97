"""``Remember``: the ``self.remember`` of one tool call — values kept per caller, per scope."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Mapping
from datetime import datetime
from typing import Any

import anyio
import anyio.to_thread

from mcpkit_search import WEIGHT
from mcpkit_storage import (
    Found,
    Matches,
    RememberConflictError,
    RememberInvalidError,
    Scope,
    SearchMode,
    Source,
    Swap,
    Version,
    backoff,
    check_key,
    check_ttl,
    encode_value,
    search,
    versions_key,
    versions_of,
)

from ._call import CallPlaces
from ._cursor import KeyPage
from ._glob import Glob
from ._policy import RememberPolicy
from ._provenance import Info, info_of, source_of, wanted
from ._search_checks import checked
from ._store_errors import STORE_ERRORS, StorageErrors
from ._window import Moment, checked_half_life, window

__all__ = ["Info", "KeyPage", "Remember", "RememberPolicy"]

#: Compare-and-set attempts before giving up; only writers in other processes make them fail.
_UPDATE_ATTEMPTS = 64

#: What ``update``'s function usually returns: no need for inspect's checks of an awaitable.
_PLAIN = frozenset({int, float, str, bool, type(None), dict, list})

#: Keys x pattern characters above which ``list(pattern=)`` matches in a worker thread (about 10 ms of work).
_MATCH_ON_LOOP = 100_000


class Remember(CallPlaces):
    """Values kept for the caller across calls. ``scope`` defaults to ``"session"``.

    ``user`` keeps a value for the signed-in caller; ``session`` for the session
    (the signed-in caller on 2026-07-28, which has no sessions); ``tool`` like
    session, but only this tool sees it; ``global`` for every caller.
    """

    __slots__ = ()

    async def set(
        self,
        key: str,
        value: Any,
        *,
        scope: Scope = "session",
        ttl: float | None = None,
        source: Source | None = None,
        at: float | None = None,
    ) -> None:
        """Keep ``value`` (any JSON value) under ``key``; ``ttl`` in seconds, else the plugin's default_ttl.

        ``source``: where the value came from, sealed with it (docs/provenance.md): ``user`` (the caller said it),
        ``tool`` (the tool computed it; the default of a tool's ``self.remember``), ``model``, ``external`` (derived
        from content fetched from elsewhere) or ``import``. ``at``: when what it says happened (seconds since the
        epoch; default: now).
        """
        place = self._place(scope)
        check_key(key)
        meta = self._meta(source, at)
        text = encode_value(key, value, self._policy.max_value_bytes)
        vault = self._policy.vault
        vector = b"" if vault.semantic is None else await vault.vector(place, key, text, self._share(place))
        now = self._policy.clock().now()
        deadline = self._deadline(place, ttl, now)
        with StorageErrors(key, scope, vault, place, versioned=self._policy.history > 0):
            if self._policy.history:
                await self._versioned(place, key, source, text, deadline, now, meta, vector)
            else:
                await vault.write(place, key, text, deadline, now, self._policy.quota, vector, meta)

    async def set_many(
        self,
        values: Mapping[str, Any],
        *,
        scope: Scope = "session",
        ttl: float | None = None,
        source: Source | None = None,
        at: float | None = None,
    ) -> None:
        """Keep each value of ``values`` (key -> any JSON value) as ``set`` does, all from one ``source`` and ``at``;
        with an embedder their texts are embedded together, in batches, which is faster than one ``set`` each.

        Every key and value is checked before anything is written. The values are then written one by one, in
        order: if one fails (a quota, the store), the ones before it are kept and the error names the one that
        failed.
        """
        place = self._place(scope)
        if not isinstance(values, Mapping):
            raise RememberInvalidError(f"set_many() takes a mapping of key to value, not {type(values).__name__}.")
        meta = self._meta(source, at)
        texts = {}
        for key, value in values.items():
            check_key(key)
            texts[key] = encode_value(key, value, self._policy.max_value_bytes)
        deadline_ttl = check_ttl(ttl)
        vault, clock = self._policy.vault, self._policy.clock
        vectors = await vault.embed_many(place, texts, self._share(place))
        now = clock().now()  # one deadline for the batch; each value is written at its own moment, the last the newest
        deadline = self._deadline(place, deadline_ttl, now)
        if not self._policy.history:
            with StorageErrors(scope=scope):  # a partial write names the key that did not fit
                quota = self._policy.quota
                await vault.write_many(place, texts, vectors, deadline, now, quota, lambda: clock().now(), meta)
            return
        items = [(key, text, vector) for (key, text), vector in zip(texts.items(), vectors, strict=True)]
        with StorageErrors(scope=scope, versioned=True):  # a partial write names the key that did not fit
            await self._versioned_many(place, items, source, deadline, meta)

    async def get(self, key: str, *, scope: Scope = "session", default: Any = None) -> Any:
        """The value under ``key``, or ``default`` when there is none (or it expired)."""
        place = self._place(scope)
        check_key(key)
        with STORE_ERRORS:
            found = await self._policy.vault.read(place, key, self._policy.clock().now())
        return default if found is None else found.value

    async def lookup(self, key: str, *, scope: Scope = "session") -> Found | None:
        """The value under ``key`` with when it was written and when it expires, or None when there is none.

        ``Found.updated_at`` (seconds since the epoch, on the framework clock) says how fresh a fact is; it
        is None for a value written by mcpkit 0.1. ``Found.expires_at`` is None for a value without a ttl.
        """
        place = self._place(scope)
        check_key(key)
        with STORE_ERRORS:
            return await self._policy.vault.read(place, key, self._policy.clock().now())

    async def info(self, key: str, *, scope: Scope = "session") -> Info | None:
        """The value under ``key`` with where it came from and when (``Info``), or None when there is none."""
        place = self._place(scope)
        check_key(key)
        with STORE_ERRORS:
            kept = await self._policy.vault.inspect(place, key, self._policy.clock().now())
        if kept is None:
            return None
        payload = kept.payload
        return info_of(payload.value(), payload.provenance, kept.created, payload.written_at, payload.expires_at)

    async def history(self, key: str, *, scope: Scope = "session") -> list[Version]:
        """The key's last versions, oldest first, each with its event and provenance (``Version``); empty when the
        key has none (a plugin with ``history=0`` records none)."""
        place = self._place(scope)
        check_key(key)
        now = self._policy.clock().now()
        with STORE_ERRORS:
            found = await self._policy.vault.read(place, versions_key(key), now)
        return [] if found is None else versions_of(found.value, now)

    async def forget(self, key: str, *, scope: Scope = "session", keep_history: bool = False) -> bool:
        """Delete the value now, and its change history (one kept under an earlier ``history=`` setting too); True
        when there was a live value (a history left by one that expired goes too, and answers False, as it expired).

        ``keep_history=True`` keeps the history, with a ``delete`` event added (when the plugin keeps one).
        """
        place = self._place(scope)
        check_key(key)
        vault, now = self._policy.vault, self._policy.clock().now()
        with StorageErrors(key, scope, vault, place, versioned=self._policy.history > 0):
            gone = await vault.delete(place, key, now)
            if not keep_history:  # with history=0 too, so a history kept under an earlier setting goes with it
                await vault.delete(place, versions_key(key), now)
                return gone
            if self._policy.history:
                await self._recorded(place, key, "delete", None, None, self._meta(None, None))
            return gone

    async def knows(self, key: str, *, scope: Scope = "session") -> bool:
        """Whether a value is kept under ``key``."""
        place = self._place(scope)
        check_key(key)
        with STORE_ERRORS:
            return await self._policy.vault.read(place, key, self._policy.clock().now()) is not None

    async def list(
        self,
        *,
        scope: Scope = "session",
        pattern: str = "*",
        sources: Collection[Source] | None = None,
        min_trust: Source | None = None,
    ) -> list[str]:
        """The caller's keys in ``scope``, sorted, matching a glob ``pattern`` (``*``, ``?``, ``[...]``; exact case).

        ``sources``: only values from these sources; ``min_trust``: only values from this source or a more trusted
        one (user > tool > model > import > external). Either leaves out values whose source is not known.
        """
        place = self._place(scope)
        if not isinstance(pattern, str):
            raise RememberInvalidError(f"pattern is a glob string like 'draft:*', not {pattern!r:.60}.")
        try:
            glob = Glob(pattern)
        except ValueError as exc:
            raise RememberInvalidError(f"The pattern is not usable: {exc}.") from None
        kept_sources = wanted(sources, min_trust)
        vault, now = self._policy.vault, self._policy.clock().now()
        with STORE_ERRORS:
            if kept_sources is None:
                keys = await vault.keys(place, now)
            else:
                payloads = await vault.payloads(place, now)
                keys = sorted(key for key, payload in payloads.items() if source_of(payload.provenance) in kept_sources)
        if pattern == "*":
            return keys
        if len(keys) * len(pattern) < _MATCH_ON_LOOP:
            return [key for key in keys if glob.match(key)]
        # Many keys and a long pattern: match off the event loop, so other callers' calls go on meanwhile.
        return await anyio.to_thread.run_sync(lambda: [key for key in keys if glob.match(key)])

    async def page(
        self,
        *,
        scope: Scope = "session",
        pattern: str = "*",
        prefix: str = "",
        limit: int = 50,
        cursor: str | None = None,
    ) -> KeyPage:
        """The caller's keys in ``scope`` a page at a time: sorted, matching ``pattern`` and starting with ``prefix``.

        ``cursor`` is the ``next_cursor`` of the previous page: sealed (it shows nothing of the key it continues
        after) and bound to this caller and scope, so a changed or foreign cursor is a RememberInvalidError.
        """
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise RememberInvalidError(f"page(limit=...) is a whole number from 1, not {limit!r:.40}.")
        if not isinstance(prefix, str):
            raise RememberInvalidError(f"page(prefix=...) is a string, not {prefix!r:.60}.")
        place = self._place(scope)
        owner = self._policy.vault.keyring.owner_for(place.identity)
        after = None if cursor is None else self._policy.cursors.read(cursor, owner, place.bucket)
        keys = await self.list(scope=scope, pattern=pattern)
        if prefix:
            keys = [key for key in keys if key.startswith(prefix)]
        if after is not None:
            keys = [key for key in keys if key > after]
        page = keys[:limit]
        more = len(keys) > limit
        return KeyPage(page, self._policy.cursors.make(owner, place.bucket, page[-1]) if more else None)

    async def search(
        self,
        query: str,
        *,
        scope: Scope = "session",
        limit: int = 10,
        mode: SearchMode | None = None,
        weight: float = WEIGHT,
        explain: bool = False,
        sources: Collection[Source] | None = None,
        min_trust: Source | None = None,
        since: Moment | None = None,
        until: Moment | None = None,
        dates: bool = False,
        now: datetime | None = None,
        half_life: float | None = None,
    ) -> Matches:
        """The caller's values in ``scope`` that best match ``query``, best first (ties: the newest first).

        ``mode="lexical"``: BM25 over keys and text. Words are folded, stop words dropped and English words
        stemmed ("preferences" finds "preferred"); a query of stop words alone finds nothing. With an embedder
        (``RememberPlugin.init(embedder=...)``), ``"semantic"`` ranks by similarity in meaning (a long value by
        its best chunk) and ``"hybrid"``, the default then, fuses both rankings (``weight``: the semantic side's,
        0 to 1): a value whose words match, or whose meaning is close enough (above the embedder's
        ``min_similarity``), is found. Until the embedder's model has loaded, the search goes by words alone and
        the result's ``note`` says so. ``limit``: 1 to 100. ``explain=True``: each match's ``why`` gives each
        side's score and rank.

        Each match carries its ``provenance`` (``match.source``). ``sources`` / ``min_trust`` keep only matches from
        those sources, as ``list`` does. ``since`` / ``until`` keep values whose event time (``set(at=...)``, by
        default when written) is in that window (seconds, datetimes or ISO texts; ``until`` exclusive, an ISO date
        alone includes its day). Filters apply before the ranking is cut to ``limit``. ``dates=True`` reads the
        query's own dates ("in March", "last week") relative to ``now`` (default: the server clock, UTC) and searches
        its other words, the values whose event time is in the window they name scoring twice as much: preferred,
        not filtered (``Matches.preferred`` says which window). ``half_life``: seconds after which a value's score
        counts half (a preference for recent values; by default none).
        """
        place = self._place(scope)
        checked(self._policy.vault, place.bucket, query, limit, mode, weight)
        clock = self._policy.clock().now()
        query, kept, preferred = window(query, since, until, dates, now, clock, wanted(sources, min_trust))
        recent = checked_half_life(half_life)
        with STORE_ERRORS:
            vault, quota, caller = self._policy.vault, self._policy.quota, self._share(place)
            matches = await search(
                vault,
                place,
                query,
                clock,
                limit,
                mode,
                explain=explain,
                weight=weight,
                quota=quota,
                caller=caller,
                kept=kept,
                half_life=recent,
                preferred=preferred,
            )
        if kept is not None and (kept.since is not None or kept.until is not None):
            matches.window = (kept.since, kept.until)
        matches.preferred = preferred
        return matches

    async def forget_all(self, *, scope: Scope = "session") -> int:
        """Delete everything this caller has in ``scope``, the values' change history too; returns how many values
        went."""
        place = self._place(scope)
        vault, now = self._policy.vault, self._policy.clock().now()
        with STORE_ERRORS:
            if not self._policy.history:
                return await vault.delete_bucket(place, now)
            values = len(await vault.keys(place, now))  # the store counts the versions' entries too
            await vault.delete_bucket(place, now)
            return values

    async def increment(
        self, key: str, by: int | float = 1, *, scope: Scope = "session", ttl: float | None = None
    ) -> int | float:
        """Atomically add ``by`` to the number under ``key`` (missing counts as 0); returns the new number."""
        if isinstance(by, bool) or not isinstance(by, int | float):
            raise RememberInvalidError(f"increment(by=...) takes a number, not {by!r}.")

        def add(current: Any) -> int | float:
            if isinstance(current, bool) or not isinstance(current, int | float):
                raise RememberInvalidError(
                    f"Cannot increment {key!r}: it holds {type(current).__name__}, not a number."
                )
            return current + by

        result: int | float = await self.update(key, add, scope=scope, default=0, ttl=ttl)
        return result

    async def update(
        self,
        key: str,
        fn: Callable[[Any], Any],
        *,
        scope: Scope = "session",
        default: Any = None,
        ttl: float | None = None,
        source: Source | None = None,
        at: float | None = None,
    ) -> Any:
        """Atomically replace the value with ``fn(current)`` (``default`` when missing); returns the new value.

        ``fn`` may run more than once when other writers race; keep it free of side effects.
        Without ``ttl`` an existing value keeps its deadline. ``source`` and ``at`` as for ``set``.
        """
        place = self._place(scope)
        check_key(key)
        check_ttl(ttl)
        meta = self._meta(source, at)
        vault = self._policy.vault
        vectors: dict[str, bytes] = {}  # the new value's text -> its vector: a retried attempt embeds it once
        locks, turn = self._policy.updates, (place, key)
        with StorageErrors(key, scope, vault, place, versioned=self._policy.history > 0):
            if not locks.take(turn):
                await locks.wait(turn)
            try:
                for attempt in range(_UPDATE_ATTEMPTS):
                    now = self._policy.clock().now()
                    observed, history = await self._observed(place, key, now)
                    found = observed.found
                    new = fn(default if found is None else found.value)
                    if type(new) not in _PLAIN and inspect.isawaitable(new):
                        new = await new
                    text = encode_value(key, new, self._policy.max_value_bytes)
                    deadline = self._deadline(place, ttl, now, found)
                    if vault.semantic is not None and text not in vectors:
                        vectors[text] = await vault.vector(place, key, text, self._share(place))
                    swap = Swap(place, key, observed, text, deadline, vector=vectors.get(text, b""), meta=meta)
                    if await self._swapped(swap, now, history):
                        return new
                    await backoff(attempt)  # another process wrote first: wait a little, and read again
            finally:
                locks.give(turn)
        raise RememberConflictError(key, _UPDATE_ATTEMPTS)
