"""The small async interface every remember store implements."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Literal, NamedTuple, Protocol, cast

from mcpkit_search import Stats

__all__ = [
    "Address",
    "Entry",
    "Expectation",
    "NarrowingStore",
    "NotWholeError",
    "Postings",
    "Quota",
    "QuotaExceededError",
    "Ranking",
    "Record",
    "Stats",
    "Store",
    "StoreUnavailableError",
    "Write",
    "first_written",
    "narrowing",
    "swap_each",
]


class Address(NamedTuple):
    """Where one entry lives: the owner, the bucket inside the owner, the key inside the bucket."""

    owner: str
    bucket: str
    key: str


class Entry(NamedTuple):
    """A stored value: its opaque bytes, its deadline (None: kept until forgotten) and when its key was first written
    (``created``, plaintext like the deadline; None: unknown, written before stores kept it).

    Every write keeps the ``created`` of the live entry it replaces (of the earliest live copy a swap's ``also``
    moves) and sets ``now`` when there was none, unless the write gives one (a value moved or imported).
    """

    data: bytes
    expires_at: float | None
    created: float | None = None

    def live(self, now: float) -> bool:
        """Whether the entry is still readable at ``now``."""
        return self.expires_at is None or self.expires_at > now


class Record(NamedTuple):
    """One entry with its full address, as ``scan()`` yields it, and whether it has search postings."""

    owner: str
    bucket: str
    key: str
    entry: Entry
    indexed: bool = False


#: An address and the bytes a compare-and-set expects there (None: no live entry).
Expectation = tuple[Address, bytes | None]


class Postings(NamedTuple):
    """What the search index keeps for one entry: its blind terms (keyed hashes) with their counts, and its length.

    Terms are 63-bit integers, keyed by the secret, the owner and the bucket, so the same word in two buckets
    (or under two secrets) is two unrelated terms, and an index never holds a word. ``terms`` maps each to its
    count (a store may keep the mapping itself: it is never changed after it is made).
    """

    terms: Mapping[int, int]
    length: int


class Ranking(NamedTuple):
    """A store's answer to a search: the bucket's own statistics for the terms, and its best keys with scores.

    ``hits`` is best first (ties by key), BM25 scores computed with the statistics the search was given,
    else with ``stats``.
    """

    stats: Stats
    hits: list[tuple[str, float]]


#: What one indexed word of a searchable value counts against ``Quota.bytes``, beside the value's own bytes: its
#: postings cost the store about that much or more (a value of 60,000 characters of distinct short words cost
#: Redis 2 MB of index, 35 times its own size, when only its bytes counted).
INDEX_BYTES_PER_WORD = 32


def charged(data: int, words: int) -> int:
    """What a value of ``data`` bytes with ``words`` indexed words counts against ``Quota.bytes``."""
    return data + INDEX_BYTES_PER_WORD * words


class Quota(NamedTuple):
    """How much one owner may keep in one bucket: live values and their bytes (None: no limit).

    ``bytes`` counts each value's stored bytes and, for a searchable value, ``INDEX_BYTES_PER_WORD`` for each word
    of it the search index holds (``Postings.length``).
    """

    values: int | None
    bytes: int | None


class QuotaExceededError(Exception):
    """A write would take its bucket past ``Quota.values`` or ``Quota.bytes``; nothing was written."""

    def __init__(self, limit: Literal["values", "bytes"], allowed: int) -> None:
        super().__init__(f"the bucket would exceed its quota of {allowed} {limit}")
        self.limit: Literal["values", "bytes"] = limit
        self.allowed = allowed


class StoreUnavailableError(Exception):
    """The store could not be reached (e.g. Redis is down); the call may be retried later.

    ``maybe_applied``: a write was sent but no answer came in time, so the store may still apply it.
    """

    def __init__(self, message: str, *, maybe_applied: bool = False) -> None:
        super().__init__(message)
        self.maybe_applied = maybe_applied


class NotWholeError(Exception):
    """Raised inside a store's transaction to roll back ``swap_many(whole=True)`` at the write that failed
    (``answers``: that write's and those before it); ``results`` is what ``swap_many`` then answers."""

    def __init__(self, answers: list[bool | QuotaExceededError], count: int) -> None:
        super().__init__(f"write {len(answers)} of {count} was not made: none is")
        self.results: list[bool | QuotaExceededError] = [False] * count
        self.results[len(answers) - 1] = answers[-1]


class Write(NamedTuple):
    """One compare-and-set of ``Store.swap_many``: ``swap``'s arguments, with its ``quota``, its ``postings``
    (``swap``'s ``index``) and its ``created``."""

    owner: str
    bucket: str
    key: str
    expected: bytes | None
    data: bytes
    expires_at: float | None
    also: Sequence[Expectation] = ()
    quota: Quota | None = None
    postings: Postings | None = None
    created: float | None = None


def first_written(
    entries: Sequence[tuple[float | None, float | None] | None], now: float, created: float | None
) -> float | None:
    """The ``created`` a write leaves: ``created`` when given, else that of the live (deadline, created) pairs it
    replaces (the earliest; None when one of them is unknown), else ``now`` (a new key)."""
    if created is not None:
        return created
    kept = [entry[1] for entry in entries if entry is not None and (entry[0] is None or entry[0] > now)]
    if not kept:
        return now
    return None if None in kept else min(value for value in kept if value is not None)


class Store(Protocol):
    """Where remembered values live. Every method that reads skips entries past their deadline.

    ``legacy`` is set by ``open()``: True when the store may still hold entries in mcpkit 0.1's
    layout (plain bucket and key names), which reads must then look for too. ``placed``: see ``StoreKind.placed``.
    """

    legacy: bool
    #: Whether it keeps each owner's values in one place (a hash slot), so owners come from a placed keyring.
    placed: bool

    async def open(self) -> None:
        """Connect or create what the store needs; called once at server start."""

    async def close(self) -> None:
        """Release connections and files; called once at server stop."""

    async def get(self, owner: str, bucket: str, key: str, now: float) -> Entry | None:
        """The live entry at this address, or None."""

    async def get_many(self, addresses: Sequence[Address], now: float) -> list[Entry | None]:
        """The live entry at each address (None where there is none), in one round trip where the store can."""

    async def get_many_created(self, addresses: Sequence[Address], now: float) -> list[Entry | None]:
        """As ``get_many``, each entry with its ``created`` (``self.remember.info``'s read): a store whose
        ``get_many`` leaves it out to stay one command (Redis) reads it here, in the same round trip."""

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
        """Store ``data`` at this address, replacing whatever was there; ``created`` as ``Entry`` says (None: the
        replaced live entry's, else ``now``).

        With a ``quota``, raise ``QuotaExceededError`` (changing nothing) when the bucket would then hold
        more live values or bytes than it allows; replacing a value counts only the difference. The entry's
        search postings become ``index`` (None: the entry is not searchable), in the same atomic step; every
        deletion of an entry, by any method or by its deadline, takes its postings with it.
        """

    async def delete(self, owner: str, bucket: str, key: str, now: float) -> bool:
        """Remove the entry; True when a live entry was there."""

    async def delete_many(self, addresses: Sequence[Address], now: float) -> int:
        """Remove the entries at these addresses; returns how many live ones went."""

    async def entries(self, owner: str, bucket: str, now: float) -> list[tuple[str, Entry]]:
        """Every live (key, entry) in this owner's bucket, sorted by key; cost proportional to that bucket."""

    async def delete_bucket(self, owner: str, bucket: str, now: float) -> int:
        """Remove every entry in this owner's bucket; returns how many live ones went."""

    async def delete_owner(self, owner: str) -> int:
        """Remove every entry of this owner in every bucket; returns how many went."""

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
        """Atomically store ``data`` if the live entry's bytes equal ``expected``; ``created`` as in ``put``.

        ``expected=None`` means "no live entry". Every address in ``also`` must hold its
        expected bytes too, and the swap then deletes the entries there in the same step
        (a value moving between addresses, as in a rotation of the secret). Returns False,
        changing nothing, when another writer got there first. Every write's ``data`` is new
        bytes (the vault seals each value with a fresh nonce), so a swap whose ``data`` is
        already there, or was applied moments ago, is this same swap resent (a client retrying
        after a dropped connection): it returns True and changes nothing. ``quota`` and ``index`` as in ``put``.
        """

    async def swap_many(
        self, writes: Sequence[Write], now: float, *, whole: bool = False
    ) -> list[bool | QuotaExceededError]:
        """Each write as ``swap`` makes it, in order (a later one sees the earlier ones), in one transaction or
        round trip where the store can: True where it was written, False where another writer came first, the
        ``QuotaExceededError`` where its bucket's quota refused it, each of these changing nothing of that write.
        ``StoreUnavailableError`` when the store failed: each write was then made whole or not at all.

        ``whole=True``: all the writes or none, atomically on every store (a value and its change history): the
        quotas are checked for all of them, each seeing the ones before it, before anything is written. Either
        every answer is True, or nothing was written and the first write that failed has its reason (False or the
        ``QuotaExceededError``), every other one False.
        """

    async def search(
        self, owner: str, bucket: str, terms: Sequence[int], now: float, *, limit: int, stats: Stats | None = None
    ) -> Ranking:
        """This owner's bucket ranked by BM25 (``mcpkit_search.weight``) for distinct ``terms``, live entries only.

        Returns the bucket's statistics for the terms (live searchable entries, their total length, how many
        hold each term) and its ``limit`` best keys (``limit=0``: statistics only), scored with ``stats`` when
        given (those of all the buckets a place's values live in, during a rotation), else with its own.
        Cost in proportion to the bucket's postings for these terms (and its expired entries), never to the
        whole store.
        """

    def scan(self) -> AsyncIterator[Record]:
        """Every entry, live or not, a page at a time (operator commands: rotation, audits)."""

    async def purge_expired(self, now: float) -> int:
        """Delete entries past their deadline; returns how many went."""

    async def settle_legacy(self) -> None:
        """Record that no entry in mcpkit 0.1's layout is left, so ``legacy`` is False from now on."""

    async def notes(self) -> dict[str, str]:
        """Every note about the whole store (``note``), by name, in one round trip: a few short texts."""

    async def note(self, name: str, value: str | None) -> None:
        """Keep ``value`` as the store's note ``name``, replacing the one before (None: remove it). Notes say what
        the instances of a store must agree on: which secret values were rotated to, which ones each holds."""


class NarrowingStore(Store, Protocol):
    """A store whose ranking can be narrowed to the entries holding some terms, and says so with ``narrows``
    (``narrowing`` tells), as every built-in store does; one without it ranks every holder of the terms, and a
    caller filters."""

    narrows: bool

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
        """``Store.search``; with ``within`` (groups of terms), only the entries holding at least one term of
        every group are ranked, the statistics and each score staying the whole bucket's (a hit scores as it
        does without ``within``), at a cost no more than that of the ranking without it plus listing the groups'
        holders (the first group is a time window's, when there is one: the built-in stores look at its holders'
        count to choose the cheaper way)."""


def narrowing(store: Store) -> NarrowingStore | None:
    """``store`` when its ranking can be narrowed (``NarrowingStore``), else None."""
    return cast(NarrowingStore, store) if getattr(store, "narrows", False) else None


async def swap_each(store: Store, writes: Sequence[Write], now: float) -> list[bool | QuotaExceededError]:
    """``Store.swap_many`` made of one ``swap`` per write, for a store with no cheaper way (a round trip each)."""
    results: list[bool | QuotaExceededError] = []
    for owner, bucket, key, expected, data, expires_at, also, quota, postings, created in writes:
        try:
            results.append(
                await store.swap(
                    owner,
                    bucket,
                    key,
                    expected,
                    data,
                    expires_at,
                    now,
                    also=also,
                    quota=quota,
                    index=postings,
                    created=created,
                )
            )
        except QuotaExceededError as exc:
            results.append(exc)
    return results
