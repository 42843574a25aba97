"""``Admitted``: the keys of a bucket whose facets (``index.facet_words``) a search's ``Kept`` may keep, listed by
the store without opening a value; only those are opened, and checked against the exact sealed time and source."""

from __future__ import annotations

import math
import weakref
from collections import OrderedDict
from typing import NamedTuple

from ..index import source_words, top_words, window_words
from ..stores import Store, narrowing
from ..vault import Vault
from ._kept import Kept

__all__ = ["FACETED_BUCKETS", "LISTED_PER_OPENED", "Admitted", "admitted", "within"]

#: About how many keys a store lists in the time one value is opened (its sealed bytes fetched, decrypted, parsed):
#: the rough ratio ``admitted`` weighs listing a filter's keys against opening the best values by words instead.
LISTED_PER_OPENED = 50


class Admitted(NamedTuple):
    """The keys (store names) of the values a filter may keep: every one it keeps, and perhaps some it does not
    (their event day meets the window, not their exact time); ``documents``: the bucket's searchable values."""

    keys: frozenset[str]
    documents: int


class _Faceted:
    """The buckets of one store whose every value has facets (learned once each, by a count over the whole bucket;
    from then on this server writes every value with them); the most recently checked ``FACETED_BUCKETS``."""

    def __init__(self) -> None:
        self.buckets: OrderedDict[tuple[str, str], None] = OrderedDict()

    def __contains__(self, place: object) -> bool:
        return place in self.buckets

    def add(self, place: tuple[str, str]) -> None:
        self.buckets[place] = None
        self.buckets.move_to_end(place)
        if len(self.buckets) > FACETED_BUCKETS:
            self.buckets.popitem(last=False)


#: Buckets remembered to have facets throughout, per store.
FACETED_BUCKETS = 65_536

_faceted: weakref.WeakKeyDictionary[Store, _Faceted] = weakref.WeakKeyDictionary()


async def admitted(
    vault: Vault,
    owner: str,
    bucket: str,
    kept: Kept,
    now: float,
    *,
    wanted: int | None = None,
    per_opened: int = LISTED_PER_OPENED,
) -> Admitted | None:
    """The keys of the bucket ``kept`` may keep, by their facets: one store call for their counts, one to list each
    facet's holders (the window's, the sources'); each in proportion to the values held, not to the bucket.

    None when the facets cannot say, and the values must be opened to be filtered: some value has none (written
    before mcpkit kept them: ``mcpkit remember reindex`` gives them; checked once per bucket), or the window needs
    too many words. With ``wanted`` (the values a search by words returns), also None when listing the keys would
    cost more than opening the best values by words until ``wanted`` pass (``per_opened`` keys listed costing about
    one value opened)."""
    groups = _groups(kept)
    if not groups:
        return None
    faceted = _faceted_of(vault.store)
    tops = [] if (owner, bucket) in faceted else top_words()
    words = tops + [word for group in groups for word in group]
    terms = vault.index.terms(0, owner, bucket, words)
    counted = (await vault.store.search(owner, bucket, terms, now, limit=0)).stats
    held = dict(zip(terms, counted.frequencies, strict=True))
    documents = counted.documents
    if tops:
        if sum(held[term] for term in terms[: len(tops)]) < documents:
            return None
        faceted.add((owner, bucket))
    grouped: list[tuple[int, list[int]]] = []
    at = len(tops)
    for group in groups:
        group_terms = list(dict.fromkeys(terms[at : at + len(group)]))
        at += len(group)
        grouped.append((sum(held[term] for term in group_terms), group_terms))
    grouped.sort(key=lambda counted_terms: counted_terms[0])
    # Listing k keys against opening about wanted * documents / k of the best by words: list while k is under
    # sqrt(per_opened * wanted * documents).
    most = math.inf if wanted is None else math.sqrt(per_opened * wanted * documents)
    if grouped[0][0] > most:
        return None
    keys: frozenset[str] | None = None
    for holding, group_terms in grouped:
        if holding > most and keys is not None:
            break  # the fewer ones listed already: the opened values are checked exactly anyway
        # A little over the count: a value written since it was taken is listed too.
        ranking = await vault.store.search(owner, bucket, group_terms, now, limit=holding + 64)
        listed = frozenset(key for key, _ in ranking.hits)
        keys = listed if keys is None else keys & listed
        if not keys:
            break
    assert keys is not None
    return Admitted(keys, documents)


def _faceted_of(store: Store) -> _Faceted:
    """The buckets of ``store`` known to have facets throughout."""
    faceted = _faceted.get(store)
    if faceted is None:
        faceted = _faceted[store] = _Faceted()
    return faceted


def _groups(kept: Kept) -> list[list[str]] | None:
    """The facet words of ``kept``: one group for its window, one for its sources (a value it keeps holds one word
    of each); None when the window needs too many words."""
    groups: list[list[str]] = []
    if kept.since is not None or kept.until is not None:
        window = window_words(kept.since, kept.until)
        if window is None:
            return None
        groups.append(window)
    if kept.sources is not None:
        groups.append(source_words(kept.sources))
    return groups


async def within(vault: Vault, owner: str, bucket: str, kept: Kept, now: float) -> list[list[int]] | None:
    """``kept``'s facet terms as ``Store.search``'s ``within``, so a ranking holds only the values whose facets it
    may keep; None when the store cannot narrow a ranking, or the facets cannot say (as for ``admitted``)."""
    groups = _groups(kept) if narrowing(vault.store) is not None else None
    if not groups:
        return None
    faceted = _faceted_of(vault.store)
    if (owner, bucket) not in faceted:
        tops = vault.index.terms(0, owner, bucket, top_words())
        counted = (await vault.store.search(owner, bucket, tops, now, limit=0)).stats
        if sum(counted.frequencies) < counted.documents:
            return None
        faceted.add((owner, bucket))
    return [list(dict.fromkeys(vault.index.terms(0, owner, bucket, group))) for group in groups]
