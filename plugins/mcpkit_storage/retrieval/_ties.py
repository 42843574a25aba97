"""Ties at a ranking's cut: a store breaks equal scores by key, the final order by recency (newest first), so a cut
through a tie is widened until the tie is whole, and the final order chooses among the tied."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from ..stores import Ranking, narrowing
from ..vault import Vault
from ._typos import with_typos

__all__ = ["FIRST_EXTRA", "GROWTH", "MAX_TIED", "bucket_ranking", "through_ties"]

#: Hits past the cut kept for one tie, at most (each is opened to learn its age): a larger tie is cut by key.
MAX_TIED = 100
#: Hits past the cut asked for at first: at 10,000 values, 6 in 10 of the bench's queries tie at the cut of 10, by
#: 2 values past it on average and 14 at most, so one call usually sees the whole tie.
FIRST_EXTRA = 16
#: How many times more hits past the cut are asked for while the last one still ties.
GROWTH = 8

_K = TypeVar("_K")


async def through_ties(rank: Callable[[int], Awaitable[list[tuple[_K, float]]]], want: int) -> list[tuple[_K, float]]:
    """``rank(n)``'s best ``want`` hits (``rank``: its ``n`` best, best first), and the hits after them whose score
    equals the last one's (``MAX_TIED`` at most).

    ``rank`` is asked for ``FIRST_EXTRA`` hits more than ``want``, which a tie seldom outgrows (a few rows more, no
    call more); while the last hit it gives still ties, it is asked again for ``GROWTH`` times as many past the cut.
    """
    if want <= 0:
        return await rank(want)
    extra = FIRST_EXTRA
    while True:
        hits = await rank(want + extra)
        if len(hits) <= want:
            return hits
        edge = hits[want - 1][1]
        if len(hits) < want + extra or hits[-1][1] != edge or extra == MAX_TIED:
            return hits[:want] + [hit for hit in hits[want:] if hit[1] == edge]
        extra = min(MAX_TIED, GROWTH * extra)


async def bucket_ranking(
    vault: Vault,
    owner: str,
    bucket: str,
    terms: Sequence[int],
    words: Sequence[str],
    now: float,
    want: int,
    *,
    ties: bool = True,
    within: Sequence[Sequence[int]] = (),
) -> Ranking:
    """The bucket's statistics for ``terms`` (the blind terms of ``words``) and its best ``want`` keys, near
    spellings included (``with_typos``), with every key tied with the last one (``through_ties``; ``ties=False``:
    cut in the store's order). ``within``: only the values holding a term of each group, where the store narrows
    (``NarrowingStore``; ``within`` is given only to such a store)."""
    counted: list[Ranking] = []
    narrowed = narrowing(vault.store) if within else None

    async def best(asked: int) -> list[tuple[str, float]]:
        if narrowed is not None:
            counted.append(await narrowed.search(owner, bucket, terms, now, limit=asked, within=within))
        else:
            counted.append(await vault.store.search(owner, bucket, terms, now, limit=asked))
        return await with_typos(vault, owner, bucket, words, counted[-1], now, asked, within) if asked > 0 else []

    hits = await through_ties(best, want) if ties else await best(want)
    return Ranking(counted[-1].stats, hits)
