"""The in-process store: nested dicts, for tests and single-process servers."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Sequence

from mcpkit_search import Stats, bm25, top

from .. import (
    Address,
    Entry,
    Expectation,
    Postings,
    Quota,
    QuotaExceededError,
    Ranking,
    Record,
    Write,
    charged,
    first_written,
    swap_each,
)
from ._memory_index import MemoryIndex

__all__ = ["MemoryStore"]


class _Bucket(dict[str, Entry]):
    """One owner's bucket, with the total size of its data kept up to date (for quotas), and its search index.

    Every change of an entry goes through ``set`` or ``drop``, which keep the index (``MemoryIndex``) exact.
    ``earliest``: no entry's deadline is before it (a search of a bucket none of whose entries can have expired
    looks at none of them).
    """

    __slots__ = ("earliest", "index", "size")

    def __init__(self) -> None:
        super().__init__()
        self.size = 0
        self.index = MemoryIndex()
        self.earliest = math.inf

    def set(self, key: str, entry: Entry, index: Postings | None = None) -> None:
        old = self.get(key)
        self.size += len(entry.data) - (0 if old is None else len(old.data))
        self[key] = entry
        if entry.expires_at is not None and entry.expires_at < self.earliest:
            self.earliest = entry.expires_at
        if index is not None:
            self.index.put(key, index)
        elif self.index.docs:
            self.index.remove(key)

    def drop(self, key: str) -> Entry | None:
        old = self.pop(key, None)
        if old is not None:
            self.size -= len(old.data)
            if self.index.docs:
                self.index.remove(key)
        return old


class MemoryStore:
    """Keeps entries in memory; expired ones read as missing and are dropped when met or purged."""

    #: Nothing outlives the process, so nothing from an older mcpkit can be here.
    legacy = False
    placed = False
    narrows = True

    def __init__(self) -> None:
        self._owners: dict[str, dict[str, _Bucket]] = {}
        self._notes: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"MemoryStore(owners={len(self._owners)})"

    async def open(self) -> None:
        """Nothing to connect to."""

    async def close(self) -> None:
        """Nothing to release; the entries stay for a later ``open()``."""

    async def settle_legacy(self) -> None:
        """Nothing to record."""

    async def notes(self) -> dict[str, str]:
        return dict(self._notes)

    async def note(self, name: str, value: str | None) -> None:
        if value is None:
            self._notes.pop(name, None)
        else:
            self._notes[name] = value

    async def get(self, owner: str, bucket: str, key: str, now: float) -> Entry | None:
        return self._live(owner, bucket, key, now)

    async def get_many(self, addresses: Sequence[Address], now: float) -> list[Entry | None]:
        return [self._live(*address, now) for address in addresses]

    get_many_created = get_many  # its get_many reads each entry's created already

    async def put(
        self,
        owner: str,
        bucket: str,
        key: str,
        data: bytes,
        expires_at: float | None,
        now: float,
        quota: Quota | None = None,
        index: Postings | None = None,
        *,
        created: float | None = None,
    ) -> None:
        self._write(owner, bucket, key, data, expires_at, created, now, quota, index)

    async def delete(self, owner: str, bucket: str, key: str, now: float) -> bool:
        return self._delete(owner, bucket, key, now)

    async def delete_many(self, addresses: Sequence[Address], now: float) -> int:
        return sum(self._delete(*address, now) for address in addresses)

    async def entries(self, owner: str, bucket: str, now: float) -> list[tuple[str, Entry]]:
        entries = self._bucket(owner, bucket)
        if entries is None:
            return []
        self._trim(owner, bucket, entries, now)
        return sorted(entries.items())

    async def delete_bucket(self, owner: str, bucket: str, now: float) -> int:
        buckets = self._owners.get(owner)
        if buckets is None:
            return 0
        entries = buckets.pop(bucket, _Bucket())
        if not buckets:
            del self._owners[owner]
        return sum(1 for entry in entries.values() if entry.live(now))

    async def delete_owner(self, owner: str) -> int:
        buckets = self._owners.pop(owner, {})
        return sum(len(entries) for entries in buckets.values())

    async def swap(
        self,
        owner: str,
        bucket: str,
        key: str,
        expected: bytes | None,
        data: bytes,
        expires_at: float | None,
        now: float,
        *,
        also: Sequence[Expectation] = (),
        quota: Quota | None = None,
        index: Postings | None = None,
        created: float | None = None,
    ) -> bool:
        buckets = self._owners.get(owner)  # as _live, inlined: every update ends here
        entries = None if buckets is None else buckets.get(bucket)
        current = None if entries is None else entries.get(key)
        if current is not None and not current.live(now):
            current = self._live(owner, bucket, key, now)  # expired: dropped
        if current is not None and current.data == data:
            return True
        if (None if current is None else current.data) != expected:
            return False
        for address, bytes_there in also:
            there = self._live(*address, now)
            if (None if there is None else there.data) != bytes_there:
                return False
        if created is None and also:  # a value moving between addresses keeps its first-write time (None: unknown)
            created = self._moved(current, also, now)
        self._write(owner, bucket, key, data, expires_at, created, now, quota, index, given=bool(also))
        for address, _ in also:
            self._delete(*address, now)
        return True

    async def swap_many(
        self, writes: Sequence[Write], now: float, *, whole: bool = False
    ) -> list[bool | QuotaExceededError]:
        if not whole:
            return await swap_each(self, writes, now)
        return self._swap_whole(writes, now)

    def _swap_whole(self, writes: Sequence[Write], now: float) -> list[bool | QuotaExceededError]:
        """``swap_many(whole=True)``: nothing awaits in here, so no other writer comes between the checks and the
        writes; a quota refusal part-way puts back the entries (and postings) written before it."""
        there = [self._live(write.owner, write.bucket, write.key, now) for write in writes]
        resent = expected = True  # one pass over both checks: a value and its history are the usual two writes
        for entry, write in zip(there, writes, strict=True):
            data = None if entry is None else entry.data
            resent = resent and data == write.data
            expected = expected and data == write.expected and (not write.also or self._holding(write.also, now))
        if resent:
            return [True] * len(writes)  # this very batch, resent
        if not expected:
            return [False] * len(writes)
        undo: list[Postings | None] = []
        for at, (owner, bucket, key, _, data, expires_at, also, quota, postings, created) in enumerate(writes):
            entries = self._bucket(owner, bucket)
            document = entries.index.docs.get(key) if entries is not None and entries.index.docs else None
            undo.append(None if document is None else document[1])
            if created is None and also:  # the live entries it replaces, as the writes before it left them
                created = self._moved(self._live(owner, bucket, key, now), also, now)
            try:
                self._write(owner, bucket, key, data, expires_at, created, now, quota, postings, given=bool(also))
            except QuotaExceededError as exc:
                for write, entry, indexed in zip(writes[:at], there, undo, strict=False):  # those written
                    if entry is None:
                        self._delete(write.owner, write.bucket, write.key, now)
                    else:
                        buckets = self._owners.setdefault(write.owner, {})
                        buckets.setdefault(write.bucket, _Bucket()).set(write.key, entry, indexed)
                failed: list[bool | QuotaExceededError] = [False] * len(writes)
                failed[at] = exc
                return failed
        for write in writes:
            for address, _ in write.also:
                self._delete(*address, now)
        return [True] * len(writes)

    def _moved(self, current: Entry | None, also: Sequence[Expectation], now: float) -> float | None:
        """The first-write time of a value moving here from the addresses in ``also`` (``first_written``)."""
        moved = [current, *(self._live(*address, now) for address, _ in also)]
        return first_written([e and (e.expires_at, e.created) for e in moved], now, None)

    def _holding(self, also: Sequence[Expectation], now: float) -> bool:
        """Whether every other address holds the bytes a compare-and-set expects there."""
        for address, expected in also:
            other = self._live(*address, now)
            if (None if other is None else other.data) != expected:
                return False
        return True

    async def search(
        self,
        owner: str,
        bucket: str,
        terms: Sequence[int],
        now: float,
        *,
        limit: int,
        stats: Stats | None = None,
        within: Sequence[Sequence[int]] = (),
    ) -> Ranking:
        entries = self._bucket(owner, bucket)
        if entries is None:
            return Ranking(Stats(0, 0, (0,) * len(terms)), [])
        self._trim(owner, bucket, entries, now, keep=True)  # the corpus holds live entries only
        if within and limit > 0:
            corpus, frequencies = entries.index.narrowed(terms, within)
        else:
            corpus = entries.index.corpus(terms)
            frequencies = tuple(len(corpus.postings.get(term, ())) for term in terms)
        self._drop_if_empty(owner, bucket)
        own = Stats(corpus.documents, corpus.length, frequencies)
        if limit <= 0:
            return Ranking(own, [])
        ranked = top(bm25(terms, corpus, stats or own), limit)
        return Ranking(own, [(str(key), score) for key, score in ranked])

    async def scan(self) -> AsyncIterator[Record]:
        for owner, buckets in list(self._owners.items()):
            for bucket, entries in list(buckets.items()):
                for key, entry in list(entries.items()):
                    yield Record(owner, bucket, key, entry, key in entries.index.docs)

    async def purge_expired(self, now: float) -> int:
        purged = 0
        for owner, buckets in list(self._owners.items()):
            for bucket, entries in list(buckets.items()):
                purged += self._trim(owner, bucket, entries, now)
        return purged

    def _write(
        self,
        owner: str,
        bucket: str,
        key: str,
        data: bytes,
        expires_at: float | None,
        created: float | None,
        now: float,
        quota: Quota | None,
        index: Postings | None = None,
        *,
        given: bool = False,
    ) -> None:
        """Keep ``data`` at the address; ``created`` None (unless ``given``: unknown): the replaced live entry's
        first-write time, else ``now``."""
        entries = self._owners.setdefault(owner, {}).get(bucket)
        if entries is None:
            entries = self._owners[owner][bucket] = _Bucket()
        if created is None and not given:
            old = entries.get(key)
            created = now if old is None or (old.expires_at is not None and old.expires_at <= now) else old.created
        entry = Entry(data, expires_at, created)
        # The one quota test on every write (counting expired entries too); only a write near a limit looks closer.
        words = 0 if index is None else index.length
        if quota is not None and (
            (quota.values is not None and len(entries) >= quota.values and key not in entries)
            or (quota.bytes is not None and _charged(entries) + charged(len(entry.data), words) > quota.bytes)
        ):
            self._check(owner, bucket, entries, key, entry, now, quota, words)
        entries.set(key, entry, index)

    def _check(
        self, owner: str, bucket: str, entries: _Bucket, key: str, entry: Entry, now: float, quota: Quota, words: int
    ) -> None:
        """Raise QuotaExceededError when writing ``entry`` at ``key`` would take the bucket past ``quota``."""
        for attempt in range(2):  # on the first refusal, drop the bucket's expired entries and look again
            old = entries.get(key)
            count = len(entries) + (old is None)
            document = entries.index.docs.get(key)
            old_words = 0 if document is None else document[1].length
            before = _charged(entries)
            size = before + charged(len(entry.data), words) - charged(0 if old is None else len(old.data), old_words)
            problem: QuotaExceededError | None = None
            if quota.values is not None and count > quota.values and not (old is not None and old.live(now)):
                problem = QuotaExceededError("values", quota.values)
            elif quota.bytes is not None and size > quota.bytes and size > before:
                problem = QuotaExceededError("bytes", quota.bytes)
            if problem is None:
                return
            if attempt == 0 and self._trim(owner, bucket, entries, now, keep=True):
                continue
            raise problem

    def _delete(self, owner: str, bucket: str, key: str, now: float) -> bool:
        entries = self._bucket(owner, bucket)
        if entries is None:
            return False
        entry = entries.drop(key)
        self._drop_if_empty(owner, bucket)
        return entry is not None and entry.live(now)

    def _trim(self, owner: str, bucket: str, entries: _Bucket, now: float, *, keep: bool = False) -> int:
        """Drop the bucket's expired entries; returns how many went (``keep``: leave an emptied bucket)."""
        if now < entries.earliest:  # none can have expired: nothing to look at
            return 0
        expired = [key for key, entry in entries.items() if not entry.live(now)]
        for key in expired:
            entries.drop(key)
        entries.earliest = min(
            (entry.expires_at for entry in entries.values() if entry.expires_at is not None), default=math.inf
        )
        if not keep:
            self._drop_if_empty(owner, bucket)
        return len(expired)

    def _bucket(self, owner: str, bucket: str) -> _Bucket | None:
        buckets = self._owners.get(owner)
        return None if buckets is None else buckets.get(bucket)

    def _live(self, owner: str, bucket: str, key: str, now: float) -> Entry | None:
        """The live entry at this address; an expired one found here is removed."""
        entries = self._bucket(owner, bucket)
        if entries is None:
            return None
        entry = entries.get(key)
        if entry is None or entry.live(now):
            return entry
        entries.drop(key)
        self._drop_if_empty(owner, bucket)
        return None

    def _drop_if_empty(self, owner: str, bucket: str) -> None:
        """Forget an emptied bucket (and owner) so departed owners cost nothing."""
        buckets = self._owners.get(owner)
        if buckets is None or buckets.get(bucket) != {}:
            return
        del buckets[bucket]
        if not buckets:
            del self._owners[owner]


def _charged(entries: _Bucket) -> int:
    """What a bucket counts against ``Quota.bytes``: its values' bytes and its indexed words."""
    return charged(entries.size, entries.index.length)
